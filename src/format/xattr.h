/* Extended attribute records (spec section 5): entries, prefixes, filter. */
#ifndef EK_FORMAT_XATTR_H
#define EK_FORMAT_XATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/ondisk.h"

enum erofs_xattr_index {
	EROFS_XATTR_INDEX_USER = 1,
	EROFS_XATTR_INDEX_POSIX_ACL_ACCESS = 2,
	EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT = 3,
	EROFS_XATTR_INDEX_TRUSTED = 4,
	EROFS_XATTR_INDEX_LUSTRE = 5,
	EROFS_XATTR_INDEX_SECURITY = 6,
	EROFS_XATTR_INDEX_MAX = 7,
};

#define EROFS_XATTR_LONG_PREFIX      0x80u
#define EROFS_XATTR_LONG_PREFIX_MASK 0x7Fu
#define EROFS_XATTR_FILTER_SEED      0x25BBE08Fu
#define EROFS_XATTR_FILTER_BITS      32u
#define EROFS_XATTR_LONG_PREFIX_MAX  128u

/* Prefix string of a built-in index, or NULL for 0 and unknown indexes. */
const char *fmt_xattr_prefix(unsigned int index);

/* Split a full name into the longest built-in prefix and the suffix.
 * Returns false when no built-in prefix matches (the name cannot be
 * stored), or when an ACL name carries a suffix. */
bool fmt_xattr_split(const char *name, size_t len, uint8_t *index,
		     size_t *prefix_len);

/* Bytes one entry occupies, padding included. */
static inline size_t fmt_xattr_entry_size(size_t name_len, size_t value_len)
{
	return (EROFS_XATTR_ENTRY_SIZE + name_len + value_len + 3) & ~(size_t)3;
}

/* Write one entry (header, name suffix, value, zero padding). */
size_t fmt_xattr_entry_encode(uint8_t *out, uint8_t index, const void *name,
			      size_t name_len, const void *value,
			      size_t value_len);

struct fmt_xattr_entry_hdr {
	uint8_t name_len;
	uint8_t name_index;
	uint16_t value_size;
};

static inline void fmt_xattr_entry_decode(const uint8_t *p,
					  struct fmt_xattr_entry_hdr *h)
{
	h->name_len = p[0];
	h->name_index = p[1];
	h->value_size = get_le16(p + 2);
}

/* Inline body header (12 bytes). */
struct fmt_xattr_body_hdr {
	uint32_t name_filter;
	uint8_t shared_count;
};

static inline void fmt_xattr_body_decode(const uint8_t *p,
					 struct fmt_xattr_body_hdr *h)
{
	h->name_filter = get_le32(p);
	h->shared_count = p[4];
}

void fmt_xattr_body_encode(uint8_t *out, uint32_t name_filter,
			   uint8_t shared_count);

/* Bloom filter bit (0..31) of a name: `name` is the full name minus its
 * built-in prefix, base_index the built-in prefix index. */
unsigned int fmt_xattr_filter_bit(const void *name, size_t len,
				  unsigned int base_index);

/* Long-prefix table record: le16 len, u8 base index, infix. */
struct fmt_xattr_long_prefix {
	uint8_t base_index;
	uint16_t infix_len;
	const uint8_t *infix;
};

/* Bytes a record takes in the table, padding to the next one included. */
static inline size_t fmt_xattr_long_prefix_size(size_t infix_len)
{
	return (2 + 1 + infix_len + 3) & ~(size_t)3;
}

/* Write one record (infix_len at most 255), zero padded; returns its
 * size. */
size_t fmt_xattr_long_prefix_encode(uint8_t *out, const struct fmt_xattr_long_prefix *p);

#endif
