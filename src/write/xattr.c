/*
 * Xattr planning: an xattr (name and value) carried by two inodes or more
 * (--xattr-share's count) is stored once in the shared area and
 * referenced by id; the others are stored inline after each inode.  Every
 * body gets the bloom filter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "write/internal.h"
#include "format/ondisk.h"
#include "format/xattr.h"
#include "util/error.h"
#include "util/warn.h"

#define SHARE_DEFAULT 2u

struct collect {
	struct txattr **items;
	size_t n;
	uint32_t share;             /* users from which an xattr is shared */
};

static void collect_shared(struct txattr *x, void *ctx)
{
	struct collect *c = ctx;

	if (x->users >= c->share)
		c->items[c->n++] = x;
}

static void count_shared(struct txattr *x, void *ctx)
{
	struct collect *c = ctx;

	if (x->users >= c->share)
		c->n++;
}

static int cmp_shared(const void *a, const void *b)
{
	const struct txattr *x = *(struct txattr *const *)a;
	const struct txattr *y = *(struct txattr *const *)b;
	int c = strcmp(x->full_name, y->full_name);
	size_t n;

	if (c)
		return c;
	n = x->value_len < y->value_len ? x->value_len : y->value_len;
	c = memcmp(x->value, y->value, n);
	if (c)
		return c;
	return (int)x->value_len - (int)y->value_len;
}

static uint32_t filter_of(const struct tnode *n)
{
	uint32_t mask = 0;
	uint32_t i;

	for (i = 0; i < n->nxattrs; i++) {
		const struct txattr *x = n->xattrs[i];

		mask |= 1u << fmt_xattr_filter_bit(x->suffix, x->suffix_len, x->index);
	}
	return ~mask;
}

/* The bytes of x's entry, its name under its long prefix if any. */
static size_t stored_size(const struct txattr *x)
{
	return fmt_xattr_entry_size(x->suffix_len - x->stored_skip, x->value_len);
}

static size_t encode_entry(uint8_t *out, const struct txattr *x)
{
	return fmt_xattr_entry_encode(out, x->stored_index, x->suffix + x->stored_skip,
				      x->suffix_len - x->stored_skip, x->value, x->value_len);
}

/* Whether the i-th xattr of n is referenced from the shared area. */
static bool stored_shared(const struct tnode *n, uint32_t i)
{
	uint32_t j, before = 0;

	if (n->xattrs[i]->shared_id < 0)
		return false;
	for (j = 0; j < i; j++)
		if (n->xattrs[j]->shared_id >= 0)
			before++;
	return before < EROFS_MAX_SHARED_XATTRS;
}

int plan_xattrs(struct build *b)
{
	struct collect c = { 0 };
	size_t i;
	uint64_t off = 0;
	struct tnode *n;

	c.share = b->o.xattr_share ? b->o.xattr_share : SHARE_DEFAULT;
	if (!b->no_shared_xattrs)
		tree_for_each_xattr(&b->tree, count_shared, &c);
	if (c.n) {
		c.items = malloc(c.n * sizeof(*c.items));
		if (!c.items)
			return err_fail(b->err, -ENOMEM, "out of memory");
		c.n = 0;
		tree_for_each_xattr(&b->tree, collect_shared, &c);
		qsort(c.items, c.n, sizeof(*c.items), cmp_shared);
		for (i = 0; i < c.n; i++) {
			c.items[i]->shared_id = (int64_t)(off / 4);
			off += stored_size(c.items[i]);
		}
		free(c.items);
	}
	b->shared_xattr_size = off;

	for (n = b->tree.first; n; n = n->next) {
		int ret = plan_node_xattrs(b, n);

		if (ret)
			return ret;
	}
	return 0;
}

int plan_node_xattrs(struct build *b, struct tnode *n)
{
	uint64_t size = EROFS_XATTR_HEADER_SIZE;
	uint32_t k;

	n->xattr_size = 0;
	n->xattr_icount = 0;
	if (!n->nxattrs && !(n == b->tree.root && b->o.root_xattr_isize))
		return 0;
	for (k = 0; k < n->nxattrs; k++) {
		const struct txattr *x = n->xattrs[k];

		if (stored_shared(n, k))
			size += 4;
		else
			size += stored_size(x);
	}
	/* --root-xattr-isize: zeros after its xattrs, entries readers skip. */
	if (n == b->tree.root && size < b->o.root_xattr_isize)
		size = round_up_u64(b->o.root_xattr_isize, 4);
	if ((size - EROFS_XATTR_HEADER_SIZE) / 4 + 1 > 0xFFFF)
		return err_fail(b->err, -E2BIG,
			       "%s: xattrs need %llu bytes, more than an inode can hold",
			       n->src_path ? n->src_path : "(directory)",
			       (unsigned long long)size);
	n->xattr_size = (uint32_t)size;
	n->xattr_icount = (uint16_t)((size - EROFS_XATTR_HEADER_SIZE) / 4 + 1);
	if (!b->o.no_xattr_filter)
		b->feature_compat |= EROFS_COMPAT_XATTR_FILTER;
	return 0;
}

int xattr_attach(struct build *b, struct tnode *n, const char *name,
		 const void *value, size_t len, const char *what_path)
{
	size_t prefix_len, name_len = strlen(name);
	struct txattr **grown, *x;
	uint8_t index;
	uint32_t k;

	if (!fmt_xattr_split(name, name_len, &index, &prefix_len)) {
		warn_user("%s: xattr %s has no EROFS prefix, skipped", what_path, name);
		return 0;
	}
	if (name_len - prefix_len > EROFS_NAME_MAX)
		return err_fail(b->err, -ENAMETOOLONG, "%s: xattr name %s is too long",
			       what_path, name);
	if (len > 65535)
		return err_fail(b->err, -E2BIG, "%s: xattr %s value of %zu bytes exceeds 65535",
			       what_path, name, len);
	x = tree_intern_xattr(&b->tree, index, name, prefix_len, value, len);
	if (!x)
		return err_fail(b->err, -ENOMEM, "out of memory");
	prefixes_apply(b, x);
	/* A name given twice (an archive may carry it in two spellings):
	 * the last value holds, as setting it twice would leave it. */
	for (k = 0; k < n->nxattrs; k++) {
		if (!strcmp(n->xattrs[k]->full_name, x->full_name)) {
			n->xattrs[k] = x;
			return 0;
		}
	}
	grown = realloc(n->xattrs, (n->nxattrs + 1) * sizeof(*grown));
	if (!grown)
		return err_fail(b->err, -ENOMEM, "out of memory");
	n->xattrs = grown;
	n->xattrs[n->nxattrs++] = x;
	return 0;
}

static int cmp_xattr_ptr(const void *a, const void *b)
{
	const struct txattr *x = *(struct txattr *const *)a;
	const struct txattr *y = *(struct txattr *const *)b;

	return strcmp(x->full_name, y->full_name);
}

void xattr_sort(struct tnode *n)
{
	if (n->nxattrs)
		qsort(n->xattrs, n->nxattrs, sizeof(*n->xattrs), cmp_xattr_ptr);
}

void encode_xattr_body(struct build *b, const struct tnode *n, uint8_t *out)
{
	uint32_t nshared = 0, k;
	uint8_t *p;

	for (k = 0; k < n->nxattrs; k++)
		if (stored_shared(n, k))
			nshared++;
	fmt_xattr_body_encode(out, b->o.no_xattr_filter ? 0 : filter_of(n),
			      (uint8_t)nshared);
	p = out + EROFS_XATTR_HEADER_SIZE;
	for (k = 0; k < n->nxattrs; k++) {
		if (stored_shared(n, k)) {
			put_le32(p, (uint32_t)n->xattrs[k]->shared_id);
			p += 4;
		}
	}
	for (k = 0; k < n->nxattrs; k++) {
		const struct txattr *x = n->xattrs[k];

		if (!stored_shared(n, k))
			p += encode_entry(p, x);
	}
}

static void encode_one_shared(struct txattr *x, void *ctx)
{
	uint8_t *out = ctx;

	if (x->shared_id >= 0)
		encode_entry(out + (uint64_t)x->shared_id * 4, x);
}

void encode_shared_xattrs(struct build *b, uint8_t *out)
{
	tree_for_each_xattr(&b->tree, encode_one_shared, out);
}
