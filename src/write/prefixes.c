/*
 * Long xattr name prefixes (mkfs.erofs --xattr-prefix; spec 5.5): a
 * prefix such as "trusted.overlay." is stored once, in a table, and an
 * xattr whose name starts with it keeps only what follows (entry index
 * 0x80 | its number): the overlay xattrs of a container layer, or of a
 * composefs image on every file, shrink by the infix each.
 *
 * Where the table lies: at the start of the packed inode's data when the
 * image has one (fragments), where every kernel since 6.4 looks for it
 * then; otherwise after the superblock, with compat PLAIN_XATTR_PFX, as
 * mkfs.erofs 1.9.3 writes it.  With a metabox a kernel without the bit
 * would look inside the metabox: the bit sends it after the superblock
 * there too (Linux 6.18 honours it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/ondisk.h"
#include "format/xattr.h"
#include "util/error.h"
#include "write/internal.h"

struct xattr_prefix_rule {
	uint8_t base;              /* its built-in prefix's index */
	uint8_t infix_len;
	const char *infix;         /* what follows the built-in prefix */
};

void prefixes_close(struct build *b)
{
	free(b->prefixes);
	free(b->prefix_table);
	b->prefixes = NULL;
	b->prefix_table = NULL;
	b->nprefixes = 0;
}

/* One --xattr-prefix: a built-in prefix (not an ACL's, which is a whole
 * name) and an infix of 1..255 bytes. */
static int parse_prefix(struct build *b, const char *prefix, struct xattr_prefix_rule *out)
{
	size_t len = strlen(prefix), base_len;
	uint8_t base;
	unsigned int i;

	if (!fmt_xattr_split(prefix, len, &base, &base_len) ||
	    base == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
	    base == EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT)
		return err_fail(b->err, -EINVAL, "--xattr-prefix '%s': it must start with "
				"user., trusted. or security. and go on after it", prefix);
	if (len - base_len > 255)
		return err_fail(b->err, -EINVAL, "--xattr-prefix '%s': more than 255 bytes after "
				"%.*s", prefix, (int)base_len, prefix);
	for (i = 0; i < b->nprefixes; i++)
		if (b->prefixes[i].base == base && b->prefixes[i].infix_len == len - base_len &&
		    !memcmp(b->prefixes[i].infix, prefix + base_len, len - base_len))
			return err_fail(b->err, -EINVAL, "--xattr-prefix '%s' given twice", prefix);
	out->base = base;
	out->infix_len = (uint8_t)(len - base_len);
	out->infix = prefix + base_len;
	return 0;
}

int prefixes_open(struct build *b)
{
	const char *const *p = b->o.xattr_prefixes;
	size_t count = 0, size = 0, at = 0;
	unsigned int i;
	int ret;

	while (p && p[count])
		count++;
	if (!count)
		return 0;
	if (count > EROFS_XATTR_LONG_PREFIX_MAX)
		return err_fail(b->err, -EINVAL, "%zu --xattr-prefix: at most %u", count,
				EROFS_XATTR_LONG_PREFIX_MAX);
	if (b->o.no_xattrs)
		return err_fail(b->err, -EINVAL, "--xattr-prefix names xattrs: not without them");
	b->prefixes = calloc(count, sizeof(*b->prefixes));
	if (!b->prefixes)
		return err_fail(b->err, -ENOMEM, "out of memory");
	for (i = 0; i < count; i++) {
		ret = parse_prefix(b, p[i], &b->prefixes[i]);
		if (ret)
			return ret;
		b->nprefixes = i + 1;
		size += fmt_xattr_long_prefix_size(b->prefixes[i].infix_len);
	}
	b->prefix_table = malloc(size);
	if (!b->prefix_table)
		return err_fail(b->err, -ENOMEM, "out of memory");
	for (i = 0; i < count; i++) {
		struct fmt_xattr_long_prefix rec = {
			b->prefixes[i].base, b->prefixes[i].infix_len,
			(const uint8_t *)b->prefixes[i].infix,
		};

		at += fmt_xattr_long_prefix_encode(b->prefix_table + at, &rec);
	}
	b->prefix_table_size = (uint32_t)size;
	b->feature_incompat |= EROFS_INCOMPAT_XATTR_PREFIXES;
	return 0;
}

bool prefixes_in_packed(const struct build *b)
{
	return b->nprefixes && b->lay.fragments != EK_FRAGMENTS_OFF && !b->o.metabox_cluster;
}

void prefixes_apply(const struct build *b, struct txattr *x)
{
	unsigned int i, best = 0;
	bool found = false;

	for (i = 0; i < b->nprefixes; i++) {
		const struct xattr_prefix_rule *p = &b->prefixes[i];

		/* The longest that matches: the least left to store. */
		if (p->base == x->index && p->infix_len <= x->suffix_len &&
		    !memcmp(x->suffix, p->infix, p->infix_len) &&
		    (!found || p->infix_len > b->prefixes[best].infix_len)) {
			best = i;
			found = true;
		}
	}
	x->stored_index = found ? (uint8_t)(EROFS_XATTR_LONG_PREFIX | best) : x->index;
	x->stored_skip = found ? b->prefixes[best].infix_len : 0;
}
