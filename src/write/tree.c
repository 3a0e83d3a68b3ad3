/* Tree allocation and xattr interning. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "write/tree.h"

struct tnode *tree_new_inode(struct tree *t)
{
	struct tnode *n = calloc(1, sizeof(*n));

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

static void free_inode(struct tnode *n)
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
	if (n->z)
		free(n->z->index);
	free(n->z);
	free(n);
}

void tree_drop_unlinked(struct tree *t, const struct tnode *keep)
{
	struct tnode **link = &t->first, *n;

	t->last = NULL;
	while ((n = *link)) {
		if (!n->nlink && n != t->root && n != keep) {
			*link = n->next;
			free_inode(n);
			t->ninodes--;
			continue;
		}
		t->last = n;
		link = &n->next;
	}
}

void tree_move_last(struct tree *t, struct tnode *n)
{
	struct tnode **link = &t->first;

	while (*link && *link != n)
		link = &(*link)->next;
	if (!*link || !n->next)
		return;     /* not on the list, or last already */
	*link = n->next;
	n->next = NULL;
	t->last->next = n;
	t->last = n;
}

void tree_free(struct tree *t)
{
	struct tnode *n = t->first;
	size_t i;

	while (n) {
		struct tnode *next = n->next;

		free_inode(n);
		n = next;
	}
	for (i = 0; i < t->nxbuckets; i++) {
		struct txattr *x = t->xbuckets[i];

		while (x) {
			struct txattr *next = x->next;

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

static int grow_buckets(struct tree *t)
{
	size_t n = t->nxbuckets ? t->nxbuckets * 2 : 256, i;
	struct txattr **b = calloc(n, sizeof(*b));

	if (!b)
		return -1;
	for (i = 0; i < t->nxbuckets; i++) {
		struct txattr *x = t->xbuckets[i];

		while (x) {
			struct txattr *next = x->next;

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

struct txattr *tree_intern_xattr(struct tree *t, uint8_t index,
				  const char *full_name, size_t prefix_len,
				  const void *value, size_t value_len)
{
	size_t name_len = strlen(full_name);
	uint32_t h = XXH32(value, value_len, XXH32(full_name, name_len, 0));
	struct txattr *x;

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

void tree_for_each_xattr(struct tree *t,
			  void (*fn)(struct txattr *x, void *ctx), void *ctx)
{
	size_t i;
	struct txattr *x;

	for (i = 0; i < t->nxbuckets; i++)
		for (x = t->xbuckets[i]; x; x = x->next)
			fn(x, ctx);
}

static int cmp_dentry(const void *a, const void *b)
{
	const struct tdentry *x = a, *y = b;

	return strcmp(x->name, y->name);
}

void tree_sort_children(struct tnode *dir)
{
	if (dir->nchildren > 1)
		qsort(dir->children, dir->nchildren, sizeof(*dir->children), cmp_dentry);
}
