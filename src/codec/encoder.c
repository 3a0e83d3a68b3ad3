/* Fixed-output encoders: one front for every algorithm. */
#include <errno.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <zstd.h>

#include "codec/codec.h"

struct ek_encoder {
	struct ek_encoder_params p;
	struct lz4_encoder *lz4;
	struct lzma_encoder *lzma;
	struct deflate_encoder *deflate;
	struct zstd_encoder *zstd;
	uint8_t *scratch;
	size_t scratch_cap;
};

void ek_encoder_levels(enum ek_encoder_kind kind, int *min, int *max, int *def)
{
	switch (kind) {
	case EK_ENC_LZ4:
		*min = 0; *max = 0; *def = 0;
		break;
	case EK_ENC_LZ4HC:
		*min = 0; *max = 12; *def = 9;
		break;
	case EK_ENC_DEFLATE:
		/* libdeflate goes to 12; levels above 9 are its slow ones. */
		*min = 0; *max = 12; *def = 6;
		break;
	case EK_ENC_ZSTD:
		*min = 1; *max = 22; *def = 3;
		break;
	case EK_ENC_LZMA:
		*min = 0; *max = 109; *def = 6;
		break;
	}
}

unsigned int ek_encoder_algorithm(enum ek_encoder_kind kind)
{
	switch (kind) {
	case EK_ENC_LZMA: return EK_ALG_LZMA;
	case EK_ENC_DEFLATE: return EK_ALG_DEFLATE;
	case EK_ENC_ZSTD: return EK_ALG_ZSTD;
	default: return EK_ALG_LZ4;
	}
}

static unsigned int log2_ceil(uint32_t v)
{
	unsigned int l = 0;

	while ((1u << l) < v && l < 31)
		l++;
	return l;
}

int ek_encoder_create(const struct ek_encoder_params *p,
		      struct ek_encoder **out)
{
	struct ek_encoder *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->p = *p;
	switch (p->kind) {
	case EK_ENC_LZ4:
	case EK_ENC_LZ4HC:
		e->lz4 = lz4_encoder_new(p->kind == EK_ENC_LZ4HC, p->level);
		break;
	case EK_ENC_LZMA:
		e->lzma = lzma_encoder_new(p->level, p->dict_size);
		break;
	case EK_ENC_DEFLATE:
		e->deflate = deflate_encoder_new(p->level);
		break;
	case EK_ENC_ZSTD:
		e->zstd = zstd_encoder_new(p->level, log2_ceil(p->dict_size));
		break;
	}
	if (!e->lz4 && !e->lzma && !e->deflate && !e->zstd) {
		free(e);
		return -ENOMEM;
	}
	*out = e;
	return 0;
}

void ek_encoder_destroy(struct ek_encoder *e)
{
	if (!e)
		return;
	lz4_encoder_free(e->lz4);
	lzma_encoder_free(e->lzma);
	deflate_encoder_free(e->deflate);
	zstd_encoder_free(e->zstd);
	free(e->scratch);
	free(e);
}

/* Room for any compressed form of in_len bytes. */
static int ensure_scratch(struct ek_encoder *e, size_t in_len)
{
	size_t need = e->p.kind == EK_ENC_ZSTD ? ZSTD_compressBound(in_len)
		      : libdeflate_deflate_compress_bound(NULL, in_len);
	uint8_t *s;

	if (need <= e->scratch_cap)
		return 0;
	s = realloc(e->scratch, need);
	if (!s)
		return -ENOMEM;
	e->scratch = s;
	e->scratch_cap = need;
	return 0;
}

int ek_encoder_fill(struct ek_encoder *e, const uint8_t *in, size_t in_len,
		    uint8_t *out, size_t out_cap, size_t *consumed,
		    size_t *out_len, size_t *hint)
{
	int ret;

	if (!in_len)
		return -ENOSPC;
	switch (e->p.kind) {
	case EK_ENC_LZ4:
	case EK_ENC_LZ4HC:
		return lz4_encoder_fill(e->lz4, in, in_len, out, out_cap, consumed, out_len);
	case EK_ENC_LZMA:
		return lzma_encoder_fill(e->lzma, in, in_len, out, out_cap, consumed, out_len);
	case EK_ENC_DEFLATE:
	case EK_ENC_ZSTD:
		ret = ensure_scratch(e, in_len);
		if (ret)
			return ret;
		return ek_fit_output(e->p.kind == EK_ENC_ZSTD ? zstd_encoder_compress
							       : deflate_encoder_compress,
				     e->p.kind == EK_ENC_ZSTD ? (void *)e->zstd
							       : (void *)e->deflate,
				     in, in_len, out, out_cap, e->scratch,
				     e->scratch_cap, e->p.block_size / 8,
				     consumed, out_len, hint);
	}
	return -EINVAL;
}
