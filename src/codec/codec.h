/*
 * Codecs: one table of compression algorithms (codecs.c), one row per
 * compressor a user can name, each with
 *   - its on-disk algorithm id, its levels and their default;
 *   - its encoder: fixed output, as much input as fits into out_cap bytes
 *     (EROFS's ratio comes from filling whole physical clusters);
 *   - its superblock configuration record;
 *   - the decoders of its algorithm, fastest first: a whole stream to
 *     exactly out_len bytes, or (partial) only the first out_len bytes of
 *     a longer stream; malformed input fails with -EUCLEAN, never reads or
 *     writes out of bounds.
 * The public names, level checks, --engine, the writer's encoders and the
 * reader's engine all read this table: a new algorithm, or a new decoder
 * of one (an accelerator), is one file and one row.
 */
#ifndef EK_CODEC_CODEC_H
#define EK_CODEC_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofskit/build.h"
#include "format/ondisk.h"
#include "format/zindex.h"

/* ---------------------------------------------------------- requests */

/* One decompression: filled by the caller, result by the decoder. */
struct dreq {
	unsigned int algorithm;  /* on-disk id */
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
struct dparams {
	uint32_t lzma_dict_size;
	unsigned int zstd_window_log_max;
};

/* Record a decode failure in r and return its code. */
int dreq_fail(struct dreq *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The dictionary size an lzma stream may reach back over: the image's, or
 * when its superblock has no lzma record, 8 MiB, the most EROFS allows. */
static inline uint32_t lzma_dict_size_of(const struct dparams *p)
{
	return p->lzma_dict_size ? p->lzma_dict_size : (8u << 20);
}

/* ---------------------------------------------------------- decoders */

/* One implementation of one algorithm's decompression. */
struct decoder {
	const char *name;        /* as --engine takes it: "isal" */
	const char *who;         /* in messages: "deflate (isa-l)" */
	/* Per-call state, pooled by the engine so that a call allocates
	 * nothing; NULL when the decoder needs none. */
	void *(*ctx_new)(void);
	void (*ctx_free)(void *ctx);
	int (*decode)(void *ctx, const struct dparams *p, struct dreq *r);
};

/* The decoders, each defined in its algorithm's file. */
extern const struct decoder lz4_decoder;
extern const struct decoder libdeflate_decoder, isal_decoder, zlib_decoder;
extern const struct decoder zstd_decoder;
extern const struct decoder microlzma_decoder, liblzma_decoder;

/* zlib's streaming inflate with a context of its own: libdeflate cannot
 * stop early, so prefixes (partial requests) go here. */
int zlib_decode_once(struct dreq *r);

/* ---------------------------------------------------------- encoders */

struct encoder_params {
	int level;               /* valid for the codec (codec_level_valid) */
	uint32_t dict_size;      /* lzma dictionary / zstd window, bytes */
	uint32_t block_size;
};

struct encoder_ops {
	/* Fill in what the encoder and the algorithm's superblock record
	 * take from the cluster size (p->dict_size: the user's, 0: none). */
	void (*configure)(struct encoder_params *p, uint32_t pcluster,
			  struct fmt_zconfig *cfg);
	void *(*create)(const struct encoder_params *p);   /* NULL: no memory */
	void (*destroy)(void *state);
	/* As encoder_fill() below, with in_len >= 1. */
	int (*fill)(void *state, const uint8_t *in, size_t in_len, uint8_t *out,
		    size_t out_cap, size_t *consumed, size_t *out_len, size_t *hint);
};

extern const struct encoder_ops lz4_encoder_ops, lz4hc_encoder_ops;
extern const struct encoder_ops deflate_encoder_ops, zstd_encoder_ops;
extern const struct encoder_ops lzma_encoder_ops;

/* ---------------------------------------------------------- the table */

struct codec {
	const char *name;        /* "lz4hc" */
	const char *alias;       /* another spelling users know, or NULL */
	unsigned int algorithm;  /* on-disk id (EROFS_ALG_*) */
	int level_min, level_max, level_default;
	/* Non-zero: level_extreme + (level_min..level_max) are valid too,
	 * the same levels in a slower, smaller mode (lzma's 100..109). */
	int level_extreme;
	/* The dictionary a user may choose (dictsize=), bytes; 0: none. */
	uint32_t dict_min, dict_max;
	/* The most blocks a cluster may have, when the kernel takes fewer
	 * than the format's 2047 (0: no more limit). */
	uint16_t cluster_blocks_max;
	const struct encoder_ops *encoder;
	/* Its encoder codes literals by their frequency (Huffman, FSE, a
	 * range coder), so data LZ4 cannot shrink may still shrink. */
	bool entropy_coded;
	/* Its encoder is about as fast as the compressibility probe: trying
	 * it on data that may not shrink costs no more than probing first. */
	bool try_is_cheap;
	/* Decoders of the algorithm, the default (fastest) first, NULL
	 * terminated; NULL on a row that shares its algorithm with an
	 * earlier one (lz4hc: lz4's). */
	const struct decoder *const *decoders;
	const char *decoder_env; /* variable naming the decoder, or NULL */
};

#define CODEC_COUNT 5        /* rows: enum ek_compressor's values */

/* The row of a compressor; NULL for EK_COMPRESS_NONE or out of range. */
const struct codec *codec_get(enum ek_compressor c);
/* By name or alias; NULL when there is none. */
const struct codec *codec_by_name(const char *name);
/* The row that names an on-disk algorithm ("lz4" for 0); NULL if unknown. */
const struct codec *codec_of_algorithm(unsigned int algorithm);
bool codec_level_valid(const struct codec *c, int level);
/* Every row's name, "a, b, c or d", for messages. */
void codec_names(char *buf, size_t size);

/* ---------------------------------------------------------- choosing */

/* The decoder each on-disk algorithm uses. */
struct decoder_choice {
	const struct decoder *use[EROFS_ALG_MAX];
};

/*
 * Every algorithm's decoder: the one named for it (names[] by on-disk id,
 * NULL or "" where none is given), else the one its variable names, else
 * the fastest.  A name that belongs to another algorithm, or to none, is
 * -EINVAL with a message naming the valid ones.
 */
int decoder_choose(const char *const names[EROFS_ALG_MAX],
		   struct decoder_choice *out, ek_error *err);
/* The decoder called `name` and its algorithm; -EINVAL for a name no
 * algorithm has. */
int decoder_lookup(const char *name, unsigned int *algorithm,
		   const struct decoder **out, ek_error *err);

#endif
