/* Compressed-file metadata (spec 6.2-6.7, 7.2): map header, full and
 * compact indexes, compression configuration records. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/zindex.h"

/* ------------------------------------------------------------ full index */

static void expect_full(const uint8_t *p, uint8_t type, bool partial,
			uint16_t cofs, uint32_t blkaddr, uint16_t d0, uint16_t d1)
{
	struct fmt_lcluster lc;

	memset(&lc, 0xEE, sizeof(lc));
	fmt_zindex_full_decode(p, &lc);
	assert_int_equal(lc.type, type);
	assert_int_equal(lc.partial, partial);
	assert_int_equal(lc.clusterofs, cofs);
	if (type == Z_LCLUSTER_NONHEAD) {
		assert_int_equal(lc.delta[0], d0);
		assert_int_equal(lc.delta[1], d1);
	} else {
		assert_int_equal(lc.blkaddr, blkaddr);
	}
}

/* Spec 6.5 / A.2 entries. */
static void test_full_decode_spec(void **state)
{
	static const uint8_t e[5][8] = {
		{ 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00 },
		{ 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00 },
		{ 0x01, 0x00, 0x87, 0x02, 0x02, 0x00, 0x00, 0x00 },
		{ 0x02, 0x00, 0x87, 0x02, 0x01, 0x00, 0x01, 0x00 },
		{ 0x01, 0x00, 0xE8, 0x04, 0x03, 0x00, 0x00, 0x00 },
	};

	(void)state;
	expect_full(e[0], Z_LCLUSTER_HEAD1, false, 0, 1, 0, 0);
	expect_full(e[1], Z_LCLUSTER_NONHEAD, false, 0, 0, 1, 1);
	expect_full(e[2], Z_LCLUSTER_HEAD1, false, 647, 2, 0, 0);
	expect_full(e[3], Z_LCLUSTER_NONHEAD, false, 647, 0, 1, 1);
	expect_full(e[4], Z_LCLUSTER_HEAD1, false, 1256, 3, 0, 0);
}

static void test_full_decode_flags(void **state)
{
	static const uint8_t partial[8] = { 0x01, 0x80, 0x10, 0x00, 0x78, 0x56, 0x34, 0x12 };
	static const uint8_t plain[8] = { 0x00, 0x00, 0xFF, 0x0F, 0x00, 0x00, 0x00, 0x00 };
	static const uint8_t head2[8] = { 0x03, 0x00, 0x01, 0x00, 0xFF, 0xFF, 0xFF, 0xFF };
	static const uint8_t cblk[8] = { 0x02, 0x00, 0x00, 0x00, 0x04, 0x08, 0x07, 0x00 };
	static const uint8_t far[8] = { 0x02, 0x00, 0x00, 0x00, 0xFF, 0x07, 0xFF, 0x07 };

	(void)state;
	expect_full(partial, Z_LCLUSTER_HEAD1, true, 16, 0x12345678u, 0, 0);
	expect_full(plain, Z_LCLUSTER_PLAIN, false, 4095, 0, 0, 0);
	expect_full(head2, Z_LCLUSTER_HEAD2, false, 1, 0xFFFFFFFFu, 0, 0);
	expect_full(cblk, Z_LCLUSTER_NONHEAD, false, 0, 0, Z_CBLKCNT | 4, 7);
	expect_full(far, Z_LCLUSTER_NONHEAD, false, 0, 0, Z_DELTA_MAX, Z_DELTA_MAX);
}

static void test_full_encode(void **state)
{
	static const uint8_t head[8] = { 0x01, 0x00, 0x87, 0x02, 0x02, 0x00, 0x00, 0x00 };
	static const uint8_t nonhead[8] = { 0x02, 0x00, 0x87, 0x02, 0x01, 0x00, 0x01, 0x00 };
	static const uint8_t part[8] = { 0x03, 0x80, 0x34, 0x12, 0xEF, 0xCD, 0xAB, 0x89 };
	struct fmt_lcluster lc, back;
	uint8_t out[8];

	(void)state;
	memset(&lc, 0, sizeof(lc));
	lc.type = Z_LCLUSTER_HEAD1;
	lc.clusterofs = 647;
	lc.blkaddr = 2;
	fmt_zindex_full_encode(out, &lc);
	assert_memory_equal(out, head, 8);

	memset(&lc, 0, sizeof(lc));
	lc.type = Z_LCLUSTER_NONHEAD;
	lc.clusterofs = 647;
	lc.delta[0] = 1;
	lc.delta[1] = 1;
	fmt_zindex_full_encode(out, &lc);
	assert_memory_equal(out, nonhead, 8);

	memset(&lc, 0, sizeof(lc));
	lc.type = Z_LCLUSTER_HEAD2;
	lc.partial = true;
	lc.clusterofs = 0x1234;
	lc.blkaddr = 0x89ABCDEFu;
	fmt_zindex_full_encode(out, &lc);
	assert_memory_equal(out, part, 8);
	fmt_zindex_full_decode(out, &back);
	assert_int_equal(back.type, Z_LCLUSTER_HEAD2);
	assert_true(back.partial);
	assert_int_equal(back.clusterofs, 0x1234);
	assert_int_equal(back.blkaddr, 0x89ABCDEFu);

	/* CBLKCNT roundtrip */
	memset(&lc, 0, sizeof(lc));
	lc.type = Z_LCLUSTER_NONHEAD;
	lc.delta[0] = Z_CBLKCNT | 256;
	lc.delta[1] = 2047;
	fmt_zindex_full_encode(out, &lc);
	fmt_zindex_full_decode(out, &back);
	assert_int_equal(back.type, Z_LCLUSTER_NONHEAD);
	assert_false(back.partial);
	assert_int_equal(back.delta[0], Z_CBLKCNT | 256);
	assert_int_equal(back.delta[0] & Z_CBLKCNT_MASK, 256);
	assert_int_equal(back.delta[1], 2047);
}

/* ------------------------------------------------------------ compact */

/* Spec 6.7 / A.3: ebase 0x528 -> A = 6; 150000 bytes -> T = 37, B = 16. */
static void test_compact_layout_spec(void **state)
{
	struct fmt_compact_layout l;
	unsigned int unit = 0;

	(void)state;
	fmt_compact_layout_init(&l, 0x528, 37, true);
	assert_int_equal(l.ebase, 0x528);
	assert_int_equal(l.total, 37);
	assert_int_equal(l.initial_4b, 6);
	assert_int_equal(l.middle_2b, 16);
	/* three 4-byte packs at 0x528, 0x530, 0x538 */
	assert_int_equal(fmt_compact_pos(&l, 0, &unit), 0x528);
	assert_int_equal(unit, 4);
	assert_int_equal(fmt_compact_pos(&l, 1, &unit), 0x52C);
	assert_int_equal(fmt_compact_pos(&l, 2, &unit), 0x530);
	assert_int_equal(fmt_compact_pos(&l, 5, &unit), 0x53C);
	assert_int_equal(unit, 4);
	/* then 2-byte packs from 0x540 (32-byte aligned) for 16 lclusters */
	assert_int_equal(fmt_compact_pos(&l, 6, &unit), 0x540);
	assert_int_equal(unit, 2);
	assert_int_equal(fmt_compact_pos(&l, 21, &unit), 0x55E);
	assert_int_equal(unit, 2);
	/* then 4-byte packs for the remaining 15 */
	assert_int_equal(fmt_compact_pos(&l, 22, &unit), 0x560);
	assert_int_equal(unit, 4);
	assert_int_equal(fmt_compact_pos(&l, 36, &unit), 0x598);
	assert_int_equal(unit, 4);
	/* 24 + 32 + 16 * 4 (15 items, padded to 16) */
	assert_int_equal(fmt_compact_size(&l), 120);

	/* without COMPACTED_2B everything is 4-byte */
	fmt_compact_layout_init(&l, 0x528, 37, false);
	assert_int_equal(l.initial_4b, 6);
	assert_int_equal(l.middle_2b, 0);
	assert_int_equal(fmt_compact_pos(&l, 6, &unit), 0x540);
	assert_int_equal(unit, 4);
	assert_int_equal(fmt_compact_pos(&l, 36, &unit), 0x528 + 4 * 36);
	assert_int_equal(fmt_compact_size(&l), 4 * 38);
}

static void test_compact_initial_4b(void **state)
{
	struct fmt_compact_layout l;

	(void)state;
	fmt_compact_layout_init(&l, 0x520, 100, true);
	assert_int_equal(l.initial_4b, 0);
	assert_int_equal(l.middle_2b, 96);
	fmt_compact_layout_init(&l, 0x528, 100, true);
	assert_int_equal(l.initial_4b, 6);
	fmt_compact_layout_init(&l, 0x530, 100, true);
	assert_int_equal(l.initial_4b, 4);
	fmt_compact_layout_init(&l, 0x538, 100, true);
	assert_int_equal(l.initial_4b, 2);
	assert_int_equal(l.middle_2b, 96);

	/* fewer than 16 after A: no 2-byte region */
	fmt_compact_layout_init(&l, 0x528, 21, true);
	assert_int_equal(l.middle_2b, 0);
	fmt_compact_layout_init(&l, 0x528, 22, true);
	assert_int_equal(l.middle_2b, 16);
	/* A >= T: all 4-byte, odd count padded (spec A.5: one pack) */
	fmt_compact_layout_init(&l, 0x528, 1, true);
	assert_int_equal(l.middle_2b, 0);
	assert_int_equal(fmt_compact_size(&l), 8);
	fmt_compact_layout_init(&l, 0x528, 3, true);
	assert_int_equal(fmt_compact_size(&l), 16);
	fmt_compact_layout_init(&l, 0x528, 6, true);
	assert_int_equal(l.middle_2b, 0);
	assert_int_equal(fmt_compact_size(&l), 24);
	fmt_compact_layout_init(&l, 0x528, 0, true);
	assert_int_equal(fmt_compact_size(&l), 0);
}

/* For many layouts: each lcluster's pack is aligned to its size in
 * absolute terms, positions never overlap, and the size ends exactly
 * at the end of the last pack. */
static void test_compact_layout_properties(void **state)
{
	uint64_t ebase, t;
	int twob;

	(void)state;
	for (ebase = 0x1000 + 8; ebase <= 0x1000 + 64; ebase += 8) {
		for (t = 0; t < 120; t++) {
			for (twob = 0; twob <= 1; twob++) {
				struct fmt_compact_layout l;
				uint64_t n, prev_end = ebase, end = ebase;

				fmt_compact_layout_init(&l, ebase, t, twob);
				assert_true(l.initial_4b <= 6 && l.initial_4b % 2 == 0);
				assert_int_equal(l.middle_2b % 16, 0);
				assert_true(l.middle_2b <= t);
				for (n = 0; n < t; n++) {
					unsigned int unit = 0;
					uint64_t pos = fmt_compact_pos(&l, n, &unit);
					unsigned int ps = fmt_compact_packsize(unit);

					assert_true(unit == 2 || unit == 4);
					assert_int_equal(pos, prev_end);
					assert_int_equal(pos % unit, 0);
					prev_end = pos + unit;
					end = pos / ps * ps + ps;
					if (unit == 2) {
						/* 2-byte packs start 32-byte aligned */
						assert_true(twob);
						assert_int_equal((ebase + 4 * l.initial_4b) % 32, 0);
					}
				}
				assert_int_equal(fmt_compact_size(&l), end - ebase);
			}
		}
	}
}

static void expect_item(const uint8_t *pack, unsigned int unit, unsigned int i,
			unsigned int lobits, uint8_t type, uint16_t lo)
{
	uint8_t t = 0xEE;
	uint16_t v = 0xEEEE;

	fmt_compact_item(pack, unit, i, lobits, &t, &v);
	assert_int_equal(t, type);
	assert_int_equal(v, lo);
}

/* The worked packs of spec 6.7, A.3, A.4 and A.5. */
static void test_compact_item_spec(void **state)
{
	static const uint8_t p1[8] = { 0x00, 0x10, 0x01, 0x20, 0x00, 0x00, 0x00, 0x00 };
	static const uint8_t p2[8] = { 0x87, 0x12, 0x01, 0x20, 0x01, 0x00, 0x00, 0x00 };
	static const uint8_t p3[8] = { 0xE8, 0x14, 0x01, 0x20, 0x02, 0x00, 0x00, 0x00 };
	static const uint8_t b1[8] = { 0x00, 0x10, 0x04, 0x28, 0x01, 0x00, 0x00, 0x00 };
	static const uint8_t b2[8] = { 0x02, 0x20, 0x07, 0x20, 0x05, 0x00, 0x00, 0x00 };
	static const uint8_t t1[8] = { 0x00, 0x10, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00 };

	(void)state;
	expect_item(p1, 4, 0, 12, Z_LCLUSTER_HEAD1, 0);
	expect_item(p1, 4, 1, 12, Z_LCLUSTER_NONHEAD, 1);
	assert_int_equal(get_le32(p1 + 4), 0);
	expect_item(p2, 4, 0, 12, Z_LCLUSTER_HEAD1, 647);
	expect_item(p2, 4, 1, 12, Z_LCLUSTER_NONHEAD, 1);
	expect_item(p3, 4, 0, 12, Z_LCLUSTER_HEAD1, 1256);
	/* big pclusters: CBLKCNT 4 */
	expect_item(b1, 4, 0, 12, Z_LCLUSTER_HEAD1, 0);
	expect_item(b1, 4, 1, 12, Z_LCLUSTER_NONHEAD, Z_CBLKCNT | 4);
	expect_item(b2, 4, 0, 12, Z_LCLUSTER_NONHEAD, 2);
	expect_item(b2, 4, 1, 12, Z_LCLUSTER_NONHEAD, 7);
	assert_int_equal(get_le32(b2 + 4), 5);
	/* ztailpacking: HEAD1 then the zero padding item (PLAIN, 0) */
	expect_item(t1, 4, 0, 12, Z_LCLUSTER_HEAD1, 0);
	expect_item(t1, 4, 1, 12, Z_LCLUSTER_PLAIN, 0);
	assert_int_equal(get_le32(t1 + 4), 0x11);
}

/* An independent bit writer: item i at bits [i*bits, (i+1)*bits), the
 * pack read as a little-endian bit string. */
static void ref_put_bits(uint8_t *pack, unsigned int pos, unsigned int bits,
			 uint32_t v)
{
	unsigned int b;

	for (b = 0; b < bits; b++) {
		unsigned int at = pos + b;

		if (v & (1u << b))
			pack[at / 8] |= (uint8_t)(1u << (at % 8));
		else
			pack[at / 8] &= (uint8_t)~(1u << (at % 8));
	}
}

static uint32_t rng_next(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void test_compact_set_item_2b(void **state)
{
	uint32_t seed = 12345;
	int round;

	(void)state;
	for (round = 0; round < 200; round++) {
		uint8_t pack[32], ref[32];
		uint8_t types[16];
		uint16_t los[16];
		unsigned int i;

		memset(pack, 0, sizeof(pack));
		memset(ref, 0, sizeof(ref));
		put_le32(pack + 28, 0xA1B2C3D4u);
		put_le32(ref + 28, 0xA1B2C3D4u);
		for (i = 0; i < 16; i++) {
			types[i] = (uint8_t)(rng_next(&seed) & 3);
			los[i] = (uint16_t)(rng_next(&seed) & 0xFFF);
			fmt_compact_set_item(pack, 2, i, 12, types[i], los[i]);
			ref_put_bits(ref, i * 14, 14,
				     (uint32_t)los[i] | ((uint32_t)types[i] << 12));
		}
		assert_memory_equal(pack, ref, 32);
		assert_int_equal(get_le32(pack + 28), 0xA1B2C3D4u);
		for (i = 0; i < 16; i++)
			expect_item(pack, 2, i, 12, types[i], los[i]);
		/* overwriting one item leaves its neighbours alone */
		fmt_compact_set_item(pack, 2, 7, 12, Z_LCLUSTER_NONHEAD, 0x800 | 9);
		expect_item(pack, 2, 6, 12, types[6], los[6]);
		expect_item(pack, 2, 7, 12, Z_LCLUSTER_NONHEAD, 0x809);
		expect_item(pack, 2, 8, 12, types[8], los[8]);
		assert_int_equal(get_le32(pack + 28), 0xA1B2C3D4u);
	}
}

static void test_compact_set_item_4b(void **state)
{
	uint8_t pack[8];
	static const uint8_t spec[8] = { 0x00, 0x10, 0x04, 0x28, 0x01, 0x00, 0x00, 0x00 };
	uint32_t seed = 99;
	int round;

	(void)state;
	/* reproduce the A.4 pack */
	memset(pack, 0, sizeof(pack));
	put_le32(pack + 4, 1);
	fmt_compact_set_item(pack, 4, 0, 12, Z_LCLUSTER_HEAD1, 0);
	fmt_compact_set_item(pack, 4, 1, 12, Z_LCLUSTER_NONHEAD, Z_CBLKCNT | 4);
	assert_memory_equal(pack, spec, 8);

	for (round = 0; round < 200; round++) {
		uint8_t ref[8];
		unsigned int lobits = round % 2 ? 12 : 14;
		uint8_t t0 = (uint8_t)(rng_next(&seed) & 3), t1 = (uint8_t)(rng_next(&seed) & 3);
		uint16_t l0 = (uint16_t)(rng_next(&seed) & ((1u << lobits) - 1));
		uint16_t l1 = (uint16_t)(rng_next(&seed) & ((1u << lobits) - 1));

		memset(pack, 0, sizeof(pack));
		memset(ref, 0, sizeof(ref));
		put_le32(pack + 4, 0xFFFFFFFFu);
		put_le32(ref + 4, 0xFFFFFFFFu);
		fmt_compact_set_item(pack, 4, 0, lobits, t0, l0);
		fmt_compact_set_item(pack, 4, 1, lobits, t1, l1);
		ref_put_bits(ref, 0, 16, (uint32_t)l0 | ((uint32_t)t0 << lobits));
		ref_put_bits(ref, 16, 16, (uint32_t)l1 | ((uint32_t)t1 << lobits));
		assert_memory_equal(pack, ref, 8);
		expect_item(pack, 4, 0, lobits, t0, l0);
		expect_item(pack, 4, 1, lobits, t1, l1);
		assert_int_equal(get_le32(pack + 4), 0xFFFFFFFFu);
	}
}

static void test_compact_geometry(void **state)
{
	(void)state;
	assert_int_equal(fmt_compact_vcnt(4), 2);
	assert_int_equal(fmt_compact_vcnt(2), 16);
	assert_int_equal(fmt_compact_encodebits(4), 16);
	assert_int_equal(fmt_compact_encodebits(2), 14);
	assert_int_equal(fmt_compact_packsize(4), 8);
	assert_int_equal(fmt_compact_packsize(2), 32);
}

/* ------------------------------------------------------------ header */

static void test_header_decode(void **state)
{
	static const uint8_t a3[8] = { 0, 0, 0, 0, 0x01, 0x00, 0x00, 0x00 };
	static const uint8_t a5[8] = { 0, 0, 0x21, 0x06, 0x09, 0x00, 0x00, 0x00 };
	static const uint8_t a6[8] = { 0, 0, 0, 0, 0x31, 0x00, 0x00, 0x00 };
	static const uint8_t whole[8] = { 0x04, 0x01, 0, 0, 0, 0, 0, 0x80 };
	static const uint8_t whole_big[8] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x80 };
	static const uint8_t algs[8] = { 0x78, 0x56, 0x34, 0x12, 0x07, 0x00, 0x31, 0x02 };
	struct fmt_zmap_header h;

	(void)state;
	fmt_zmap_header_decode(a3, &h);
	assert_int_equal(h.advise, Z_ADVISE_COMPACTED_2B);
	assert_int_equal(h.algorithm_type, 0);
	assert_int_equal(h.clusterbits, 0);
	assert_false(h.whole_fragment);

	fmt_zmap_header_decode(a5, &h);
	assert_int_equal(h.advise, Z_ADVISE_INLINE_PCLUSTER | Z_ADVISE_COMPACTED_2B);
	assert_int_equal(h.idata_size, 1569);
	assert_false(h.whole_fragment);

	fmt_zmap_header_decode(a6, &h);
	assert_int_equal(h.advise, Z_ADVISE_COMPACTED_2B | Z_ADVISE_INTERLACED_PCLUSTER |
			 Z_ADVISE_FRAGMENT_PCLUSTER);
	assert_int_equal(h.fragment_off_lo, 0);

	fmt_zmap_header_decode(whole, &h);
	assert_true(h.whole_fragment);
	assert_int_equal(h.whole_fragment_off, 260);

	fmt_zmap_header_decode(whole_big, &h);
	assert_true(h.whole_fragment);
	assert_int_equal(h.whole_fragment_off, 0x0007060504030201ull);

	fmt_zmap_header_decode(algs, &h);
	assert_int_equal(h.fragment_off_lo, 0x12345678u);
	assert_int_equal(h.idata_size, 0x1234);
	assert_int_equal(h.advise, 7);
	assert_int_equal(h.algorithm_type, 0x31);
	assert_int_equal(h.algorithm_type & 15, 1);
	assert_int_equal(h.algorithm_type >> 4, 3);
	assert_int_equal(h.clusterbits & 0x0F, 2);
	assert_false(h.whole_fragment);
}

static void test_header_extent_count(void **state)
{
	static const uint8_t p[8] = { 0x10, 0x00, 0x00, 0x00, 0x0B, 0x00, 0x01, 0x00 };
	struct fmt_zmap_header h;

	(void)state;
	fmt_zmap_header_decode(p, &h);
	assert_int_equal(h.extent_count, 0x100000010ull);
}

static void test_header_encode(void **state)
{
	static const uint8_t a3[8] = { 0, 0, 0, 0, 0x01, 0x00, 0x00, 0x00 };
	static const uint8_t a5[8] = { 0, 0, 0x21, 0x06, 0x09, 0x00, 0x00, 0x00 };
	static const uint8_t frag[8] = { 0x78, 0x56, 0x34, 0x12, 0x31, 0x00, 0x03, 0x00 };
	uint8_t out[8];
	struct fmt_zmap_header h;

	(void)state;
	memset(out, 0xEE, sizeof(out));
	fmt_zmap_header_encode(out, Z_ADVISE_COMPACTED_2B, 0, 0);
	assert_memory_equal(out, a3, 8);
	memset(out, 0xEE, sizeof(out));
	fmt_zmap_header_encode(out, Z_ADVISE_INLINE_PCLUSTER | Z_ADVISE_COMPACTED_2B,
			       0, 1569);
	assert_memory_equal(out, a5, 8);
	memset(out, 0xEE, sizeof(out));
	fmt_zmap_header_encode(out, Z_ADVISE_FRAGMENT_PCLUSTER |
			       Z_ADVISE_INTERLACED_PCLUSTER | Z_ADVISE_COMPACTED_2B,
			       3, 0x12345678u);
	assert_memory_equal(out, frag, 8);
	fmt_zmap_header_decode(out, &h);
	assert_int_equal(h.fragment_off_lo, 0x12345678u);
	assert_int_equal(h.algorithm_type, 3);
	/* a value without INLINE/FRAGMENT advise is not stored */
	memset(out, 0xEE, sizeof(out));
	fmt_zmap_header_encode(out, Z_ADVISE_BIG_PCLUSTER_1 | Z_ADVISE_BIG_PCLUSTER_2,
			       1, 0xFFFF);
	assert_int_equal(get_le32(out), 0);
	assert_int_equal(get_le16(out + 4), 6);
	assert_int_equal(out[6], 1);
	assert_int_equal(out[7], 0);
}

/* Encoded extents (spec 6.14), bytes worked out by hand: a 4-block
 * deflate pcluster, a plain block, a partial reference and a fragment
 * tail past 4 GiB in the packed inode. */
static void test_extents_encode(void **state)
{
	static const struct fmt_zextent ext[] = {
		{ .la = 0, .blkaddr = 10, .blocks = 4 },
		{ .la = 70000, .blkaddr = 14, .blocks = 1, .plain = true },
		{ .la = 74000, .blkaddr = 0x100001, .blocks = 2, .partial = true },
		{ .la = 80000, .blkaddr = 99, .blocks = 1, .tail = true },
	};
	static const uint8_t want[4 * 16] = {
		0x00, 0x40, 0x00, 0x30, 0x00, 0xA0, 0x00, 0x00,   /* plen 16 KiB, fmt 3 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* lstart 0 */
		0x00, 0x10, 0x00, 0x00, 0x00, 0xE0, 0x00, 0x00,   /* plain: fmt 0 */
		0x00, 0x00, 0x00, 0x00, 0x70, 0x11, 0x01, 0x00,   /* lstart 70000 */
		0x00, 0x20, 0x00, 0x38, 0x00, 0x10, 0x00, 0x00,   /* partial, 0x100001 << 12 */
		0x01, 0x00, 0x00, 0x00, 0x10, 0x21, 0x01, 0x00,   /* ... = 2^32 + 0x1000 */
		0x89, 0x67, 0x45, 0x23, 0x01, 0x00, 0x00, 0x00,   /* fragment 0x123456789 */
		0x00, 0x00, 0x00, 0x00, 0x80, 0x38, 0x01, 0x00,   /* lstart 80000 */
	};
	static const uint8_t header[8] = { 4, 0, 0, 0, 0x25, 0x00, 0, 0 };
	uint8_t out[sizeof(want)], h[8];
	struct fmt_zmap_header d;

	(void)state;
	memset(out, 0xEE, sizeof(out));
	fmt_zindex_encode_extents(ext, 4, 12, 2, 0x123456789ull, out);
	assert_memory_equal(out, want, sizeof(want));
	fmt_zmap_header_encode_extents(h, Z_ADVISE_EXTENTS | Z_ADVISE_FRAGMENT_PCLUSTER |
				       Z_ADVISE_EXTRECSZ_16, 4);
	assert_memory_equal(h, header, 8);
	fmt_zmap_header_encode_extents(h, Z_ADVISE_EXTENTS, 0x0000ABCD00000004ull);
	fmt_zmap_header_decode(h, &d);
	assert_int_equal(d.extent_count, 0x0000ABCD00000004ull);
	assert_int_equal(d.advise, Z_ADVISE_EXTENTS);
}

/* ------------------------------------------------------------ configs */

static int zdecode(unsigned int alg, const uint8_t *p, size_t len,
		   uint32_t blksz, struct fmt_zconfig *cfg)
{
	fmt_why why;
	int ret;

	memset(&why, 0, sizeof(why));
	ret = fmt_zconfig_decode(alg, p, len, blksz, cfg, &why);
	if (ret)
		assert_true(strlen(why.text) > 0);
	return ret;
}

static void test_zconfig_min_size(void **state)
{
	(void)state;
	assert_int_equal(fmt_zconfig_min_size(EROFS_ALG_LZ4), 14);
	assert_int_equal(fmt_zconfig_min_size(EROFS_ALG_LZMA), 14);
	assert_int_equal(fmt_zconfig_min_size(EROFS_ALG_DEFLATE), 6);
	assert_int_equal(fmt_zconfig_min_size(EROFS_ALG_ZSTD), 6);
	assert_int_equal(fmt_zconfig_min_size(4), 0);
}

/* The records mkfs wrote (spec 7.2). */
static void test_zconfig_observed(void **state)
{
	static const uint8_t lz4[14] = { 0xFF, 0xFF, 0x04, 0x00 };
	static const uint8_t lzma[14] = { 0x00, 0x80, 0x00, 0x00 };
	static const uint8_t deflate[6] = { 0x0F, 0x00 };
	static const uint8_t zstd[6] = { 0x00, 0x05 };
	struct fmt_zconfig cfg;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(zdecode(EROFS_ALG_LZ4, lz4, 14, 4096, &cfg), 0);
	assert_int_equal(cfg.lz4_max_distance, 65535);
	assert_int_equal(cfg.lz4_max_pclusterblks, 4);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, lzma, 14, 4096, &cfg), 0);
	assert_int_equal(cfg.lzma_dict_size, 32768);
	assert_int_equal(zdecode(EROFS_ALG_DEFLATE, deflate, 6, 4096, &cfg), 0);
	assert_int_equal(cfg.deflate_windowbits, 15);
	assert_int_equal(zdecode(EROFS_ALG_ZSTD, zstd, 6, 4096, &cfg), 0);
	assert_int_equal(cfg.zstd_windowlog, 15);
	/* the earlier values stay (one struct collects all records) */
	assert_int_equal(cfg.lz4_max_pclusterblks, 4);
	assert_int_equal(cfg.lzma_dict_size, 32768);
}

static void test_zconfig_short_and_long(void **state)
{
	uint8_t p[32];
	struct fmt_zconfig cfg;

	(void)state;
	memset(p, 0, sizeof(p));
	put_le32(p, 65536);   /* a valid lzma dict; lz4 distance 0 */
	assert_int_equal(zdecode(EROFS_ALG_LZ4, p, 13, 4096, &cfg), -EUCLEAN);
	assert_int_equal(zdecode(EROFS_ALG_LZ4, p, 0, 4096, &cfg), -EUCLEAN);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, p, 13, 4096, &cfg), -EUCLEAN);
	assert_int_equal(zdecode(EROFS_ALG_DEFLATE, p, 5, 4096, &cfg), -EUCLEAN);
	assert_int_equal(zdecode(EROFS_ALG_ZSTD, p, 5, 4096, &cfg), -EUCLEAN);
	/* longer payloads are accepted; the extra bytes are ignored */
	memset(p + 14, 0xAB, sizeof(p) - 14);
	assert_int_equal(zdecode(EROFS_ALG_LZ4, p, 32, 4096, &cfg), 0);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, p, 32, 4096, &cfg), 0);
	assert_int_equal(cfg.lzma_dict_size, 65536);
	p[0] = 12;
	assert_int_equal(zdecode(EROFS_ALG_DEFLATE, p, 32, 4096, &cfg), 0);
	p[0] = 0;
	p[1] = 3;
	assert_int_equal(zdecode(EROFS_ALG_ZSTD, p, 32, 4096, &cfg), 0);
	assert_int_equal(cfg.zstd_windowlog, 13);
	/* unknown algorithm */
	assert_int_equal(zdecode(4, p, 32, 4096, &cfg), -EOPNOTSUPP);
	assert_int_equal(zdecode(15, p, 32, 4096, &cfg), -EOPNOTSUPP);
}

static void test_zconfig_lzma(void **state)
{
	uint8_t p[14];
	struct fmt_zconfig cfg;

	(void)state;
	memset(p, 0, sizeof(p));
	put_le32(p, 4095);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, p, 14, 4096, &cfg), -EUCLEAN);
	put_le32(p, 0);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, p, 14, 4096, &cfg), -EUCLEAN);
	put_le32(p, 4096);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, p, 14, 4096, &cfg), 0);
	assert_int_equal(cfg.lzma_dict_size, 4096);
	put_le32(p, 8u << 20);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, p, 14, 4096, &cfg), 0);
	assert_int_equal(cfg.lzma_dict_size, 8u << 20);
	put_le32(p, (8u << 20) + 1);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, p, 14, 4096, &cfg), -EUCLEAN);
	put_le32(p, 0xFFFFFFFFu);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, p, 14, 4096, &cfg), -EUCLEAN);
	/* format must be 0 */
	put_le32(p, 32768);
	put_le16(p + 4, 1);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, p, 14, 4096, &cfg), -EOPNOTSUPP);
	put_le16(p + 4, 0x100);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, p, 14, 4096, &cfg), -EOPNOTSUPP);
}

static void test_zconfig_zstd(void **state)
{
	uint8_t p[6] = { 0 };
	struct fmt_zconfig cfg;

	(void)state;
	p[1] = 10;
	assert_int_equal(zdecode(EROFS_ALG_ZSTD, p, 6, 4096, &cfg), 0);
	assert_int_equal(cfg.zstd_windowlog, 20);
	p[1] = 11;
	assert_int_equal(zdecode(EROFS_ALG_ZSTD, p, 6, 4096, &cfg), -EUCLEAN);
	p[1] = 255;
	assert_int_equal(zdecode(EROFS_ALG_ZSTD, p, 6, 4096, &cfg), -EUCLEAN);
	p[1] = 0;
	assert_int_equal(zdecode(EROFS_ALG_ZSTD, p, 6, 4096, &cfg), 0);
	assert_int_equal(cfg.zstd_windowlog, 10);
	p[0] = 1;
	assert_int_equal(zdecode(EROFS_ALG_ZSTD, p, 6, 4096, &cfg), -EOPNOTSUPP);
}

static void test_zconfig_deflate(void **state)
{
	uint8_t p[6] = { 0 };
	struct fmt_zconfig cfg;

	(void)state;
	p[0] = 15;
	assert_int_equal(zdecode(EROFS_ALG_DEFLATE, p, 6, 4096, &cfg), 0);
	p[0] = 8;
	assert_int_equal(zdecode(EROFS_ALG_DEFLATE, p, 6, 4096, &cfg), 0);
	assert_int_equal(cfg.deflate_windowbits, 8);
	p[0] = 16;
	assert_int_equal(zdecode(EROFS_ALG_DEFLATE, p, 6, 4096, &cfg), -EUCLEAN);
	p[0] = 0xFF;
	assert_int_equal(zdecode(EROFS_ALG_DEFLATE, p, 6, 4096, &cfg), -EUCLEAN);
}

static void test_zconfig_lz4_pclusterblks(void **state)
{
	uint8_t p[14] = { 0 };
	struct fmt_zconfig cfg;

	(void)state;
	put_le16(p + 2, 256);   /* 1 MiB of 4 KiB blocks */
	assert_int_equal(zdecode(EROFS_ALG_LZ4, p, 14, 4096, &cfg), 0);
	assert_int_equal(cfg.lz4_max_pclusterblks, 256);
	put_le16(p + 2, 257);
	assert_int_equal(zdecode(EROFS_ALG_LZ4, p, 14, 4096, &cfg), -EUCLEAN);
	/* 512-byte blocks allow 2048 */
	put_le16(p + 2, 2048);
	assert_int_equal(zdecode(EROFS_ALG_LZ4, p, 14, 512, &cfg), 0);
	put_le16(p + 2, 2049);
	assert_int_equal(zdecode(EROFS_ALG_LZ4, p, 14, 512, &cfg), -EUCLEAN);
	put_le16(p + 2, 0xFFFF);
	assert_int_equal(zdecode(EROFS_ALG_LZ4, p, 14, 4096, &cfg), -EUCLEAN);
	/* 0 is accepted (treated as one block by readers) */
	put_le16(p + 2, 0);
	assert_int_equal(zdecode(EROFS_ALG_LZ4, p, 14, 4096, &cfg), 0);
}

static void test_zconfig_encode(void **state)
{
	static const uint8_t lz4[16] = { 0x0E, 0x00, 0xFF, 0xFF, 0x04, 0x00 };
	static const uint8_t lzma[16] = { 0x0E, 0x00, 0x00, 0x80, 0x00, 0x00 };
	static const uint8_t deflate[8] = { 0x06, 0x00, 0x0F };
	static const uint8_t zstd[8] = { 0x06, 0x00, 0x00, 0x05 };
	struct fmt_zconfig in, out;
	uint8_t buf[32];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.lz4_max_distance = 65535;
	in.lz4_max_pclusterblks = 4;
	in.lzma_dict_size = 32768;
	in.deflate_windowbits = 15;
	in.zstd_windowlog = 15;

	memset(buf, 0xEE, sizeof(buf));
	assert_int_equal(fmt_zconfig_encode(EROFS_ALG_LZ4, &in, buf), 16);
	assert_memory_equal(buf, lz4, 16);
	memset(&out, 0, sizeof(out));
	assert_int_equal(zdecode(EROFS_ALG_LZ4, buf + 2, get_le16(buf), 4096, &out), 0);
	assert_int_equal(out.lz4_max_distance, 65535);
	assert_int_equal(out.lz4_max_pclusterblks, 4);

	memset(buf, 0xEE, sizeof(buf));
	assert_int_equal(fmt_zconfig_encode(EROFS_ALG_LZMA, &in, buf), 16);
	assert_memory_equal(buf, lzma, 16);
	assert_int_equal(zdecode(EROFS_ALG_LZMA, buf + 2, get_le16(buf), 4096, &out), 0);
	assert_int_equal(out.lzma_dict_size, 32768);

	memset(buf, 0xEE, sizeof(buf));
	assert_int_equal(fmt_zconfig_encode(EROFS_ALG_DEFLATE, &in, buf), 8);
	assert_memory_equal(buf, deflate, 8);
	assert_int_equal(zdecode(EROFS_ALG_DEFLATE, buf + 2, get_le16(buf), 4096, &out), 0);
	assert_int_equal(out.deflate_windowbits, 15);

	memset(buf, 0xEE, sizeof(buf));
	assert_int_equal(fmt_zconfig_encode(EROFS_ALG_ZSTD, &in, buf), 8);
	assert_memory_equal(buf, zstd, 8);
	assert_int_equal(zdecode(EROFS_ALG_ZSTD, buf + 2, get_le16(buf), 4096, &out), 0);
	assert_int_equal(out.zstd_windowlog, 15);
}

/* Every item of exact-size heap packs: no access beyond the pack. */
static void test_compact_item_bounds(void **state)
{
	static const unsigned int units[] = { 2, 4 };
	unsigned int u;

	(void)state;
	for (u = 0; u < 2; u++) {
		unsigned int unit = units[u], ps = fmt_compact_packsize(unit);
		unsigned int vcnt = fmt_compact_vcnt(unit), i;
		uint8_t *pack = malloc(ps);

		assert_non_null(pack);
		memset(pack, 0xFF, ps);
		for (i = 0; i < vcnt; i++) {
			uint8_t t;
			uint16_t lo;

			fmt_compact_item(pack, unit, i, 12, &t, &lo);
			assert_int_equal(t, 3);
			assert_int_equal(lo, 0xFFF);
			fmt_compact_set_item(pack, unit, i, 12, Z_LCLUSTER_NONHEAD, 0x123);
			fmt_compact_item(pack, unit, i, 12, &t, &lo);
			assert_int_equal(t, Z_LCLUSTER_NONHEAD);
			assert_int_equal(lo, 0x123);
		}
		/* the base address was left alone */
		assert_int_equal(get_le32(pack + ps - 4), 0xFFFFFFFFu);
		free(pack);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_decode_spec),
		cmocka_unit_test(test_full_decode_flags),
		cmocka_unit_test(test_full_encode),
		cmocka_unit_test(test_compact_layout_spec),
		cmocka_unit_test(test_compact_initial_4b),
		cmocka_unit_test(test_compact_layout_properties),
		cmocka_unit_test(test_compact_item_spec),
		cmocka_unit_test(test_compact_set_item_2b),
		cmocka_unit_test(test_compact_set_item_4b),
		cmocka_unit_test(test_compact_geometry),
		cmocka_unit_test(test_compact_item_bounds),
		cmocka_unit_test(test_header_decode),
		cmocka_unit_test(test_header_extent_count),
		cmocka_unit_test(test_header_encode),
		cmocka_unit_test(test_extents_encode),
		cmocka_unit_test(test_zconfig_min_size),
		cmocka_unit_test(test_zconfig_observed),
		cmocka_unit_test(test_zconfig_short_and_long),
		cmocka_unit_test(test_zconfig_lzma),
		cmocka_unit_test(test_zconfig_zstd),
		cmocka_unit_test(test_zconfig_deflate),
		cmocka_unit_test(test_zconfig_lz4_pclusterblks),
		cmocka_unit_test(test_zconfig_encode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
