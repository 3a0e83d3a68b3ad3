/* Fuzz target: the decoders alone.  Byte 0 picks the algorithm, deflate
 * engine and partial mode, bytes 1-3 the wanted output length; the rest is
 * the stream.  Decoders must reject anything malformed without reading or
 * writing out of bounds (the output buffer is exactly the wanted size).
 * For lzma, our decoder and liblzma's must also reach the same verdict and,
 * when they accept, the same bytes. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/engine.h"

/* liblzma's decoder on the same request; aborts unless it agrees. */
static void compare_with_liblzma(const struct engine *e, const struct dreq *ours)
{
	static void *ctx;
	struct dreq r = *ours;

	if (!ctx)
		ctx = liblzma_decoder.ctx_new();
	if (!ctx)
		abort();
	r.out = malloc(r.out_len);
	if (!r.out)
		abort();
	r.result = 0;
	r.why[0] = '\0';
	liblzma_decoder.decode(ctx, &e->params, &r);
	if ((r.result == 0) != (ours->result == 0) ||
	    (r.result == 0 && memcmp(r.out, ours->out, r.out_len))) {
		fprintf(stderr, "lzma decoders disagree: ours %d (%s), liblzma %d (%s)\n",
			ours->result, ours->why, r.result, r.why);
		abort();
	}
	free(r.out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* One engine per deflate decoder of the codec table. */
	static struct engine *engines[8];
	static size_t nengines;
	struct dreq r;
	struct engine *e;
	size_t out_len;
	uint8_t *in, *out;

	if (size < 4)
		return 0;
	if (!nengines) {
		const struct decoder *const *deflate = codec_of_algorithm(EROFS_ALG_DEFLATE)->decoders;
		struct decoder_choice d;

		if (decoder_choose(NULL, &d, NULL))
			abort();
		/* Ours for lzma, whatever the environment says: it is the
		 * one compared with liblzma's. */
		d.use[EROFS_ALG_LZMA] = &microlzma_decoder;
		for (; deflate[nengines] && nengines < 8; nengines++) {
			d.use[EROFS_ALG_DEFLATE] = deflate[nengines];
			if (engine_software_create(&d, &engines[nengines], NULL))
				abort();
			engines[nengines]->params.lzma_dict_size = 1u << 20;
			engines[nengines]->params.zstd_window_log_max = 20;
		}
	}
	e = engines[(data[0] >> 2) % nengines];
	out_len = ((size_t)data[1] | (size_t)data[2] << 8 | (size_t)(data[3] & 0x0F) << 16) + 1;
	/* Exact-size copies, so that any overrun is caught. */
	in = malloc(size - 4 ? size - 4 : 1);
	out = malloc(out_len);
	if (!in || !out)
		abort();
	memcpy(in, data + 4, size - 4);
	memset(&r, 0, sizeof(r));
	r.algorithm = data[0] & 3;
	r.in = in;
	r.in_len = size - 4;
	r.out = out;
	r.out_len = out_len;
	r.partial = data[0] & 0x40;
	engine_decompress(e, &r);
	if (r.algorithm == EROFS_ALG_LZMA)
		compare_with_liblzma(e, &r);
	free(in);
	free(out);
	return 0;
}
