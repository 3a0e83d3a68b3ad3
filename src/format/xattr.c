/* Xattr names, entries and the bloom filter. */
#include <string.h>
#include <xxhash.h>

#include "format/xattr.h"

static const char *const builtin_prefixes[EROFS_XATTR_INDEX_MAX] = {
	[EROFS_XATTR_INDEX_USER] = "user.",
	[EROFS_XATTR_INDEX_POSIX_ACL_ACCESS] = "system.posix_acl_access",
	[EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT] = "system.posix_acl_default",
	[EROFS_XATTR_INDEX_TRUSTED] = "trusted.",
	[EROFS_XATTR_INDEX_LUSTRE] = "lustre.",
	[EROFS_XATTR_INDEX_SECURITY] = "security.",
};

const char *fmt_xattr_prefix(unsigned int index)
{
	return index < EROFS_XATTR_INDEX_MAX ? builtin_prefixes[index] : NULL;
}

bool fmt_xattr_split(const char *name, size_t len, uint8_t *index,
		     size_t *prefix_len)
{
	size_t best = 0;
	unsigned int i, best_index = 0;

	for (i = 1; i < EROFS_XATTR_INDEX_MAX; i++) {
		size_t plen = strlen(builtin_prefixes[i]);

		/* lustre. is not understood by the kernel: never store it. */
		if (i == EROFS_XATTR_INDEX_LUSTRE)
			continue;
		if (plen <= len && plen > best &&
		    memcmp(name, builtin_prefixes[i], plen) == 0) {
			best = plen;
			best_index = i;
		}
	}
	if (!best_index)
		return false;
	/* ACL names are whole prefixes: nothing may follow them. */
	if ((best_index == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
	     best_index == EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT) && best != len)
		return false;
	/* "user." alone is not a name. */
	if (best == len && best_index != EROFS_XATTR_INDEX_POSIX_ACL_ACCESS &&
	    best_index != EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT)
		return false;
	*index = (uint8_t)best_index;
	*prefix_len = best;
	return true;
}

size_t fmt_xattr_entry_encode(uint8_t *out, uint8_t index, const void *name,
			      size_t name_len, const void *value,
			      size_t value_len)
{
	size_t size = fmt_xattr_entry_size(name_len, value_len);

	out[0] = (uint8_t)name_len;
	out[1] = index;
	put_le16(out + 2, (uint16_t)value_len);
	memcpy(out + 4, name, name_len);
	if (value_len)
		memcpy(out + 4 + name_len, value, value_len);
	memset(out + 4 + name_len + value_len, 0,
	       size - (4 + name_len + value_len));
	return size;
}

size_t fmt_xattr_long_prefix_encode(uint8_t *out, const struct fmt_xattr_long_prefix *p)
{
	size_t size = fmt_xattr_long_prefix_size(p->infix_len);

	memset(out, 0, size);
	put_le16(out, (uint16_t)(1 + p->infix_len));
	out[2] = p->base_index;
	memcpy(out + 3, p->infix, p->infix_len);
	return size;
}

void fmt_xattr_body_encode(uint8_t *out, uint32_t name_filter,
			   uint8_t shared_count)
{
	memset(out, 0, EROFS_XATTR_HEADER_SIZE);
	put_le32(out, name_filter);
	out[4] = shared_count;
}

unsigned int fmt_xattr_filter_bit(const void *name, size_t len,
				  unsigned int base_index)
{
	return XXH32(name, len, EROFS_XATTR_FILTER_SEED + base_index) &
	       (EROFS_XATTR_FILTER_BITS - 1);
}
