/*
 * MicroLZMA (liblzma): an LZMA1 stream without header or end marker whose
 * first byte is the complemented properties byte.  The encoder fills a
 * given output size; the decoder needs the dictionary size from the
 * image's configuration record.
 */
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/ctxpool.h"

void *lzma_ctx_new(void)
{
	lzma_stream *s = malloc(sizeof(*s));

	if (s) {
		lzma_stream init = LZMA_STREAM_INIT;

		*s = init;
	}
	return s;
}

void lzma_ctx_free(void *c)
{
	if (c) {
		lzma_end(c);
		free(c);
	}
}

int lzma_decode(struct ctxpool *pool, const struct ek_dparams *p,
		struct ek_dreq *r)
{
	lzma_stream *s = ctxpool_get(pool);
	lzma_ret ret;
	int code = 0;

	if (!s)
		return dreq_fail(r, -ENOMEM, "lzma (liblzma): out of memory");
	/* The decoder is told the exact output size unless only a prefix is
	 * wanted; it then checks the stream ends exactly there. */
	ret = lzma_microlzma_decoder(s, r->in_len, r->out_len, !r->partial,
				     lzma_dict_size_of(p));
	if (ret != LZMA_OK) {
		code = dreq_fail(r, ret == LZMA_MEM_ERROR ? -ENOMEM : -EUCLEAN,
				 "lzma (liblzma): decoder setup failed (%d)", (int)ret);
		goto out;
	}
	s->next_in = r->in;
	s->avail_in = r->in_len;
	s->next_out = r->out;
	s->avail_out = r->out_len;
	ret = lzma_code(s, LZMA_FINISH);
	if (ret != LZMA_STREAM_END && !(r->partial && ret == LZMA_OK && s->avail_out == 0))
		code = dreq_fail(r, -EUCLEAN, "lzma (liblzma): malformed stream (%d)", (int)ret);
	else if (s->avail_out != 0)
		code = dreq_fail(r, -EUCLEAN, "lzma (liblzma): stream decodes to %zu bytes, expected %zu",
				 r->out_len - s->avail_out, r->out_len);
out:
	ctxpool_put(pool, s);
	return code;
}

struct lzma_encoder {
	lzma_stream strm;
	lzma_options_lzma opt;
};

struct lzma_encoder *lzma_encoder_new(int level, uint32_t dict_size)
{
	struct lzma_encoder *e = calloc(1, sizeof(*e));
	uint32_t preset = level >= 100 ? (uint32_t)(level - 100) | LZMA_PRESET_EXTREME
				       : (uint32_t)level;
	lzma_stream init = LZMA_STREAM_INIT;

	if (!e)
		return NULL;
	e->strm = init;
	if (lzma_lzma_preset(&e->opt, preset)) {
		free(e);
		return NULL;
	}
	e->opt.dict_size = dict_size;
	return e;
}

void lzma_encoder_free(struct lzma_encoder *e)
{
	if (e) {
		lzma_end(&e->strm);
		free(e);
	}
}

int lzma_encoder_fill(struct lzma_encoder *e, const uint8_t *in,
		      size_t in_len, uint8_t *out, size_t out_cap,
		      size_t *consumed, size_t *out_len)
{
	lzma_ret ret = lzma_microlzma_encoder(&e->strm, &e->opt);

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
