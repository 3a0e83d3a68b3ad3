/*
 * The compressibility probe (codec/probe.h), which decides what the slow
 * encoders never see: a wrong "incompressible" stores data raw that the
 * encoder would have shrunk, a wrong "compressible" only costs time.
 *   - random bytes (already compressed data) are incompressible for
 *     every encoder;
 *   - text with repeats is compressible for every encoder;
 *   - data without repeats over a small alphabet (base64, hex) does not
 *     shrink under LZ4, which has no entropy coder, but does under the
 *     others, so only their probe calls it compressible;
 *   - probe_size stays within the input and probe_fits agrees with it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/probe.h"

#define LEN (256u << 10)

static uint64_t rng = 88172645463325252ull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint8_t *random_bytes(void)
{
	uint8_t *b = malloc(LEN);
	size_t i;

	assert_non_null(b);
	for (i = 0; i < LEN; i++)
		b[i] = (uint8_t)next_random();
	return b;
}

/* Random symbols of a 64-letter alphabet: 6 bits of entropy a byte. */
static uint8_t *base64_like(void)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint8_t *b = malloc(LEN);
	size_t i;

	assert_non_null(b);
	for (i = 0; i < LEN; i++)
		b[i] = (uint8_t)alphabet[next_random() % 64];
	return b;
}

static uint8_t *text(void)
{
	static const char *const words[] = { "erofs ", "image ", "cluster ", "packed ",
					     "inode ", "fragment ", "kernel " };
	uint8_t *b = malloc(LEN);
	size_t i = 0;

	assert_non_null(b);
	while (i < LEN) {
		const char *w = words[next_random() % 7];
		size_t n = strlen(w);

		if (n > LEN - i)
			n = LEN - i;
		memcpy(b + i, w, n);
		i += n;
	}
	return b;
}

static void test_random_is_incompressible(void **state)
{
	uint8_t *b = random_bytes();

	(void)state;
	assert_false(probe_compressible(b, LEN, false));
	assert_false(probe_compressible(b, LEN, true));
	assert_int_equal(probe_size(b, LEN, true), LEN);
	assert_false(probe_fits(b, LEN, true, LEN));
	free(b);
}

static void test_text_is_compressible(void **state)
{
	uint8_t *b = text();
	size_t lz4 = probe_size(b, LEN, false), any = probe_size(b, LEN, true);

	(void)state;
	assert_true(probe_compressible(b, LEN, false));
	assert_true(probe_compressible(b, LEN, true));
	assert_true(lz4 < LEN / 2);
	assert_true(any <= lz4);
	assert_true(probe_fits(b, LEN, false, lz4 + 1));
	assert_false(probe_fits(b, LEN, false, lz4));
	free(b);
}

static void test_small_alphabet_needs_entropy_coding(void **state)
{
	uint8_t *b = base64_like();
	size_t any = probe_size(b, LEN, true);

	(void)state;
	assert_false(probe_compressible(b, LEN, false));
	assert_true(probe_compressible(b, LEN, true));
	/* about 6 bits of 8 (a sample's entropy falls a little short) */
	assert_true(any > LEN / 8 * 6 - LEN / 256);
	assert_true(any < LEN / 8 * 6 + LEN / 256);
	free(b);
}

/* A few random bytes are incompressible too, though their histogram
 * alone underrates their entropy; a few bytes of text or base64 are not. */
static void test_small_windows(void **state)
{
	uint8_t *r = random_bytes(), *t = text(), *b = base64_like();
	size_t len;

	(void)state;
	for (len = 512; len <= 8192; len *= 2) {
		assert_false(probe_compressible(r, len, true));
		assert_false(probe_compressible(r, len, false));
		assert_true(probe_compressible(t, len, true));
		assert_true(probe_compressible(b, len, true));
	}
	free(r);
	free(t);
	free(b);
}

/* A compressible window after incompressible ones still counts. */
static void test_one_window_is_enough(void **state)
{
	uint8_t *b = random_bytes(), *t = text();

	(void)state;
	memcpy(b + LEN - (64u << 10), t, 64u << 10);
	assert_true(probe_compressible(b, LEN, false));
	assert_false(probe_compressible(b, LEN - (64u << 10), false));
	assert_true(probe_compressible(b, 0, false));   /* nothing to lose */
	free(b);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_is_incompressible),
		cmocka_unit_test(test_text_is_compressible),
		cmocka_unit_test(test_small_alphabet_needs_entropy_coding),
		cmocka_unit_test(test_small_windows),
		cmocka_unit_test(test_one_window_is_enough),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
