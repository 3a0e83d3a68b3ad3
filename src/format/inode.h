/* Inode cores (spec section 3): compact (32 bytes) and extended (64). */
#ifndef EK_FORMAT_INODE_H
#define EK_FORMAT_INODE_H

#include <stdbool.h>
#include <stdint.h>

#include "format/ondisk.h"
#include "format/super.h"

struct fmt_inode {
	bool extended;
	uint8_t layout;          /* enum erofs_layout */
	bool format_bit4;        /* DOT_OMITTED (dirs) or NLINK_1 (compact) */
	uint16_t xattr_icount;
	uint16_t mode;
	uint16_t nb;             /* raw i_nb */
	uint32_t nlink;
	uint64_t size;
	int64_t mtime;
	uint32_t mtime_nsec;
	uint32_t u;              /* raw i_u union */
	uint32_t ino;            /* informational i_ino */
	uint32_t uid, gid;

	/* derived by the decoder */
	uint32_t core_size;      /* 32 or 64 */
	uint32_t xattr_size;     /* bytes of the inline xattr body */
	uint64_t startblk;       /* flat layouts: first data block */
	bool startblk_null;      /* flat plain: whole file is a hole */
	uint32_t rdev_major, rdev_minor;
};

/* Core size from the first two bytes (i_format) of an inode record. */
static inline uint32_t fmt_inode_core_size(uint16_t i_format)
{
	return (i_format & EROFS_IFORMAT_EXTENDED) ? EROFS_INODE_EXTENDED_SIZE
						   : EROFS_INODE_COMPACT_SIZE;
}

/* Inline xattr body bytes for an i_xattr_icount value (spec 3.7). */
static inline uint32_t fmt_xattr_isize(uint16_t icount)
{
	return icount ? EROFS_XATTR_HEADER_SIZE + 4u * (icount - 1u) : 0;
}

/*
 * Decode and validate the inode core in `buf` (core_size bytes).  Rejects
 * what the kernel rejects when it loads an inode: unknown i_format bits,
 * layouts >= 5, bad mode types, sizes >= 2^63, unknown chunk formats.
 * Returns 0, -EUCLEAN or -EOPNOTSUPP.
 */
int fmt_inode_decode(const uint8_t *buf, const struct fmt_super *sb,
		     struct fmt_inode *out, fmt_why *why);

/* Encode `in` (core_size selects the form) into out[core_size]; a
 * compact core's mtime is stored relative to the superblock's epoch (the
 * caller makes sure it lies in [epoch, epoch + 2^32)). */
void fmt_inode_encode(const struct fmt_inode *in, int64_t epoch, uint8_t *out);

/* Device number encoding of i_u for character and block devices. */
uint32_t fmt_encode_rdev(uint32_t major, uint32_t minor);
void fmt_decode_rdev(uint32_t v, uint32_t *major, uint32_t *minor);

/* Directory-entry type code for a mode, the mode's type bits for a code
 * (0 for an unknown one), and names for people. */
uint8_t fmt_ftype_of_mode(uint32_t mode);
uint32_t fmt_mode_of_ftype(unsigned int ftype);
const char *fmt_ftype_name(unsigned int ftype);
const char *fmt_layout_name(unsigned int layout);

/* i_format word for a layout. */
static inline uint16_t fmt_iformat(bool extended, unsigned int layout)
{
	return (uint16_t)((extended ? 1u : 0u) |
			  (layout << EROFS_IFORMAT_LAYOUT_SHIFT));
}

#endif
