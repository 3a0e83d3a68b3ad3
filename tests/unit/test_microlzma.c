/* Our MicroLZMA decoder: it decodes what liblzma's encoder makes, and on
 * any stream, whole or damaged, it reaches the same verdict and the same
 * bytes as liblzma's decoder. */
#include <lzma.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/codec.h"

/* Each decoder's context, reused from one stream to the next as the
 * engine reuses them. */
static void *ours_ctx, *liblzma_ctx;

static int setup(void **state)
{
	(void)state;
	ours_ctx = microlzma_decoder.ctx_new();
	liblzma_ctx = liblzma_decoder.ctx_new();
	return ours_ctx && liblzma_ctx ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	microlzma_decoder.ctx_free(ours_ctx);
	liblzma_decoder.ctx_free(liblzma_ctx);
	return 0;
}

/* Test data of a few kinds: each stresses another part of the decoder. */
enum kind { TEXT, RANDOM, ZEROS, SHORT_PERIOD, MIXED };

static void fill(uint8_t *p, size_t n, enum kind kind, uint32_t seed)
{
	static const char *const words[] = {
		"erofs ", "cluster ", "inode ", "the ", "extent ", "lzma ",
		"directory\n", "/usr/lib/", "0x00ff ", "\t",
	};
	size_t i = 0;

	while (i < n) {
		seed = seed * 1103515245u + 12345u;
		switch (kind) {
		case TEXT: {
			const char *w = words[(seed >> 16) % 10];
			size_t len = strlen(w);

			if (len > n - i)
				len = n - i;
			memcpy(p + i, w, len);
			i += len;
			break;
		}
		case RANDOM:
			p[i++] = (uint8_t)(seed >> 16);
			break;
		case ZEROS:
			p[i++] = 0;
			break;
		case SHORT_PERIOD:
			p[i] = (uint8_t)("abc"[i % 3]);
			i++;
			break;
		case MIXED:
			/* Runs of random bytes, then copies of earlier data
			 * from near and far, so matches of every distance. */
			if (i > 64 && (seed >> 20) % 3 == 0) {
				size_t back = 1 + (seed >> 8) % (i < 60000 ? i : 60000);
				size_t len = 2 + (seed >> 4) % 300, k;

				for (k = 0; k < len && i < n; k++, i++)
					p[i] = p[i - back];
			} else {
				p[i++] = (uint8_t)(seed >> 16);
			}
			break;
		}
	}
}

/* Compress a prefix of in into at most cap bytes; returns the stream's
 * length and the prefix's in *consumed. */
static size_t encode(const uint8_t *in, size_t in_len, uint8_t *out, size_t cap,
		     const lzma_options_lzma *opt, size_t *consumed)
{
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret ret;

	assert_int_equal(lzma_microlzma_encoder(&s, opt), LZMA_OK);
	s.next_in = in;
	s.avail_in = in_len;
	s.next_out = out;
	s.avail_out = cap;
	ret = lzma_code(&s, LZMA_FINISH);
	assert_int_equal(ret, LZMA_STREAM_END);
	*consumed = (size_t)s.total_in;
	lzma_end(&s);
	return (size_t)s.total_out;
}

struct verdict {
	int result;
	uint8_t *out;
};

/* Run one decoder on exact-size copies, so that ASan sees any overrun. */
static struct verdict run(bool ours, const uint8_t *in, size_t in_len,
			  size_t out_len, bool partial, uint32_t dict_size)
{
	struct dparams params = { .lzma_dict_size = dict_size };
	struct dreq r;
	struct verdict v;
	uint8_t *copy = malloc(in_len ? in_len : 1);

	assert_non_null(copy);
	memcpy(copy, in, in_len);
	v.out = malloc(out_len ? out_len : 1);
	assert_non_null(v.out);
	memset(&r, 0, sizeof(r));
	r.algorithm = EROFS_ALG_LZMA;
	r.in = copy;
	r.in_len = in_len;
	r.out = v.out;
	r.out_len = out_len;
	r.partial = partial;
	v.result = ours ? microlzma_decoder.decode(ours_ctx, &params, &r)
			: liblzma_decoder.decode(liblzma_ctx, &params, &r);
	if (v.result)
		assert_true(r.why[0] != '\0');
	free(copy);
	return v;
}

/* Both decoders agree: both fail, or both succeed with the same bytes.
 * Returns whether they succeeded. */
static bool agree(const uint8_t *in, size_t in_len, size_t out_len,
		  bool partial, uint32_t dict_size)
{
	struct verdict a = run(true, in, in_len, out_len, partial, dict_size);
	struct verdict b = run(false, in, in_len, out_len, partial, dict_size);
	bool ok = a.result == 0;

	if ((a.result == 0) != (b.result == 0))
		fail_msg("ours %s, liblzma %s (in %zu, out %zu, partial %d, dict %u)",
			 a.result ? "fails" : "succeeds", b.result ? "fails" : "succeeds",
			 in_len, out_len, partial, dict_size);
	if (ok)
		assert_memory_equal(a.out, b.out, out_len);
	free(a.out);
	free(b.out);
	return ok;
}

/* The stream decodes to the first n bytes of data (a prefix of it when
 * partial), and liblzma's decoder agrees. */
static void expect_decodes_to(const uint8_t *stream, size_t slen,
			      const uint8_t *data, size_t n, bool partial,
			      uint32_t dict_size)
{
	struct verdict v = run(true, stream, slen, n, partial, dict_size);

	assert_int_equal(v.result, 0);
	assert_memory_equal(v.out, data, n);
	free(v.out);
	assert_true(agree(stream, slen, n, partial, dict_size));
}

static void expect_round_trip(const uint8_t *data, size_t len,
			      const lzma_options_lzma *opt, size_t cap)
{
	uint8_t *stream = malloc(cap);
	size_t consumed, slen;

	assert_non_null(stream);
	slen = encode(data, len, stream, cap, opt, &consumed);
	assert_true(consumed > 0);
	expect_decodes_to(stream, slen, data, consumed, false, opt->dict_size);
	free(stream);
}

/* A level-6 stream of at most cap bytes made from len bytes of one kind
 * of data; stream has one byte to spare after cap. */
struct sample {
	uint8_t *data, *stream;
	size_t slen, consumed;
	lzma_options_lzma opt;
};

static void make_sample(struct sample *sm, size_t len, enum kind kind,
			uint32_t seed, size_t cap)
{
	sm->data = malloc(len);
	sm->stream = malloc(cap + 1);
	assert_non_null(sm->data);
	assert_non_null(sm->stream);
	fill(sm->data, len, kind, seed);
	assert_false(lzma_lzma_preset(&sm->opt, 6));
	sm->slen = encode(sm->data, len, sm->stream, cap, &sm->opt, &sm->consumed);
}

static void free_sample(struct sample *sm)
{
	free(sm->data);
	free(sm->stream);
}

/* Every kind of data, three stream sizes, and properties other than the
 * presets' (lc 3, lp 0, pb 2), which move the literal and position
 * contexts. */
static void test_round_trip(void **state)
{
	static const size_t caps[] = { 4096, 16384, 65536 };
	static const uint32_t props[][3] = {   /* lc, lp, pb */
		{ 3, 0, 2 }, { 0, 0, 0 }, { 4, 0, 4 }, { 0, 4, 0 }, { 1, 3, 1 },
	};
	size_t len = 512 * 1024, c, p;
	uint8_t *data = malloc(len);
	int kind;

	(void)state;
	assert_non_null(data);
	for (kind = TEXT; kind <= MIXED; kind++) {
		fill(data, len, (enum kind)kind, 7u + (uint32_t)kind);
		for (c = 0; c < sizeof(caps) / sizeof(caps[0]); c++)
			for (p = 0; p < sizeof(props) / sizeof(props[0]); p++) {
				lzma_options_lzma opt;

				assert_false(lzma_lzma_preset(&opt, 6));
				opt.lc = props[p][0];
				opt.lp = props[p][1];
				opt.pb = props[p][2];
				opt.dict_size = 1u << 20;
				expect_round_trip(data, len, &opt, caps[c]);
			}
	}
	free(data);
}

/* A prefix of any length, asked for alone, decodes to those bytes,
 * also when it ends inside a match. */
static void test_prefix(void **state)
{
	struct sample sm;
	size_t want;

	(void)state;
	make_sample(&sm, 200000, MIXED, 99, 16384);
	for (want = 1; want <= sm.consumed; want += want < 300 ? 1 : 997)
		expect_decodes_to(sm.stream, sm.slen, sm.data, want, true, sm.opt.dict_size);
	free_sample(&sm);
}

/* Cut short, lengthened, with the wrong size or properties: malformed,
 * for both decoders alike. */
static void test_damaged_framing(void **state)
{
	struct sample sm;
	uint8_t *stream;
	size_t slen, consumed, cut;
	uint32_t dict;

	(void)state;
	make_sample(&sm, 100000, TEXT, 3, 4096);
	stream = sm.stream;
	slen = sm.slen;
	consumed = sm.consumed;
	dict = sm.opt.dict_size;
	for (cut = 0; cut < slen; cut++) {
		assert_false(agree(stream, cut, consumed, false, dict));
		agree(stream, cut, consumed, true, dict);
	}
	stream[slen] = 0x5a;            /* a byte after the end */
	assert_false(agree(stream, slen + 1, consumed, false, dict));
	assert_false(agree(stream, slen, consumed + 1, false, dict));
	assert_false(agree(stream, slen, consumed - 1, false, dict));
	assert_true(agree(stream, slen, consumed - 1, true, dict));
	stream[0] = (uint8_t)~225;      /* properties out of range */
	assert_false(agree(stream, slen, consumed, false, dict));
	stream[0] = (uint8_t)~(2 * 9 + 3); /* lc 3 + lp 2 > 4 */
	assert_false(agree(stream, slen, consumed, false, dict));
	free_sample(&sm);
}

/* Flipped bits anywhere: whatever liblzma makes of them, so do we. */
static void test_flipped_bits(void **state)
{
	uint32_t seed = 12345;
	int kind;

	(void)state;
	for (kind = TEXT; kind <= MIXED; kind++) {
		struct sample sm;
		size_t i;

		make_sample(&sm, 300000, (enum kind)kind, 5u + (uint32_t)kind, 16384);
		for (i = 0; i < 300; i++) {
			size_t at;
			uint8_t bit;

			seed = seed * 1103515245u + 12345u;
			at = (seed >> 8) % sm.slen;
			bit = (uint8_t)(1u << ((seed >> 4) & 7));
			sm.stream[at] ^= bit;
			agree(sm.stream, sm.slen, sm.consumed, false, sm.opt.dict_size);
			agree(sm.stream, sm.slen, sm.consumed / 2, true, sm.opt.dict_size);
			sm.stream[at] ^= bit;
		}
		free_sample(&sm);
	}
}

/* A match that reaches back further than the dictionary the image
 * declares is malformed, though the bytes are there in the output. */
static void test_dictionary_limit(void **state)
{
	size_t len = 32 * 1024, consumed, slen;
	uint8_t *data = malloc(len), stream[65536];
	lzma_options_lzma opt;

	(void)state;
	assert_non_null(data);
	/* 16 KiB of noise, twice: the second is one match 16 KiB back. */
	fill(data, 16384, RANDOM, 1);
	memcpy(data + 16384, data, 16384);
	assert_false(lzma_lzma_preset(&opt, 6));
	opt.dict_size = 1u << 20;
	slen = encode(data, len, stream, sizeof(stream), &opt, &consumed);
	assert_int_equal(consumed, len);
	assert_true(agree(stream, slen, consumed, false, 1u << 20));
	assert_true(agree(stream, slen, consumed, false, 16400));
	assert_false(agree(stream, slen, consumed, false, 8192));
	/* liblzma rounds the dictionary size up to a multiple of 16. */
	assert_true(agree(stream, slen, consumed, false, 16384 - 15));
	assert_false(agree(stream, slen, consumed, false, 16384 - 16));
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_damaged_framing),
		cmocka_unit_test(test_flipped_bits),
		cmocka_unit_test(test_dictionary_limit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
