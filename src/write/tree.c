/* Tree allocation and xattr interning. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "write/compress.h"
#include "write/tree.h"

struct binode *btree_new_inode(struct btree *t)
{
	struct binode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (t->last)
		t->last->next = n;
	else
		t->first = n;
	t->last = n;
	t->ninodes++;
	return n;
}

static void free_inode(struct binode *n)
{
	uint32_t i;

	for (i = 0; i < n->nchildren; i++)
		free(n->children[i].name);
	free(n->children);
	free(n->src_path);
	free(n->symlink);
	free(n->xattrs);
	free(n->inline_data);
	if (n->chunks)
		free(n->chunks->blocks);
	free(n->chunks);
	bcompressed_free(n->z);
	free(n);
}

void btree_free(struct btree *t)
{
	struct binode *n = t->first;
	size_t i;

	while (n) {
		struct binode *next = n->next;

		free_inode(n);
		n = next;
	}
	for (i = 0; i < t->nxbuckets; i++) {
		struct bxattr *x = t->xbuckets[i];

		while (x) {
			struct bxattr *next = x->next;

			free(x->suffix);
			free(x->value);
			free(x->full_name);
			free(x);
			x = next;
		}
	}
	free(t->xbuckets);
	memset(t, 0, sizeof(*t));
}

static int grow_buckets(struct btree *t)
{
	size_t n = t->nxbuckets ? t->nxbuckets * 2 : 256, i;
	struct bxattr **b = calloc(n, sizeof(*b));

	if (!b)
		return -1;
	for (i = 0; i < t->nxbuckets; i++) {
		struct bxattr *x = t->xbuckets[i];

		while (x) {
			struct bxattr *next = x->next;

			x->next = b[x->hash & (n - 1)];
			b[x->hash & (n - 1)] = x;
			x = next;
		}
	}
	free(t->xbuckets);
	t->xbuckets = b;
	t->nxbuckets = n;
	return 0;
}

struct bxattr *btree_intern_xattr(struct btree *t, uint8_t index,
				  const char *full_name, size_t prefix_len,
				  const void *value, size_t value_len)
{
	size_t name_len = strlen(full_name);
	uint32_t h = XXH32(value, value_len, XXH32(full_name, name_len, 0));
	struct bxattr *x;

	if (t->nxattrs >= t->nxbuckets && grow_buckets(t))
		return NULL;
	for (x = t->xbuckets[h & (t->nxbuckets - 1)]; x; x = x->next)
		if (x->hash == h && x->value_len == value_len &&
		    !strcmp(x->full_name, full_name) &&
		    !memcmp(x->value, value, value_len)) {
			x->users++;
			return x;
		}
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->index = index;
	x->suffix_len = (uint8_t)(name_len - prefix_len);
	x->value_len = (uint16_t)value_len;
	x->full_name = strdup(full_name);
	x->suffix = malloc(x->suffix_len + 1u);
	x->value = malloc(value_len + 1);
	if (!x->full_name || !x->suffix || !x->value) {
		free(x->full_name);
		free(x->suffix);
		free(x->value);
		free(x);
		return NULL;
	}
	memcpy(x->suffix, full_name + prefix_len, x->suffix_len);
	if (value_len)
		memcpy(x->value, value, value_len);
	x->users = 1;
	x->shared_id = -1;
	x->hash = h;
	x->next = t->xbuckets[h & (t->nxbuckets - 1)];
	t->xbuckets[h & (t->nxbuckets - 1)] = x;
	t->nxattrs++;
	return x;
}

void btree_for_each_xattr(struct btree *t,
			  void (*fn)(struct bxattr *x, void *ctx), void *ctx)
{
	size_t i;
	struct bxattr *x;

	for (i = 0; i < t->nxbuckets; i++)
		for (x = t->xbuckets[i]; x; x = x->next)
			fn(x, ctx);
}
