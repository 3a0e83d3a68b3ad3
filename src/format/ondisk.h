/*
 * EROFS on-disk constants and little-endian accessors.
 *
 * The format layer knows bytes, not files: every function here works on
 * caller-provided buffers.  Structures are decoded field by field from byte
 * offsets (never by casting packed structs) so that misaligned 16-bit fields
 * and host endianness cannot bite.
 */
#ifndef EK_FORMAT_ONDISK_H
#define EK_FORMAT_ONDISK_H

#include <stdint.h>
#include <string.h>

#define EROFS_SUPER_OFFSET        1024u
#define EROFS_SUPER_MAGIC         0xE0F5E1E2u
#define EROFS_SUPER_BASE_SIZE     128u
#define EROFS_SUPER_EXTSLOT_SIZE  16u
#define EROFS_SLOT_SIZE           32u   /* NID unit */
#define EROFS_SLOT_BITS           5u
#define EROFS_INODE_COMPACT_SIZE  32u
#define EROFS_INODE_EXTENDED_SIZE 64u
#define EROFS_XATTR_HEADER_SIZE   12u
#define EROFS_XATTR_ENTRY_SIZE    4u
#define EROFS_DIRENT_SIZE         12u
#define EROFS_NAME_MAX            255u
#define EROFS_MIN_BLKSZBITS       9u
#define EROFS_MAX_BLKSZBITS       12u   /* PAGE_SHIFT of x86-64 kernels */
#define EROFS_NULL_ADDR           0xFFFFFFFFu
#define EROFS_MAX_PCLUSTER_BYTES  (1u << 20)
#define EROFS_MAX_EXTENT_BYTES    (12u << 20)
#define EROFS_MAX_SHARED_XATTRS   255u
#define EROFS_DEVICE_SLOT_SIZE    128u

/* feature_compat */
#define EROFS_COMPAT_SB_CHKSUM           0x01u
#define EROFS_COMPAT_MTIME               0x02u
#define EROFS_COMPAT_XATTR_FILTER        0x04u
#define EROFS_COMPAT_SHARED_EA_IN_METABOX 0x08u
#define EROFS_COMPAT_PLAIN_XATTR_PFX     0x10u
#define EROFS_COMPAT_ISHARE_XATTRS       0x20u

/* feature_incompat; three values carry two names each */
#define EROFS_INCOMPAT_ZERO_PADDING   0x001u
#define EROFS_INCOMPAT_COMPR_CFGS     0x002u
#define EROFS_INCOMPAT_BIG_PCLUSTER   0x002u
#define EROFS_INCOMPAT_CHUNKED_FILE   0x004u
#define EROFS_INCOMPAT_DEVICE_TABLE   0x008u
#define EROFS_INCOMPAT_COMPR_HEAD2    0x008u
#define EROFS_INCOMPAT_ZTAILPACKING   0x010u
#define EROFS_INCOMPAT_FRAGMENTS      0x020u
#define EROFS_INCOMPAT_DEDUPE         0x020u
#define EROFS_INCOMPAT_XATTR_PREFIXES 0x040u
#define EROFS_INCOMPAT_48BIT          0x080u
#define EROFS_INCOMPAT_METABOX        0x100u
#define EROFS_INCOMPAT_SUPPORTED      0x1FFu

/* A nid with this bit names an inode inside the metabox's data (METABOX). */
#define EROFS_NID_METABOX             (1ull << 63)

/* i_format data layouts */
enum erofs_layout {
	EROFS_LAYOUT_FLAT_PLAIN = 0,
	EROFS_LAYOUT_COMPRESSED_FULL = 1,
	EROFS_LAYOUT_FLAT_INLINE = 2,
	EROFS_LAYOUT_COMPRESSED_COMPACT = 3,
	EROFS_LAYOUT_CHUNK_BASED = 4,
	EROFS_LAYOUT_MAX = 5,
};

#define EROFS_IFORMAT_EXTENDED   0x0001u
#define EROFS_IFORMAT_LAYOUT_SHIFT 1u
#define EROFS_IFORMAT_LAYOUT_MASK 0x0007u
#define EROFS_IFORMAT_BIT4       0x0010u /* DOT_OMITTED / NLINK_1 */
#define EROFS_IFORMAT_KNOWN_BITS 0x001Fu

/* directory entry file types */
enum erofs_ftype {
	EROFS_FT_UNKNOWN = 0, EROFS_FT_REG = 1, EROFS_FT_DIR = 2,
	EROFS_FT_CHR = 3, EROFS_FT_BLK = 4, EROFS_FT_FIFO = 5,
	EROFS_FT_SOCK = 6, EROFS_FT_LNK = 7, EROFS_FT_MAX = 8,
};

/* compression algorithm ids */
enum erofs_algorithm {
	EROFS_ALG_LZ4 = 0,
	EROFS_ALG_LZMA = 1,
	EROFS_ALG_DEFLATE = 2,
	EROFS_ALG_ZSTD = 3,
	EROFS_ALG_MAX = 4,
};

/* chunk format (low 16 bits of i_u of CHUNK_BASED inodes) */
#define EROFS_CHUNK_BITS_MASK  0x001Fu
#define EROFS_CHUNK_INDEXES    0x0020u
#define EROFS_CHUNK_48BIT      0x0040u
#define EROFS_CHUNK_KNOWN_BITS 0x007Fu

/* ------------------------------------------------------- byte helpers */

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	       ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | ((uint64_t)get_le32(p + 4) << 32);
}

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t round_up_u64(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static inline uint64_t div_round_up_u64(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a;
}

/* A short explanation filled in by decoders when they reject a field. */
typedef struct fmt_why {
	char text[192];
} fmt_why;

void fmt_why_set(fmt_why *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
