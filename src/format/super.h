/* Superblock: decode, validate, encode, checksum. */
#ifndef EK_FORMAT_SUPER_H
#define EK_FORMAT_SUPER_H

#include <stddef.h>
#include <stdint.h>

#include "format/ondisk.h"

struct fmt_super {
	uint32_t magic;
	uint32_t checksum;
	uint32_t feature_compat;
	uint8_t blkszbits;
	uint8_t sb_extslots;
	uint16_t root_nid_16;
	uint64_t inos;
	int64_t epoch;
	uint32_t fixed_nsec;
	uint32_t blocks_lo;
	uint32_t meta_blkaddr;
	uint32_t xattr_blkaddr;
	uint8_t uuid[16];
	uint8_t volume_name[16];
	uint32_t feature_incompat;
	uint16_t u1;             /* compr algs bitmap or lz4 max distance */
	uint16_t extra_devices;
	uint16_t devt_slotoff;
	uint8_t dirblkbits;
	uint8_t xattr_prefix_count;
	uint32_t xattr_prefix_start;
	uint64_t packed_nid;
	uint8_t xattr_filter_reserved;
	uint8_t ishare_xattr_prefix_id;
	uint32_t build_time;
	uint64_t rootnid_8b;
	uint64_t metabox_nid;

	/* derived by fmt_super_decode() */
	uint32_t blksz;
	uint32_t sb_size;
	uint64_t root_nid;
	uint64_t blocks;
};

/* Bytes of the image fmt_super_decode() needs, starting at byte 0:
 * the superblock plus its largest possible extension. */
#define FMT_SUPER_READ_SIZE (EROFS_SUPER_OFFSET + 4096u)

/*
 * Decode and validate the superblock at image byte 1024.  `img` holds the
 * first `len` bytes of the image.  Checks everything the kernel checks at
 * mount time that lives in the superblock itself (magic, block size,
 * dirblkbits, checksum, incompat bits, extension slots).
 * Returns 0, -EUCLEAN (corrupt) or -EOPNOTSUPP (unsupported feature).
 */
int fmt_super_decode(const uint8_t *img, size_t len, struct fmt_super *sb,
		     fmt_why *why);

/* Encode into `out` (sb_size bytes, i.e. 128 + 16 * sb_extslots). */
void fmt_super_encode(const struct fmt_super *sb, uint8_t *out);

/*
 * CRC-32C of the superblock block as the kernel computes it: `block`
 * starts at image byte 1024 and holds `len` bytes (blksz - 1024, or blksz
 * for blocks of 1024 bytes and less); the checksum field is taken as zero.
 */
uint32_t fmt_super_checksum(const uint8_t *block, size_t len);

/* Number of bytes the checksum covers for a block size. */
size_t fmt_super_checksum_span(uint32_t blksz);

/* CRC-32C (Castagnoli), reflected, no final inversion. */
uint32_t fmt_crc32c(uint32_t crc, const void *data, size_t len);

#endif
