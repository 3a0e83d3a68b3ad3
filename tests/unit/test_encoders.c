/*
 * The encoders' fixed-output contract (codec/encoder.h), for every row of
 * the codec table, read from the table itself: a new row is tested without
 * touching this file.
 *
 * The writer fills each physical cluster with encoder_fill() and relies on
 * it to
 *   - take at least one byte and at most what it was given, and write at
 *     most out_cap bytes (a pcluster buffer is exactly that big);
 *   - never start the stream with a zero byte (0padding: the reader finds
 *     the stream's start by skipping zeros);
 *   - produce what every decoder of the algorithm, the kernel's choices
 *     included, decodes to exactly the bytes it took;
 *   - give the same output for the same input whatever the encoder did
 *     before (workers reuse encoders across files, and images must not
 *     depend on which worker ran which segment);
 *   - answer -ENOSPC, never an overflow, when nothing fits.
 * Outputs are exact-size malloc'd buffers, so that the sanitized build
 * catches a byte written past out_cap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/codec.h"
#include "codec/encoder.h"
#include "tmp_image.h"

#define BLOCK 4096u
#define MiB   (1u << 20)

/* One block, a 16 KiB big pcluster, the largest the format allows. */
static const uint32_t clusters[] = { BLOCK, 16u << 10, MiB };

/* ------------------------------------------------------------ helpers */

/* An encoder configured for one cluster size, as the writer makes it. */
struct enc {
	const struct codec *c;
	int level;
	uint32_t cluster;
	struct encoder_params p;
	struct fmt_zconfig cfg;      /* what the superblock records */
	struct encoder *e;
};

static void enc_open(struct enc *x, const struct codec *c, int level,
		     uint32_t cluster)
{
	memset(x, 0, sizeof(*x));
	x->c = c;
	x->level = level;
	x->cluster = cluster;
	x->p.level = level;
	x->p.block_size = BLOCK;
	c->encoder->configure(&x->p, cluster, &x->cfg);
	if (encoder_create(c, &x->p, &x->e))
		fail_msg("%s level %d: encoder_create failed", c->name, level);
}

static void enc_close(struct enc *x)
{
	encoder_destroy(x->e);
	x->e = NULL;
}

/* One call's result; out is exactly out_cap bytes of heap. */
struct fill {
	int ret;
	size_t consumed, out_len;
	uint8_t *out;
};

static struct fill fill(struct enc *x, const uint8_t *in, size_t in_len,
			size_t out_cap, size_t *hint)
{
	struct fill f = { 0, 0, 0, malloc(out_cap) };

	assert_non_null(f.out);
	f.ret = encoder_fill(x->e, in, in_len, f.out, out_cap, &f.consumed,
			     &f.out_len, hint);
	return f;
}

/* Every decoder of the algorithm, the way the reader calls them (a whole
 * stream, its exact decoded size, the image's parameters), gives back
 * exactly want[0, n). */
static void expect_decodes(const struct enc *x, const uint8_t *stream, size_t len,
			   const uint8_t *want, size_t n, const char *what)
{
	const struct codec *alg = codec_of_algorithm(x->c->algorithm);
	struct dparams dp = {
		.lzma_dict_size = x->cfg.lzma_dict_size,
		.zstd_window_log_max = x->cfg.zstd_windowlog,
	};
	uint8_t *out = malloc(n);
	size_t k;

	assert_non_null(out);
	assert_non_null(alg);
	assert_non_null(alg->decoders);
	assert_non_null(alg->decoders[0]);
	for (k = 0; alg->decoders[k]; k++) {
		const struct decoder *d = alg->decoders[k];
		void *ctx = d->ctx_new ? d->ctx_new() : NULL;
		struct dreq r = {
			.algorithm = x->c->algorithm,
			.in = stream, .in_len = len,
			.out = out, .out_len = n,
		};

		if (d->ctx_new)
			assert_non_null(ctx);
		memset(out, 0xA5, n);
		if (d->decode(ctx, &dp, &r))
			fail_msg("%s level %d cluster %u %s: decoder %s: %s (%zu -> %zu bytes)",
				 x->c->name, x->level, x->cluster, what, d->name, r.why,
				 len, n);
		if (memcmp(out, want, n))
			fail_msg("%s level %d cluster %u %s: decoder %s decodes other bytes",
				 x->c->name, x->level, x->cluster, what, d->name);
		if (d->ctx_free)
			d->ctx_free(ctx);
	}
	free(out);
}

/* A successful fill keeps the contract and decodes to what it took. */
static void expect_valid(const struct enc *x, const struct fill *f, const uint8_t *in,
			 size_t in_len, size_t out_cap, const char *what)
{
	if (f->ret)
		fail_msg("%s level %d cluster %u %s: encoder_fill returned %d",
			 x->c->name, x->level, x->cluster, what, f->ret);
	assert_in_range(f->consumed, 1, in_len);
	assert_in_range(f->out_len, 1, out_cap);
	/* 0padding: the reader takes leading zeros for padding. */
	assert_int_not_equal(f->out[0], 0);
	expect_decodes(x, f->out, f->out_len, in, f->consumed, what);
}

static void expect_same(const struct enc *x, const struct fill *a, const struct fill *b,
			const char *what)
{
	if (a->ret != b->ret || a->consumed != b->consumed || a->out_len != b->out_len ||
	    memcmp(a->out, b->out, a->out_len))
		fail_msg("%s level %d cluster %u %s: not reproducible: %zu -> %zu bytes, "
			 "then %zu -> %zu", x->c->name, x->level, x->cluster, what,
			 a->consumed, a->out_len, b->consumed, b->out_len);
}

/* The levels a row is tested at: min, default, max, and in the extreme
 * mode (lzma's 100 + level) its strongest. */
static size_t levels_of(const struct codec *c, int out[4])
{
	size_t n = 0;

	out[n++] = c->level_min;
	if (c->level_default != c->level_min)
		out[n++] = c->level_default;
	if (c->level_max != c->level_default)
		out[n++] = c->level_max;
	if (c->level_extreme)
		out[n++] = c->level_extreme + c->level_max;
	return n;
}

/* How much input a case gets: at a block, enough for several clusters
 * of any kind; at 16 KiB, four clusters (random data fills one, the rest
 * mostly fits whole); at 1 MiB, random data a little more than a cluster,
 * the rest 256 KiB, and the slow searches (levels above the default,
 * lzma) only 64 KiB of text: the 1 MiB case is about the encoder's
 * configuration for big clusters, and a sanitized run stays in seconds. */
static size_t input_for(const struct codec *c, int level, uint32_t cluster,
			enum data_kind kind)
{
	bool slow = level > c->level_default || c->algorithm == EROFS_ALG_LZMA;

	if (cluster == BLOCK)
		return (size_t)cluster * 16;
	if (cluster < MiB)
		return (size_t)cluster * 4;
	if (slow)
		return kind == DATA_TEXT ? 64u << 10 : 0;
	return kind == DATA_RANDOM ? MiB + MiB / 16 : 256u << 10;
}

/* The codec table's row a test runs on (its index is the test's state). */
static const struct codec *row(void **state)
{
	const struct codec *c = codec_get((enum ek_compressor)(uintptr_t)*state);

	assert_non_null(c);
	return c;
}

/* ------------------------------------------------------------ tests */

/*
 * At every level and cluster size, on every kind of data: a valid fill,
 * decoded by each decoder; the same result from a fresh encoder, and from
 * this one after it compressed something else (hint reset to 0, as the
 * writer does at each segment).
 */
static void test_fill_contract(void **state)
{
	const struct codec *c = row(state);
	int levels[4];
	size_t nlevels = levels_of(c, levels), l, ci;
	unsigned int kind;

	for (l = 0; l < nlevels; l++) {
		assert_true(codec_level_valid(c, levels[l]));
		for (ci = 0; ci < sizeof(clusters) / sizeof(clusters[0]); ci++) {
			for (kind = 0; kind < DATA_KINDS; kind++) {
				size_t n = input_for(c, levels[l], clusters[ci], kind);
				uint8_t *in, *other;
				struct enc a, b;
				struct fill f1, f2, f3, fo;
				size_t hint = 0;
				char what[64];

				if (!n)
					continue;
				snprintf(what, sizeof(what), "%s data, %zu bytes",
					 data_kind_name(kind), n);
				in = new_data(n, kind, 7 + kind);
				other = new_data(n, DATA_TEXT, 99);
				enc_open(&a, c, levels[l], clusters[ci]);
				enc_open(&b, c, levels[l], clusters[ci]);

				f1 = fill(&a, in, n, clusters[ci], &hint);
				expect_valid(&a, &f1, in, n, clusters[ci], what);
				/* the encoder's history must not show */
				fo = fill(&a, other, n / 2, clusters[ci], NULL);
				assert_int_equal(fo.ret, 0);
				hint = 0;
				f2 = fill(&a, in, n, clusters[ci], &hint);
				expect_same(&a, &f1, &f2, what);
				hint = 0;
				f3 = fill(&b, in, n, clusters[ci], &hint);
				expect_same(&a, &f1, &f3, what);

				free(f1.out);
				free(f2.out);
				free(f3.out);
				free(fo.out);
				enc_close(&a);
				enc_close(&b);
				free(in);
				free(other);
			}
		}
	}
}

/*
 * No room: out_cap of 1 byte holds no stream that carries data, and
 * in_len 0 has nothing to take; both are -ENOSPC (the writer then stores
 * the data uncompressed).  Caps of 2..16 bytes are either -ENOSPC or a
 * valid fill within them: the exact-size buffer shows any overrun.
 */
static void test_no_room(void **state)
{
	const struct codec *c = row(state);
	int levels[4];
	size_t nlevels = levels_of(c, levels), l, cap;
	unsigned int kind;

	for (l = 0; l < nlevels; l++) {
		struct enc x;

		enc_open(&x, c, levels[l], BLOCK);
		for (kind = 0; kind < DATA_KINDS; kind++) {
			uint8_t *in = new_data(BLOCK * 4, kind, 3);
			struct fill f;
			size_t hint = 0;

			f = fill(&x, in, 0, BLOCK, &hint);
			assert_int_equal(f.ret, -ENOSPC);
			free(f.out);
			for (cap = 1; cap <= 16; cap++) {
				char what[64];

				snprintf(what, sizeof(what), "%s data into %zu bytes",
					 data_kind_name(kind), cap);
				hint = 0;
				f = fill(&x, in, BLOCK * 4, cap, &hint);
				if (cap == 1 || f.ret == -ENOSPC)
					assert_int_equal(f.ret, -ENOSPC);
				else
					expect_valid(&x, &f, in, BLOCK * 4, cap, what);
				free(f.out);
			}
			/* and it still works after all those refusals */
			hint = 0;
			f = fill(&x, in, BLOCK * 4, BLOCK, &hint);
			expect_valid(&x, &f, in, BLOCK * 4, BLOCK, data_kind_name(kind));
			free(f.out);
			free(in);
		}
		enc_close(&x);
	}
}

/*
 * A file cut into clusters the way a segment is: each fill starts where
 * the last one stopped, with the hint carried from call to call (where
 * the fixed-output search starts).  Every cluster decodes to its bytes,
 * and together they cover the input exactly, across changes of kind
 * (where a carried hint is most wrong).
 */
static void test_hint_carried(void **state)
{
	const struct codec *c = row(state);
	const size_t part = 48u << 10, n = part * DATA_KINDS;
	uint8_t *in = malloc(n);
	unsigned int kind, ci;

	assert_non_null(in);
	/* text, random, zeros, period, one after the other */
	for (kind = 0; kind < DATA_KINDS; kind++)
		gen_data(in + kind * part, part, kind, 11);
	for (ci = 0; ci < 2; ci++) {
		struct enc x;
		size_t pos = 0, hint = 0, fills = 0;

		enc_open(&x, c, c->level_default, clusters[ci]);
		while (pos < n) {
			struct fill f = fill(&x, in + pos, n - pos, clusters[ci], &hint);
			char what[64];

			snprintf(what, sizeof(what), "fill %zu at offset %zu", fills, pos);
			expect_valid(&x, &f, in + pos, n - pos, clusters[ci], what);
			pos += f.consumed;
			fills++;
			free(f.out);
		}
		assert_int_equal(pos, n);
		/* the random part alone needs a cluster per cluster of input */
		assert_true(fills >= part / clusters[ci]);
		enc_close(&x);
	}
	free(in);
}

int main(void)
{
	struct CMUnitTest tests[CODEC_COUNT * 3];
	static char names[CODEC_COUNT * 3][64];
	size_t i, n = 0;

	for (i = 0; i < CODEC_COUNT; i++) {
		const struct codec *c = codec_get((enum ek_compressor)i);
		static const struct {
			const char *name;
			CMUnitTestFunction fn;
		} kinds[3] = {
			{ "fill_contract", test_fill_contract },
			{ "no_room", test_no_room },
			{ "hint_carried", test_hint_carried },
		};
		size_t k;

		for (k = 0; k < 3; k++, n++) {
			snprintf(names[n], sizeof(names[n]), "%s_%s", kinds[k].name, c->name);
			tests[n] = (struct CMUnitTest){
				.name = names[n],
				.test_func = kinds[k].fn,
				.initial_state = (void *)(uintptr_t)i,
			};
		}
	}
	return _cmocka_run_group_tests("encoders", tests, n, NULL, NULL);
}
