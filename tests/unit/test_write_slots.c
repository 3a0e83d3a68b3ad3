/*
 * Where mkfs puts inode records in a metadata area (write/slots.c): every
 * record on a 32-byte slot, none of a block or less across a block
 * boundary, none overlapping another; a block the next record does not
 * fit is filled first with the largest later records that fit it; a
 * record only moves ahead, and not far; the same input, the same places.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "write/slots.h"

#define SLOT 32u
/* slots.c's SLOTS_LOOKAHEAD: how far ahead a record may come from. */
#define LOOKAHEAD 128u

static uint64_t slot_bytes(uint32_t size)
{
	return (size + SLOT - 1) / SLOT * SLOT;
}

/* A fixed generator: the same records on every run. */
static uint32_t next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*state >> 33);
}

/* The rules every placement keeps, from start to end. */
static void expect_valid(const uint32_t *sizes, const uint64_t *off, size_t count,
			 uint32_t blksz, uint64_t start, uint64_t end, bool ahead_only)
{
	uint8_t *used = calloc(end / SLOT + 1, 1);
	uint64_t furthest = 0;   /* the furthest start of records 0..i */
	size_t i, j;

	assert_non_null(used);
	for (i = 0; i < count; i++) {
		uint64_t s;

		assert_int_equal(off[i] % SLOT, 0);
		assert_true(off[i] >= start);
		assert_true(off[i] + slot_bytes(sizes[i]) <= end);
		if (sizes[i] <= blksz && off[i] / blksz != (off[i] + sizes[i] - 1) / blksz)
			fail_msg("record %zu (%u bytes) at %llu crosses a block boundary", i,
				 sizes[i], (unsigned long long)off[i]);
		for (s = off[i] / SLOT; s < (off[i] + slot_bytes(sizes[i])) / SLOT; s++) {
			if (used[s])
				fail_msg("record %zu overlaps another at slot %llu", i,
					 (unsigned long long)s);
			used[s] = 1;
		}
	}
	/* Only ahead: a record placed before an earlier one came from at
	 * most the lookahead after it. */
	for (j = LOOKAHEAD + 1, i = 0; ahead_only && j < count; j++, i++) {
		if (off[i] > furthest)
			furthest = off[i];
		if (off[j] < furthest)
			fail_msg("record %zu placed before one more than %u records earlier",
				 j, LOOKAHEAD);
	}
	free(used);
}

/* A block the next record does not fit takes the largest later record
 * that fits its rest first, then the next largest, before the record
 * starts a new block.  First fit would have put c after a and d in a
 * third block. */
static void test_fills_block_largest_first(void **state)
{
	/* root, a, b (does not fit after a), c, d */
	const uint32_t sizes[] = { 111, 3032, 3532, 432, 832 };
	uint64_t off[5], end;

	(void)state;
	assert_int_equal(slots_place(sizes, 5, 4096, 32, false, off, &end), 0);
	assert_int_equal(off[0], 32);
	assert_int_equal(off[1], 160);
	assert_int_equal(off[4], 3200);          /* d: 832 of the 896 left */
	assert_int_equal(off[2], 4096);          /* b: a block of its own */
	assert_int_equal(off[3], 4096 + 3552);   /* c: after b */
	assert_int_equal(end, 4096 + 3552 + 448);
	expect_valid(sizes, off, 5, 4096, 32, end, true);
}

/* In order while they fit, however small: nothing moves without need. */
static void test_in_order_while_they_fit(void **state)
{
	uint32_t sizes[100];
	uint64_t off[100], end, at = 64;
	size_t i;

	(void)state;
	for (i = 0; i < 100; i++)
		sizes[i] = 32 + (uint32_t)(i % 3) * 20;
	assert_int_equal(slots_place(sizes, 100, 4096, 64, false, off, &end), 0);
	for (i = 0; i < 100; i++) {
		if (at / 4096 != (at + sizes[i] - 1) / 4096)
			at = (at + 4095) / 4096 * 4096;
		assert_int_equal(off[i], at);
		at += slot_bytes(sizes[i]);
	}
	assert_int_equal(end, at);
}

/* A record over a block (a long index, many xattrs) goes where the last
 * one ended, across blocks; the next ones follow it. */
static void test_records_over_a_block(void **state)
{
	const uint32_t sizes[] = { 64, 9000, 64, 4096, 100 };
	uint64_t off[5], end;

	(void)state;
	assert_int_equal(slots_place(sizes, 5, 4096, 32, false, off, &end), 0);
	assert_int_equal(off[1], 96);
	assert_int_equal(off[2], 96 + 9024);
	assert_int_equal(off[3], 3 * 4096);   /* a whole block: the next one */
	expect_valid(sizes, off, 5, 4096, 32, end, true);
}

/*
 * Many files of random bytes: each record an inode and a tail of 0-4 KiB.
 * Packed, the area is near the records' own size; the floor is the
 * count of tails over half a block, which no two can share.
 */
static void test_packs_random_tails(void **state)
{
	enum { COUNT = 20000 };
	uint32_t *sizes = malloc(COUNT * sizeof(*sizes));
	uint64_t *off = malloc(COUNT * sizeof(*off)), *again = malloc(COUNT * sizeof(*again));
	uint64_t seed = 7, end, end2, bytes = 0, big = 0;
	size_t i;

	(void)state;
	assert_true(sizes && off && again);
	for (i = 0; i < COUNT; i++) {
		sizes[i] = 32 + next_random(&seed) % 4064;
		bytes += slot_bytes(sizes[i]);
		big += sizes[i] > 2048;
	}
	assert_int_equal(slots_place(sizes, COUNT, 4096, 32, false, off, &end), 0);
	expect_valid(sizes, off, COUNT, 4096, 32, end, true);
	print_message("%llu blocks for %llu of records (%llu over half a block)\n",
		      (unsigned long long)(end + 4095) / 4096,
		      (unsigned long long)(bytes + 4095) / 4096, (unsigned long long)big);
	/* 10,426 blocks for records of 10,132; first fit into the last 32
	 * gaps (before slots.c) took 10,780, 6.4% over. */
	assert_true((end + 4095) / 4096 * 100 <= (bytes + 4095) / 4096 * 104);
	assert_int_equal(slots_place(sizes, COUNT, 4096, 32, false, again, &end2), 0);
	assert_int_equal(end2, end);
	assert_memory_equal(off, again, COUNT * sizeof(*off));
	free(sizes);
	free(off);
	free(again);
}

/* 512-byte blocks: 16 slots each, the same rules. */
static void test_small_blocks(void **state)
{
	enum { COUNT = 3000 };
	uint32_t sizes[COUNT];
	uint64_t off[COUNT], end, seed = 11;
	size_t i;

	(void)state;
	for (i = 0; i < COUNT; i++)
		sizes[i] = 32 + next_random(&seed) % (i % 50 ? 480 : 2000);
	assert_int_equal(slots_place(sizes, COUNT, 512, 32, false, off, &end), 0);
	expect_valid(sizes, off, COUNT, 512, 32, end, true);
}

/* A metabox's records (compressed: a gap costs nothing there) go into
 * the first earlier gap they fit, else after the last one. */
static void test_compressed_area_first_fit(void **state)
{
	const uint32_t sizes[] = { 111, 3032, 3532, 432, 832 };
	uint32_t many[3000];
	uint64_t off[3000], end, seed = 5;
	size_t i;

	(void)state;
	assert_int_equal(slots_place(sizes, 5, 4096, 0, true, off, &end), 0);
	assert_int_equal(off[1], 128);
	assert_int_equal(off[2], 4096);          /* b does not fit after a */
	assert_int_equal(off[3], 3168);          /* c: the gap after a */
	assert_int_equal(off[4], 2 * 4096);      /* d: neither gap */
	assert_int_equal(end, 2 * 4096 + 832);
	for (i = 0; i < 3000; i++)
		many[i] = 32 + next_random(&seed) % 4064;
	assert_int_equal(slots_place(many, 3000, 4096, 0, true, off, &end), 0);
	expect_valid(many, off, 3000, 4096, 0, end, false);
}

static void test_nothing_to_place(void **state)
{
	uint64_t end = 0;

	(void)state;
	assert_int_equal(slots_place(NULL, 0, 4096, 64, false, NULL, &end), 0);
	assert_int_equal(end, 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fills_block_largest_first),
		cmocka_unit_test(test_in_order_while_they_fit),
		cmocka_unit_test(test_records_over_a_block),
		cmocka_unit_test(test_packs_random_tails),
		cmocka_unit_test(test_small_blocks),
		cmocka_unit_test(test_compressed_area_first_fit),
		cmocka_unit_test(test_nothing_to_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
