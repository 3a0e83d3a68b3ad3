/* LZ4: raw blocks (no frame).  lz4 and lz4hc share the decoder. */
#include <errno.h>
#include <limits.h>
#include <lz4.h>
#include <lz4hc.h>
#include <stdlib.h>

#include "codec/codec.h"

static int lz4_decode(void *ctx, const struct dparams *p, struct dreq *r)
{
	int n;

	(void)ctx;
	(void)p;
	if (r->in_len > INT_MAX || r->out_len > INT_MAX)
		return dreq_fail(r, -EUCLEAN, "lz4: lengths out of range");
	if (r->partial)
		n = LZ4_decompress_safe_partial((const char *)r->in, (char *)r->out,
						(int)r->in_len, (int)r->out_len,
						(int)r->out_len);
	else
		n = LZ4_decompress_safe((const char *)r->in, (char *)r->out,
					(int)r->in_len, (int)r->out_len);
	if (n < 0)
		return dreq_fail(r, -EUCLEAN, "lz4: malformed stream (error %d)", n);
	if ((size_t)n != r->out_len)
		return dreq_fail(r, -EUCLEAN, "lz4: stream decodes to %d bytes, expected %zu",
				 n, r->out_len);
	return 0;
}

const struct decoder lz4_decoder = {
	.name = "lz4",
	.who = "lz4",
	.decode = lz4_decode,
};

/*
 * lz4hc keeps one stream per encoder and starts each extent with a fast
 * reset: the previous extent's table entries fall below the new window
 * and are never matched, so the output is that of a fresh state, without
 * clearing 256 KiB of tables for every (often 4 KiB) extent.
 */
struct lz4_encoder {
	int level;
	LZ4_streamHC_t *hc;      /* NULL: plain lz4 */
};

/* Both write lz4's record: the largest match distance and cluster. */
static void lz4_configure(struct encoder_params *p, uint32_t pcluster,
			  struct fmt_zconfig *cfg)
{
	cfg->lz4_max_distance = 65535;
	cfg->lz4_max_pclusterblks = (uint16_t)(pcluster / p->block_size);
}

static void *lz4_create(const struct encoder_params *p)
{
	struct lz4_encoder *e = calloc(1, sizeof(*e));

	if (e)
		e->level = p->level;
	return e;
}

static void *lz4hc_create(const struct encoder_params *p)
{
	struct lz4_encoder *e = lz4_create(p);

	if (e) {
		e->hc = LZ4_createStreamHC();
		if (!e->hc) {
			free(e);
			e = NULL;
		}
	}
	return e;
}

static void lz4_destroy(void *state)
{
	struct lz4_encoder *e = state;

	if (e) {
		if (e->hc)
			LZ4_freeStreamHC(e->hc);
		free(e);
	}
}

static int lz4_fill(void *state, const uint8_t *in, size_t in_len,
		    uint8_t *out, size_t out_cap, size_t *consumed,
		    size_t *out_len, size_t *hint)
{
	struct lz4_encoder *e = state;
	int src = in_len > LZ4_MAX_INPUT_SIZE ? LZ4_MAX_INPUT_SIZE : (int)in_len;
	int cap = out_cap > INT_MAX ? INT_MAX : (int)out_cap;
	int n;

	(void)hint;   /* lz4 stops where the output is full by itself */
	if (e->hc) {
		LZ4_resetStreamHC_fast(e->hc, e->level);
		n = LZ4_compress_HC_continue_destSize(e->hc, (const char *)in,
						      (char *)out, &src, cap);
	} else {
		n = LZ4_compress_destSize((const char *)in, (char *)out, &src, cap);
	}
	if (n <= 0 || src <= 0)
		return -ENOSPC;
	*consumed = (size_t)src;
	*out_len = (size_t)n;
	return 0;
}

const struct encoder_ops lz4_encoder_ops = {
	.configure = lz4_configure,
	.create = lz4_create,
	.destroy = lz4_destroy,
	.fill = lz4_fill,
};

const struct encoder_ops lz4hc_encoder_ops = {
	.configure = lz4_configure,
	.create = lz4hc_create,
	.destroy = lz4_destroy,
	.fill = lz4_fill,
};
