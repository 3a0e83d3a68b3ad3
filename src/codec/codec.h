/*
 * Codecs: one file per algorithm, each with
 *   - a decoder: a whole stream to exactly out_len bytes, or (partial) only
 *     the first out_len bytes of a longer stream; malformed input fails
 *     with -EUCLEAN, never reads or writes out of bounds;
 *   - a fixed-output encoder: as much input as fits into out_cap bytes
 *     (EROFS's ratio comes from filling whole physical clusters).
 * Decoder contexts are pooled (ctxpool.h) so a call costs no allocation.
 */
#ifndef EK_CODEC_CODEC_H
#define EK_CODEC_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Algorithm ids are the on-disk ones. */
enum ek_alg {
	EK_ALG_LZ4 = 0,
	EK_ALG_LZMA = 1,
	EK_ALG_DEFLATE = 2,
	EK_ALG_ZSTD = 3,
	EK_ALG_COUNT = 4,
};

/* One decompression: filled by the caller, result by the engine. */
struct ek_dreq {
	unsigned int algorithm;
	const uint8_t *in;       /* the stream, leading zero padding removed */
	size_t in_len;
	uint8_t *out;
	size_t out_len;          /* bytes wanted */
	bool partial;            /* the stream may decode to more than out_len */
	int result;              /* 0, -EUCLEAN (malformed), -ENOMEM */
	char why[96];            /* what was wrong, when result != 0 */
	void *user;              /* for batch callers */
};

/* Parameters decoders take from the image's configuration records. */
struct ek_dparams {
	uint32_t lzma_dict_size;
	unsigned int zstd_window_log_max;
};

/* ---------------------------------------------------------- decoders */

struct ctxpool;

/* The dictionary size an lzma stream may reach back over: the image's, or
 * when its superblock has no lzma record, 8 MiB, the most EROFS allows. */
static inline uint32_t lzma_dict_size_of(const struct ek_dparams *p)
{
	return p->lzma_dict_size ? p->lzma_dict_size : (8u << 20);
}

int lz4_decode(struct ek_dreq *r);
int lzma_decode(struct ctxpool *pool, const struct ek_dparams *p,
		struct ek_dreq *r);
/* Our own MicroLZMA decoder (microlzma.c): the same results as
 * lzma_decode, which is liblzma's, in less time. */
int microlzma_decode(struct ctxpool *pool, const struct ek_dparams *p,
		     struct ek_dreq *r);
void *microlzma_ctx_new(void);
void microlzma_ctx_free(void *c);
int zstd_decode(struct ctxpool *pool, const struct ek_dparams *p,
		struct ek_dreq *r);

/* The three deflate engines (deflate_*.c). */
enum ek_deflate_engine {
	EK_DEFLATE_LIBDEFLATE = 0,
	EK_DEFLATE_ISAL = 1,
	EK_DEFLATE_ZLIB = 2,
	EK_DEFLATE_ENGINES = 3,
};

/* The two lzma decoders: ours (microlzma.c) and liblzma's (lzma.c). */
enum ek_lzma_engine {
	EK_LZMA_BUILTIN = 0,
	EK_LZMA_LIBLZMA = 1,
	EK_LZMA_ENGINES = 2,
};

int deflate_decode_libdeflate(struct ctxpool *pool, struct ek_dreq *r);
int deflate_decode_isal(struct ctxpool *pool, struct ek_dreq *r);
int deflate_decode_zlib(struct ctxpool *pool, struct ek_dreq *r);
void *deflate_libdeflate_ctx_new(void);
void deflate_libdeflate_ctx_free(void *c);
void *deflate_isal_ctx_new(void);
void deflate_isal_ctx_free(void *c);
void *deflate_zlib_ctx_new(void);
void deflate_zlib_ctx_free(void *c);
void *lzma_ctx_new(void);
void lzma_ctx_free(void *c);
void *zstd_ctx_new(void);
void zstd_ctx_free(void *c);

/* Record a decode failure in r and return its code. */
int dreq_fail(struct ek_dreq *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---------------------------------------------------------- encoders */

enum ek_encoder_kind {
	EK_ENC_LZ4 = 0,
	EK_ENC_LZ4HC = 1,
	EK_ENC_DEFLATE = 2,
	EK_ENC_ZSTD = 3,
	EK_ENC_LZMA = 4,
};

struct ek_encoder;

struct ek_encoder_params {
	enum ek_encoder_kind kind;
	int level;               /* validated by ek_encoder_check_level */
	uint32_t dict_size;      /* lzma dictionary / zstd window, bytes */
	uint32_t block_size;
};

/* Level range and default of an encoder kind. */
void ek_encoder_levels(enum ek_encoder_kind kind, int *min, int *max,
		       int *def);
/* On-disk algorithm of an encoder kind. */
unsigned int ek_encoder_algorithm(enum ek_encoder_kind kind);

int ek_encoder_create(const struct ek_encoder_params *p,
		      struct ek_encoder **out);
void ek_encoder_destroy(struct ek_encoder *e);

/*
 * Compress a prefix of in[0, in_len) into at most out_cap bytes.  On
 * success *consumed (>= 1) input bytes decode from out[0, *out_len).
 * Returns 0, or -ENOSPC when not even a little input fits, -ENOMEM.
 * The stream's first byte is never zero (0padding finds its start).
 * *hint (may be NULL) carries, from one call to the next, how much input
 * filled the output last time: the codecs that search for the fit start
 * there.  Callers reset it to 0 where results must not depend on history
 * (each segment), so output stays the same whatever runs where.
 */
int ek_encoder_fill(struct ek_encoder *e, const uint8_t *in, size_t in_len,
		    uint8_t *out, size_t out_cap, size_t *consumed,
		    size_t *out_len, size_t *hint);

/* Per-algorithm encoder entry points, used by ek_encoder_fill. */
struct lz4_encoder;
struct lzma_encoder;
struct deflate_encoder;
struct zstd_encoder;

struct lz4_encoder *lz4_encoder_new(bool hc, int level);
void lz4_encoder_free(struct lz4_encoder *e);
int lz4_encoder_fill(struct lz4_encoder *e, const uint8_t *in, size_t in_len,
		     uint8_t *out, size_t out_cap, size_t *consumed,
		     size_t *out_len);

struct lzma_encoder *lzma_encoder_new(int level, uint32_t dict_size);
void lzma_encoder_free(struct lzma_encoder *e);
int lzma_encoder_fill(struct lzma_encoder *e, const uint8_t *in,
		      size_t in_len, uint8_t *out, size_t out_cap,
		      size_t *consumed, size_t *out_len);

/* deflate and zstd compress whole buffers; fit.c finds the largest input
 * that fits, calling `compress` a few times. */
typedef int (*ek_whole_compress_fn)(void *ctx, const uint8_t *in,
				    size_t in_len, uint8_t *out,
				    size_t out_cap, size_t *out_len);

int ek_fit_output(ek_whole_compress_fn compress, void *ctx,
		  const uint8_t *in, size_t in_len, uint8_t *out,
		  size_t out_cap, uint8_t *scratch, size_t scratch_cap,
		  uint32_t granule, size_t *consumed, size_t *out_len,
		  size_t *hint);

struct deflate_encoder *deflate_encoder_new(int level);
void deflate_encoder_free(struct deflate_encoder *e);
int deflate_encoder_compress(void *e, const uint8_t *in, size_t in_len,
			     uint8_t *out, size_t out_cap, size_t *out_len);

struct zstd_encoder *zstd_encoder_new(int level, unsigned int window_log);
void zstd_encoder_free(struct zstd_encoder *e);
int zstd_encoder_compress(void *e, const uint8_t *in, size_t in_len,
			  uint8_t *out, size_t out_cap, size_t *out_len);

#endif
