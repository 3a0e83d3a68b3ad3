/*
 * Compressed-file metadata (spec sections 6 and 7.2): the map header, full
 * and compact lcluster indexes, encoded extents and the compression
 * configuration records.
 */
#ifndef EK_FORMAT_ZINDEX_H
#define EK_FORMAT_ZINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/ondisk.h"

/* h_advise */
#define Z_ADVISE_COMPACTED_2B        0x0001u
#define Z_ADVISE_EXTENTS             0x0001u /* full layout, 48-bit */
#define Z_ADVISE_BIG_PCLUSTER_1      0x0002u
#define Z_ADVISE_BIG_PCLUSTER_2      0x0004u
#define Z_ADVISE_INLINE_PCLUSTER     0x0008u
#define Z_ADVISE_INTERLACED_PCLUSTER 0x0010u
#define Z_ADVISE_FRAGMENT_PCLUSTER   0x0020u
#define Z_ADVISE_KNOWN               0x003Fu
/* with EXTENTS, bits 1-2 give the record size: 4 << code bytes */
#define Z_ADVISE_EXTRECSZ_SHIFT      1
#define Z_ADVISE_EXTRECSZ_16         (2u << Z_ADVISE_EXTRECSZ_SHIFT)
#define Z_EXTENT_RECSZ               16u  /* the records writers use */
#define Z_EXTENT_PLEN_MASK           0x1FFFFFu
#define Z_EXTENT_PARTIAL             (1u << 27)
#define Z_EXTENT_FMT_SHIFT           28

#define Z_HEADER_SIZE                8u
#define Z_FULL_INDEX_SIZE            8u
#define Z_FULL_INDEX_SKIP            8u   /* reserved bytes after the header */
#define Z_WHOLE_FRAGMENT_BIT         0x80u /* h_clusterbits bit 7 */

enum z_lcluster_type {
	Z_LCLUSTER_PLAIN = 0,
	Z_LCLUSTER_HEAD1 = 1,
	Z_LCLUSTER_NONHEAD = 2,
	Z_LCLUSTER_HEAD2 = 3,
};

#define Z_CBLKCNT        0x0800u
#define Z_CBLKCNT_MASK   0x07FFu
#define Z_PARTIAL_REF    0x8000u
#define Z_DELTA_MAX      2047u

/* ------------------------------------------------------------ header */

struct fmt_zmap_header {
	uint32_t fragment_off_lo;  /* FRAGMENT_PCLUSTER */
	uint16_t idata_size;       /* INLINE_PCLUSTER */
	uint16_t advise;
	uint8_t algorithm_type;    /* low nibble HEAD1, high nibble HEAD2 */
	uint8_t clusterbits;       /* low 4 bits: lclusterbits - blkszbits */
	bool whole_fragment;
	uint64_t whole_fragment_off;
	/* encoded extents with 16/32-byte records */
	uint64_t extent_count;
};

void fmt_zmap_header_decode(const uint8_t *p, struct fmt_zmap_header *h);
void fmt_zmap_header_encode(uint8_t *p, uint16_t advise, uint8_t algorithm,
			    uint32_t fragment_or_idata);
/* The header of encoded extents: advise and the record count. */
void fmt_zmap_header_encode_extents(uint8_t *p, uint16_t advise, uint64_t count);
/* The header of a file whose whole data is a fragment at off (< 2^63). */
void fmt_zmap_header_encode_whole_fragment(uint8_t *p, uint64_t off);

/* ------------------------------------------------------------ full index */

struct fmt_lcluster {
	uint8_t type;        /* enum z_lcluster_type */
	bool partial;        /* PARTIAL_REF on a head */
	uint16_t clusterofs; /* heads */
	uint32_t blkaddr;    /* heads */
	uint16_t delta[2];   /* NONHEAD: raw delta0 (maybe CBLKCNT) and delta1 */
};

void fmt_zindex_full_decode(const uint8_t *p, struct fmt_lcluster *lc);
void fmt_zindex_full_encode(uint8_t *p, const struct fmt_lcluster *lc);

/* ------------------------------------------------------------ compact */

struct fmt_compact_layout {
	uint64_t ebase;      /* absolute byte offset of the first pack */
	uint64_t total;      /* T: number of lclusters (from blocks) */
	uint64_t initial_4b; /* A */
	uint64_t middle_2b;  /* B */
};

void fmt_compact_layout_init(struct fmt_compact_layout *l, uint64_t ebase,
			     uint64_t total, bool compacted_2b);

/* Byte position of lcluster n and the size of the unit holding it (2/4). */
uint64_t fmt_compact_pos(const struct fmt_compact_layout *l, uint64_t n,
			 unsigned int *unit);

/* Bytes from ebase to the end of the last pack. */
uint64_t fmt_compact_size(const struct fmt_compact_layout *l);

/* Pack geometry for a unit size: items per pack and bits per item. */
static inline unsigned int fmt_compact_vcnt(unsigned int unit)
{
	return unit == 4 ? 2 : 16;
}

static inline unsigned int fmt_compact_encodebits(unsigned int unit)
{
	return unit == 4 ? 16 : 14;
}

static inline unsigned int fmt_compact_packsize(unsigned int unit)
{
	return unit == 4 ? 8 : 32;
}

/* Item i of a pack: its 2-bit type and `lobits`-bit value. */
void fmt_compact_item(const uint8_t *pack, unsigned int unit, unsigned int i,
		      unsigned int lobits, uint8_t *type, uint16_t *lo);
void fmt_compact_set_item(uint8_t *pack, unsigned int unit, unsigned int i,
			  unsigned int lobits, uint8_t type, uint16_t lo);

/*
 * Blocks from a pack's base address to head item i (spec 6.7): the walk
 * back over the items before it.  Readers add the pack's base; writers
 * subtract it from the true address to choose the base.  -EUCLEAN on an
 * impossible item sequence.
 */
int fmt_compact_head_nblk(const uint8_t *pack, unsigned int unit,
			  unsigned int i, unsigned int lobits, bool big,
			  uint64_t *nblk);

/* ------------------------------------------------------------ writing */

/* One extent as the writer laid it out. */
struct fmt_zextent {
	uint64_t la;         /* logical start */
	uint64_t blkaddr;    /* first block of its pcluster (a tail: the
	                        next block, as mkfs.erofs writes) */
	uint16_t blocks;     /* pcluster blocks (1 for uncompressed) */
	bool plain;          /* stored uncompressed */
	bool partial;        /* uses a prefix of its pcluster (dedupe) */
	bool tail;           /* the last extent, inline or a fragment: it
	                        runs to i_size, no EOF sentinel follows */
};

/*
 * One record per lcluster for extents sorted by start and covering
 * [0, size): heads, NONHEAD distances (capped at 2047), the block count of
 * big pclusters in the first NONHEAD after their head, and the EOF
 * sentinel (unless the last extent is a tail).  lc must hold
 * ceil(size / lcluster size) records.
 */
int fmt_zindex_plan(const struct fmt_zextent *ext, size_t n, uint64_t size,
		    unsigned int lclusterbits, bool big, struct fmt_lcluster *lc,
		    fmt_why *why);

/* The full index: nlc 8-byte records (after the header's 8 reserved
 * bytes, which the caller zeroes).  Needed for partial references and
 * for fragment offsets of 4 GiB and more (high bits in the tail's head). */
void fmt_zindex_encode_full(const struct fmt_lcluster *lc, uint64_t nlc,
			    uint8_t *out);

/* The compact index; -EAGAIN when two pclusters of one pack do not follow
 * each other (a pack has one base address): the full index can say it. */
int fmt_zindex_encode_compact(const struct fmt_lcluster *lc, uint64_t nlc,
			      const struct fmt_compact_layout *l,
			      unsigned int lclusterbits, bool big, uint8_t *out,
			      fmt_why *why);

/*
 * Encoded extents (spec 6.14, 48-bit images): one 16-byte record per
 * extent, its pcluster's byte address and length and its logical start,
 * in place of a record per lcluster.  A tail extent must be a fragment
 * at fragment_off (no inline tail).  out holds n * Z_EXTENT_RECSZ bytes.
 */
void fmt_zindex_encode_extents(const struct fmt_zextent *ext, size_t n,
			       unsigned int blkszbits, unsigned int algorithm,
			       uint64_t fragment_off, uint8_t *out);

/* ------------------------------------------------------------ configs */

struct fmt_zconfig {
	uint16_t lz4_max_distance;
	uint16_t lz4_max_pclusterblks;
	uint32_t lzma_dict_size;
	uint8_t deflate_windowbits;
	uint8_t zstd_windowlog;      /* stored value + 10 */
};

/* Minimum payload bytes the kernel requires for an algorithm's record. */
size_t fmt_zconfig_min_size(unsigned int alg);

/* Validate and store one record's payload.  Returns 0, -EUCLEAN or
 * -EOPNOTSUPP. */
int fmt_zconfig_decode(unsigned int alg, const uint8_t *payload, size_t len,
		       uint32_t blksz, struct fmt_zconfig *cfg, fmt_why *why);

/* Encode one record (le16 length + payload, padded to 4); returns bytes. */
size_t fmt_zconfig_encode(unsigned int alg, const struct fmt_zconfig *cfg,
			  uint8_t *out);

#endif
