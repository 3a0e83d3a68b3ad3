/*
 * MicroLZMA (liblzma): an LZMA1 stream without header or end marker whose
 * first byte is the complemented properties byte.  The encoder fills a
 * given output size; liblzma's decoder, selectable beside our own
 * (microlzma.c), needs the dictionary size from the image's record.
 */
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"

#define WHO "lzma (liblzma)"

static void *liblzma_ctx_new(void)
{
	lzma_stream *s = malloc(sizeof(*s));

	if (s) {
		lzma_stream init = LZMA_STREAM_INIT;

		*s = init;
	}
	return s;
}

static void liblzma_ctx_free(void *c)
{
	if (c) {
		lzma_end(c);
		free(c);
	}
}

static int liblzma_decode(void *ctx, const struct dparams *p, struct dreq *r)
{
	lzma_stream *s = ctx;
	lzma_ret ret;

	/* The decoder is told the exact output size unless only a prefix is
	 * wanted; it then checks the stream ends exactly there. */
	ret = lzma_microlzma_decoder(s, r->in_len, r->out_len, !r->partial,
				     lzma_dict_size_of(p));
	if (ret != LZMA_OK)
		return dreq_fail(r, ret == LZMA_MEM_ERROR ? -ENOMEM : -EUCLEAN,
				 WHO ": decoder setup failed (%d)", (int)ret);
	s->next_in = r->in;
	s->avail_in = r->in_len;
	s->next_out = r->out;
	s->avail_out = r->out_len;
	ret = lzma_code(s, LZMA_FINISH);
	if (ret != LZMA_STREAM_END && !(r->partial && ret == LZMA_OK && s->avail_out == 0))
		return dreq_fail(r, -EUCLEAN, WHO ": malformed stream (%d)", (int)ret);
	if (s->avail_out != 0)
		return dreq_fail(r, -EUCLEAN, WHO ": stream decodes to %zu bytes, expected %zu",
				 r->out_len - s->avail_out, r->out_len);
	return 0;
}

const struct decoder liblzma_decoder = {
	.name = "liblzma",
	.who = WHO,
	.ctx_new = liblzma_ctx_new,
	.ctx_free = liblzma_ctx_free,
	.decode = liblzma_decode,
};

struct lzma_encoder {
	lzma_stream strm;
	lzma_options_lzma opt;
};

/*
 * The default dictionary: one cluster, the largest the image uses (the
 * packed inode's or the metabox's when larger), 32 KiB at least (the
 * kernel's decoders are sized by it).  mkfs.erofs takes four clusters; on
 * the Debian root filesystem at 128 KiB clusters, level 6, one cluster
 * built the image in 25.9 s instead of 32.7 s (bt4's tables stay in
 * cache) for 47.2 MiB instead of 45.9 MiB.  With every file in 1 MiB
 * packed clusters, 1 MiB against 128 KiB takes 1.2-1.4x the time for
 * images 3-10% smaller (README).
 */
static void lzma_configure(struct encoder_params *p, uint32_t pcluster,
			   struct fmt_zconfig *cfg)
{
	if (!p->dict_size)
		p->dict_size = pcluster < (32u << 10) ? (32u << 10) :
			       pcluster > (8u << 20) ? (8u << 20) : pcluster;
	cfg->lzma_dict_size = p->dict_size;
}

static void *lzma_create(const struct encoder_params *p)
{
	struct lzma_encoder *e = calloc(1, sizeof(*e));
	uint32_t preset = p->level >= 100 ? (uint32_t)(p->level - 100) | LZMA_PRESET_EXTREME
					  : (uint32_t)p->level;
	lzma_stream init = LZMA_STREAM_INIT;

	if (!e)
		return NULL;
	e->strm = init;
	if (lzma_lzma_preset(&e->opt, preset)) {
		free(e);
		return NULL;
	}
	e->opt.dict_size = p->dict_size;
	return e;
}

static void lzma_destroy(void *state)
{
	struct lzma_encoder *e = state;

	if (e) {
		lzma_end(&e->strm);
		free(e);
	}
}

static int lzma_fill(void *state, const uint8_t *in, size_t in_len,
		     uint8_t *out, size_t out_cap, size_t *consumed,
		     size_t *out_len, size_t *hint)
{
	struct lzma_encoder *e = state;
	lzma_ret ret = lzma_microlzma_encoder(&e->strm, &e->opt);

	(void)hint;   /* MicroLZMA stops where the output is full by itself */
	if (ret != LZMA_OK)
		return ret == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	e->strm.next_in = in;
	e->strm.avail_in = in_len;
	e->strm.next_out = out;
	e->strm.avail_out = out_cap;
	ret = lzma_code(&e->strm, LZMA_FINISH);
	if (ret != LZMA_STREAM_END)
		return ret == LZMA_MEM_ERROR ? -ENOMEM : -ENOSPC;
	if (e->strm.total_in == 0)
		return -ENOSPC;
	*consumed = (size_t)e->strm.total_in;
	*out_len = (size_t)e->strm.total_out;
	return 0;
}

const struct encoder_ops lzma_encoder_ops = {
	.configure = lzma_configure,
	.create = lzma_create,
	.destroy = lzma_destroy,
	.fill = lzma_fill,
};
