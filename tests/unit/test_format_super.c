/* Superblock encode/decode, validation and checksum (spec 2, 10.1, 11). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/super.h"
#include "spec_image.h"

/* ------------------------------------------------------------ helpers */

static uint8_t *spec_image(bool variant)
{
	uint8_t *img = malloc(SPEC_IMAGE_VARIANT_SIZE);

	assert_non_null(img);
	spec_image_build(img, variant);
	put_le32(img + 1028, fmt_super_checksum(img + 1024, 3072));
	return img;
}

/* Store a fresh checksum after patching a covered byte on purpose. */
static void reseal(uint8_t *img, uint32_t blksz)
{
	put_le32(img + 1028, fmt_super_checksum(img + 1024,
						fmt_super_checksum_span(blksz)));
}

static void expect_reject(const uint8_t *img, size_t len, int code)
{
	struct fmt_super sb;
	fmt_why why;

	memset(&why, 0, sizeof(why));
	assert_int_equal(fmt_super_decode(img, len, &sb, &why), code);
	assert_true(strlen(why.text) > 0);
}

/* ------------------------------------------------------------ crc */

static void test_crc32c_check_value(void **state)
{
	static const char digits[] = "123456789";

	(void)state;
	/* init ~0, no final XOR: the complement of the usual 0xE3069283 */
	assert_int_equal(fmt_crc32c(0xFFFFFFFFu, digits, 9), 0x1CF96D7Cu);
	/* incremental feeding gives the same state */
	assert_int_equal(fmt_crc32c(fmt_crc32c(0xFFFFFFFFu, digits, 4),
				    digits + 4, 5), 0x1CF96D7Cu);
	/* empty input leaves the state alone */
	assert_int_equal(fmt_crc32c(0x12345678u, digits, 0), 0x12345678u);
}

static void test_crc32c_kernel_seed(void **state)
{
	/* Spec 10.1: the state after the magic and a zero checksum field. */
	static const uint8_t head[8] = { 0xE2, 0xE1, 0xF5, 0xE0, 0, 0, 0, 0 };

	(void)state;
	assert_int_equal(fmt_crc32c(0xFFFFFFFFu, head, 8), 0x5045B54Au);
}

static void test_checksum_span(void **state)
{
	(void)state;
	assert_int_equal(fmt_super_checksum_span(4096), 3072);
	assert_int_equal(fmt_super_checksum_span(2048), 1024);
	assert_int_equal(fmt_super_checksum_span(1024), 1024);
	assert_int_equal(fmt_super_checksum_span(512), 512);
}

/* ------------------------------------------------------------ spec 11 */

static void test_spec_image_checksum(void **state)
{
	uint8_t *img = malloc(SPEC_IMAGE_SIZE);

	(void)state;
	assert_non_null(img);
	spec_image_build(img, false);
	assert_int_equal(fmt_super_checksum(img + 1024, 3072), SPEC_IMAGE_CRC);
	/* The stored checksum field is treated as zero. */
	put_le32(img + 1028, 0xDEADBEEFu);
	assert_int_equal(fmt_super_checksum(img + 1024, 3072), SPEC_IMAGE_CRC);
	free(img);
}

static void test_spec_variant_checksum(void **state)
{
	uint8_t *img = malloc(SPEC_IMAGE_VARIANT_SIZE);

	(void)state;
	assert_non_null(img);
	spec_image_build(img, true);
	assert_int_equal(fmt_super_checksum(img + 1024, 3072),
			 SPEC_IMAGE_VARIANT_CRC);
	free(img);
}

static void test_spec_image_decode(void **state)
{
	uint8_t *img = spec_image(false);
	static const uint8_t uuid[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
					  11, 12, 13, 14, 15 };
	struct fmt_super sb;
	fmt_why why = { { 0 } };

	(void)state;
	assert_int_equal(fmt_super_decode(img, SPEC_IMAGE_SIZE, &sb, &why), 0);
	assert_int_equal(sb.magic, EROFS_SUPER_MAGIC);
	assert_int_equal(sb.checksum, SPEC_IMAGE_CRC);
	assert_int_equal(sb.feature_compat, EROFS_COMPAT_SB_CHKSUM);
	assert_int_equal(sb.blkszbits, 12);
	assert_int_equal(sb.blksz, 4096);
	assert_int_equal(sb.sb_extslots, 0);
	assert_int_equal(sb.sb_size, 128);
	assert_int_equal(sb.root_nid_16, SPEC_ROOT_NID);
	assert_int_equal(sb.root_nid, SPEC_ROOT_NID);
	assert_int_equal(sb.inos, 2);
	assert_int_equal(sb.epoch, SPEC_EPOCH);
	assert_int_equal(sb.fixed_nsec, 0);
	assert_int_equal(sb.blocks_lo, 1);
	assert_int_equal(sb.blocks, 1);
	assert_int_equal(sb.meta_blkaddr, 0);
	assert_int_equal(sb.xattr_blkaddr, 0);
	assert_memory_equal(sb.uuid, uuid, 16);
	assert_memory_equal(sb.volume_name, "mini\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	assert_int_equal(sb.feature_incompat, 0);
	assert_int_equal(sb.dirblkbits, 0);
	assert_int_equal(sb.packed_nid, 0);
	free(img);
}

/* The spec image's superblock re-encoded gives the same 128 bytes. */
static void test_spec_image_reencode(void **state)
{
	uint8_t *img = spec_image(false);
	uint8_t out[EROFS_SUPER_BASE_SIZE];
	struct fmt_super sb;
	fmt_why why;

	(void)state;
	assert_int_equal(fmt_super_decode(img, SPEC_IMAGE_SIZE, &sb, &why), 0);
	memset(out, 0xA5, sizeof(out));
	fmt_super_encode(&sb, out);
	assert_memory_equal(out, img + 1024, sizeof(out));
	free(img);
}

/* ------------------------------------------------------------ roundtrip */

static void fill_fields(struct fmt_super *sb)
{
	unsigned int i;

	memset(sb, 0, sizeof(*sb));
	sb->magic = EROFS_SUPER_MAGIC;
	sb->feature_compat = EROFS_COMPAT_SB_CHKSUM | EROFS_COMPAT_MTIME |
			     EROFS_COMPAT_XATTR_FILTER | 0x00400000u;
	sb->blkszbits = 12;
	sb->sb_extslots = 1;
	sb->root_nid_16 = 0xBEEF;
	sb->inos = 0x0102030405060708ull;
	sb->epoch = -1234567890123ll;
	sb->fixed_nsec = 999999999u;
	sb->blocks_lo = 0x89ABCDEFu;
	sb->meta_blkaddr = 0x11223344u;
	sb->xattr_blkaddr = 0x55667788u;
	for (i = 0; i < 16; i++) {
		sb->uuid[i] = (uint8_t)(0xF0 - i);
		sb->volume_name[i] = (uint8_t)('a' + i);
	}
	sb->feature_incompat = EROFS_INCOMPAT_SUPPORTED;  /* all, metabox too */
	sb->u1 = 0x000F;
	sb->extra_devices = 0x1357;
	sb->devt_slotoff = 0x2468;
	sb->dirblkbits = 0;
	sb->xattr_prefix_count = 0x7F;
	sb->xattr_prefix_start = 0xCAFEBABEu;
	sb->packed_nid = 0x7EDCBA9876543210ull;
	sb->xattr_filter_reserved = 0x5A;
	sb->ishare_xattr_prefix_id = 0xA5;
	sb->build_time = 0x0BADF00Du;
	sb->rootnid_8b = 0x0000123456789ABCull;
	sb->metabox_nid = 0x7000000000000123ull;
}

static void test_encode_offsets(void **state)
{
	struct fmt_super sb;
	uint8_t out[144];
	unsigned int i;

	(void)state;
	fill_fields(&sb);
	sb.checksum = 0x76543210u;
	memset(out, 0xCC, sizeof(out));
	fmt_super_encode(&sb, out);
	/* Every field at the byte offset of spec table 2.1. */
	assert_int_equal(get_le32(out + 0), EROFS_SUPER_MAGIC);
	assert_int_equal(get_le32(out + 4), 0x76543210u);
	assert_int_equal(get_le32(out + 8), sb.feature_compat);
	assert_int_equal(out[12], 12);
	assert_int_equal(out[13], 1);
	assert_int_equal(get_le16(out + 14), 0xBEEF);
	assert_int_equal(get_le64(out + 16), 0x0102030405060708ull);
	assert_int_equal((int64_t)get_le64(out + 24), -1234567890123ll);
	assert_int_equal(get_le32(out + 32), 999999999u);
	assert_int_equal(get_le32(out + 36), 0x89ABCDEFu);
	assert_int_equal(get_le32(out + 40), 0x11223344u);
	assert_int_equal(get_le32(out + 44), 0x55667788u);
	assert_memory_equal(out + 48, sb.uuid, 16);
	assert_memory_equal(out + 64, sb.volume_name, 16);
	assert_int_equal(get_le32(out + 80), EROFS_INCOMPAT_SUPPORTED);
	assert_int_equal(get_le16(out + 84), 0x000F);
	assert_int_equal(get_le16(out + 86), 0x1357);
	assert_int_equal(get_le16(out + 88), 0x2468);
	assert_int_equal(out[90], 0);
	assert_int_equal(out[91], 0x7F);
	assert_int_equal(get_le32(out + 92), 0xCAFEBABEu);
	assert_int_equal(get_le64(out + 96), 0x7EDCBA9876543210ull);
	assert_int_equal(out[104], 0x5A);
	assert_int_equal(out[105], 0xA5);
	assert_int_equal(get_le16(out + 106), 0);
	assert_int_equal(get_le32(out + 108), 0x0BADF00Du);
	assert_int_equal(get_le64(out + 112), 0x0000123456789ABCull);
	for (i = 120; i < 128; i++)
		assert_int_equal(out[i], 0);
	assert_int_equal(get_le64(out + 128), 0x7000000000000123ull);
	for (i = 136; i < 144; i++)
		assert_int_equal(out[i], 0);
}

static void test_roundtrip_all_fields(void **state)
{
	uint8_t *img = calloc(1, 4096);
	struct fmt_super in, out;
	fmt_why why = { { 0 } };

	(void)state;
	assert_non_null(img);
	fill_fields(&in);
	fmt_super_encode(&in, img + 1024);
	/* some bytes after the superblock, covered by the checksum */
	memset(img + 2000, 0x3C, 100);
	reseal(img, 4096);
	in.checksum = get_le32(img + 1028);

	assert_int_equal(fmt_super_decode(img, 4096, &out, &why), 0);
	assert_int_equal(out.magic, in.magic);
	assert_int_equal(out.checksum, in.checksum);
	assert_int_equal(out.feature_compat, in.feature_compat);
	assert_int_equal(out.blkszbits, in.blkszbits);
	assert_int_equal(out.sb_extslots, in.sb_extslots);
	assert_int_equal(out.root_nid_16, in.root_nid_16);
	assert_int_equal(out.inos, in.inos);
	assert_int_equal(out.epoch, in.epoch);
	assert_int_equal(out.fixed_nsec, in.fixed_nsec);
	assert_int_equal(out.blocks_lo, in.blocks_lo);
	assert_int_equal(out.meta_blkaddr, in.meta_blkaddr);
	assert_int_equal(out.xattr_blkaddr, in.xattr_blkaddr);
	assert_memory_equal(out.uuid, in.uuid, 16);
	assert_memory_equal(out.volume_name, in.volume_name, 16);
	assert_int_equal(out.feature_incompat, in.feature_incompat);
	assert_int_equal(out.u1, in.u1);
	assert_int_equal(out.extra_devices, in.extra_devices);
	assert_int_equal(out.devt_slotoff, in.devt_slotoff);
	assert_int_equal(out.dirblkbits, in.dirblkbits);
	assert_int_equal(out.xattr_prefix_count, in.xattr_prefix_count);
	assert_int_equal(out.xattr_prefix_start, in.xattr_prefix_start);
	assert_int_equal(out.packed_nid, in.packed_nid);
	assert_int_equal(out.xattr_filter_reserved, in.xattr_filter_reserved);
	assert_int_equal(out.ishare_xattr_prefix_id, in.ishare_xattr_prefix_id);
	assert_int_equal(out.build_time, in.build_time);
	assert_int_equal(out.rootnid_8b, in.rootnid_8b);
	assert_int_equal(out.metabox_nid, in.metabox_nid);
	/* derived: 48BIT with a non-zero rootnid_8b (spec 2.4) */
	assert_int_equal(out.blksz, 4096);
	assert_int_equal(out.sb_size, 144);
	assert_int_equal(out.root_nid, 0x0000123456789ABCull);
	assert_int_equal(out.blocks, 0x89ABCDEFull | (0xBEEFull << 32));
	free(img);
}

/* Without 48BIT (or with rootnid_8b 0) the 16-bit root and 32-bit block
 * count are used. */
static void test_roundtrip_narrow_root(void **state)
{
	uint8_t *img = calloc(1, 4096);
	struct fmt_super in, out;
	fmt_why why;

	(void)state;
	assert_non_null(img);
	fill_fields(&in);
	in.feature_incompat = EROFS_INCOMPAT_SUPPORTED & ~EROFS_INCOMPAT_48BIT;
	fmt_super_encode(&in, img + 1024);
	reseal(img, 4096);
	assert_int_equal(fmt_super_decode(img, 4096, &out, &why), 0);
	assert_int_equal(out.root_nid, 0xBEEF);
	assert_int_equal(out.blocks, 0x89ABCDEFu);

	in.feature_incompat = EROFS_INCOMPAT_48BIT;
	in.rootnid_8b = 0;
	fmt_super_encode(&in, img + 1024);
	reseal(img, 4096);
	assert_int_equal(fmt_super_decode(img, 4096, &out, &why), 0);
	assert_int_equal(out.root_nid, 0xBEEF);
	assert_int_equal(out.blocks, 0x89ABCDEFu);
	free(img);
}

/* Every legal block size decodes; the checksum span follows it. */
static void test_block_sizes(void **state)
{
	uint8_t *img = calloc(1, 8192);
	unsigned int bits;

	(void)state;
	assert_non_null(img);
	for (bits = 9; bits <= 12; bits++) {
		struct fmt_super in, out;
		fmt_why why;

		memset(img, 0, 8192);
		memset(&in, 0, sizeof(in));
		in.feature_compat = EROFS_COMPAT_SB_CHKSUM;
		in.blkszbits = (uint8_t)bits;
		in.root_nid_16 = 36;
		fmt_super_encode(&in, img + 1024);
		reseal(img, 1u << bits);
		assert_int_equal(fmt_super_decode(img, 8192, &out, &why), 0);
		assert_int_equal(out.blksz, 1u << bits);
	}
	free(img);
}

/* 512-byte blocks: the checksum covers bytes 1024..1535 only. */
static void test_checksum_512(void **state)
{
	uint8_t *img = calloc(1, 4096);
	struct fmt_super in, out;
	fmt_why why;

	(void)state;
	assert_non_null(img);
	memset(&in, 0, sizeof(in));
	in.feature_compat = EROFS_COMPAT_SB_CHKSUM;
	in.blkszbits = 9;
	in.root_nid_16 = 36;
	fmt_super_encode(&in, img + 1024);
	img[1535] = 0x42;
	reseal(img, 512);
	assert_int_equal(fmt_super_decode(img, 4096, &out, &why), 0);
	/* outside the span: still valid */
	img[1536] ^= 0xFF;
	assert_int_equal(fmt_super_decode(img, 4096, &out, &why), 0);
	/* the last covered byte: rejected */
	img[1535] ^= 0x01;
	expect_reject(img, 4096, -EUCLEAN);
	/* a 512-byte-block image only needs 1536 bytes */
	img[1535] ^= 0x01;
	assert_int_equal(fmt_super_decode(img, 1536, &out, &why), 0);
	expect_reject(img, 1535, -EUCLEAN);
	free(img);
}

/* ------------------------------------------------------------ rejects */

static void test_reject_bad_magic(void **state)
{
	uint8_t *img = spec_image(false);

	(void)state;
	img[1024] ^= 0x01;
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EUCLEAN);
	free(img);
}

static void test_reject_blkszbits(void **state)
{
	uint8_t *img = spec_image(false);

	(void)state;
	img[1024 + 12] = 8;
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EOPNOTSUPP);
	img[1024 + 12] = 13;
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EOPNOTSUPP);
	img[1024 + 12] = 0;
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EOPNOTSUPP);
	img[1024 + 12] = 255;
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EOPNOTSUPP);
	free(img);
}

static void test_reject_dirblkbits(void **state)
{
	uint8_t *img = spec_image(false);

	(void)state;
	img[1024 + 90] = 1;
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EOPNOTSUPP);
	free(img);
}

static void test_reject_checksum_mismatch(void **state)
{
	static const size_t spots[] = { 1024, 1032, 1100, 0x4C4, 0x500, 4095 };
	uint8_t *img = spec_image(false);
	struct fmt_super sb;
	fmt_why why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(spots) / sizeof(spots[0]); i++) {
		uint8_t *p = img + spots[i];

		/* (at 1024 the magic itself breaks: also -EUCLEAN) */
		*p ^= 0x10;
		expect_reject(img, SPEC_IMAGE_SIZE, -EUCLEAN);
		*p ^= 0x10;
		assert_int_equal(fmt_super_decode(img, SPEC_IMAGE_SIZE, &sb, &why), 0);
	}
	/* a wrong stored value */
	put_le32(img + 1028, SPEC_IMAGE_CRC ^ 1u);
	expect_reject(img, SPEC_IMAGE_SIZE, -EUCLEAN);
	/* bytes before 1024 are not covered */
	put_le32(img + 1028, SPEC_IMAGE_CRC);
	img[0] = 0xEB;
	img[1023] = 0x55;
	assert_int_equal(fmt_super_decode(img, SPEC_IMAGE_SIZE, &sb, &why), 0);
	/* without SB_CHKSUM a wrong value is ignored */
	put_le32(img + 1028, 0);
	img[1024 + 8] = 0;
	assert_int_equal(fmt_super_decode(img, SPEC_IMAGE_SIZE, &sb, &why), 0);
	free(img);
}

static void test_reject_unknown_incompat(void **state)
{
	uint8_t *img = spec_image(false);
	struct fmt_super sb;
	fmt_why why;

	(void)state;
	put_le32(img + 1024 + 80, 0x200);
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EOPNOTSUPP);
	put_le32(img + 1024 + 80, 0x80000000u);
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EOPNOTSUPP);
	/* unknown compat bits are fine */
	put_le32(img + 1024 + 80, 0);
	put_le32(img + 1024 + 8, EROFS_COMPAT_SB_CHKSUM | 0xFFFF0000u);
	reseal(img, 4096);
	assert_int_equal(fmt_super_decode(img, SPEC_IMAGE_SIZE, &sb, &why), 0);
	free(img);
}

static void test_reject_extslots(void **state)
{
	uint8_t *img = spec_image(false);
	struct fmt_super sb;
	fmt_why why;

	(void)state;
	img[1024 + 13] = 200;
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EUCLEAN);
	/* the largest allowed: 128 + 16 * 184 = 3072 = PAGE_SIZE - 1024 */
	img[1024 + 13] = 184;
	reseal(img, 4096);
	assert_int_equal(fmt_super_decode(img, SPEC_IMAGE_SIZE, &sb, &why), 0);
	assert_int_equal(sb.sb_size, 3072);
	img[1024 + 13] = 185;
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EUCLEAN);
	free(img);
}

static void test_reject_metabox(void **state)
{
	uint8_t *img = spec_image(false);
	struct fmt_super sb;
	fmt_why why;

	(void)state;
	/* METABOX without an extension slot */
	put_le32(img + 1024 + 80, EROFS_INCOMPAT_METABOX);
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EUCLEAN);
	/* with a slot but bit 63 set in metabox_nid */
	img[1024 + 13] = 1;
	put_le64(img + 1024 + 128, (1ull << 63) | 5);
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EUCLEAN);
	/* with a slot and a sane nid */
	put_le64(img + 1024 + 128, 37);
	reseal(img, 4096);
	assert_int_equal(fmt_super_decode(img, SPEC_IMAGE_SIZE, &sb, &why), 0);
	assert_int_equal(sb.metabox_nid, 37);
	free(img);
}

static void test_reject_packed_nid_bit63(void **state)
{
	uint8_t *img = spec_image(false);
	struct fmt_super sb;
	fmt_why why;

	(void)state;
	put_le64(img + 1024 + 96, (1ull << 63) | 40);
	reseal(img, 4096);
	expect_reject(img, SPEC_IMAGE_SIZE, -EUCLEAN);
	put_le64(img + 1024 + 96, (1ull << 62) | 40);
	reseal(img, 4096);
	assert_int_equal(fmt_super_decode(img, SPEC_IMAGE_SIZE, &sb, &why), 0);
	free(img);
}

static void test_reject_short_image(void **state)
{
	uint8_t *img = spec_image(false);
	struct fmt_super sb;
	fmt_why why;

	(void)state;
	expect_reject(img, 0, -EUCLEAN);
	expect_reject(img, 1024, -EUCLEAN);
	expect_reject(img, 1151, -EUCLEAN);
	/* with SB_CHKSUM the whole span is needed */
	expect_reject(img, 1152, -EUCLEAN);
	expect_reject(img, 4095, -EUCLEAN);
	assert_int_equal(fmt_super_decode(img, 4096, &sb, &why), 0);
	/* without it 1152 bytes are enough */
	img[1024 + 8] = 0;
	assert_int_equal(fmt_super_decode(img, 1152, &sb, &why), 0);
	expect_reject(img, 1151, -EUCLEAN);
	/* a superblock with an extension slot needs its 144 bytes */
	img[1024 + 13] = 1;
	expect_reject(img, 1152, -EUCLEAN);
	assert_int_equal(fmt_super_decode(img, 1168, &sb, &why), 0);
	free(img);
}

/* Random superblocks of random lengths: decode never reads past `len`
 * (exact-size heap buffers under ASan) and what it accepts is sane. */
static void test_random_superblocks(void **state)
{
	uint32_t seed = 7;
	unsigned int round, accepted = 0;

	(void)state;
	for (round = 0; round < 3000; round++) {
		size_t len, i;
		uint8_t *img;
		struct fmt_super sb;
		fmt_why why;
		int ret;

		seed = seed * 1103515245u + 12345u;
		len = 1024 + (seed >> 8) % 3200;
		img = malloc(len);
		assert_non_null(img);
		for (i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			img[i] = (uint8_t)(seed >> 16);
		}
		if (len >= 1152) {
			/* mostly plausible: right magic, sane block size */
			put_le32(img + 1024, EROFS_SUPER_MAGIC);
			img[1024 + 12] = (uint8_t)(9 + round % 5);
			if (round % 2)
				img[1024 + 90] = 0;
			if (round % 4 == 1) {
				img[1024 + 13] = (uint8_t)(round % 3);
				put_le32(img + 1024 + 80, get_le32(img + 1024 + 80) & 0x1FF);
			}
			if (round % 8 == 1 && len >= 1024 + fmt_super_checksum_span(1u << img[1036]))
				reseal(img, 1u << img[1036]);
		}
		ret = fmt_super_decode(img, len, &sb, &why);
		if (ret == 0) {
			accepted++;
			assert_int_equal(sb.magic, EROFS_SUPER_MAGIC);
			assert_true(sb.blkszbits >= 9 && sb.blkszbits <= 12);
			assert_int_equal(sb.dirblkbits, 0);
			assert_int_equal(sb.feature_incompat & ~0x1FFu, 0);
			assert_true(1024 + sb.sb_size <= len);
			assert_int_equal(sb.packed_nid >> 63, 0);
		} else {
			assert_true(ret == -EUCLEAN || ret == -EOPNOTSUPP);
		}
		free(img);
	}
	assert_true(accepted > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_check_value),
		cmocka_unit_test(test_crc32c_kernel_seed),
		cmocka_unit_test(test_checksum_span),
		cmocka_unit_test(test_spec_image_checksum),
		cmocka_unit_test(test_spec_variant_checksum),
		cmocka_unit_test(test_spec_image_decode),
		cmocka_unit_test(test_spec_image_reencode),
		cmocka_unit_test(test_encode_offsets),
		cmocka_unit_test(test_roundtrip_all_fields),
		cmocka_unit_test(test_roundtrip_narrow_root),
		cmocka_unit_test(test_block_sizes),
		cmocka_unit_test(test_checksum_512),
		cmocka_unit_test(test_reject_bad_magic),
		cmocka_unit_test(test_reject_blkszbits),
		cmocka_unit_test(test_reject_dirblkbits),
		cmocka_unit_test(test_reject_checksum_mismatch),
		cmocka_unit_test(test_reject_unknown_incompat),
		cmocka_unit_test(test_reject_extslots),
		cmocka_unit_test(test_reject_metabox),
		cmocka_unit_test(test_reject_packed_nid_bit63),
		cmocka_unit_test(test_reject_short_image),
		cmocka_unit_test(test_random_superblocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
