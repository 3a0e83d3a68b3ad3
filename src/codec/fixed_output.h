/*
 * Fixed-output compression for codecs that only compress whole buffers
 * (deflate, zstd): find, in a few tries, about the largest input prefix
 * whose compressed form fits a physical cluster.
 */
#ifndef EK_CODEC_FIXED_OUTPUT_H
#define EK_CODEC_FIXED_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

/* Compress all of in; -ENOSPC when it does not fit out_cap, -ENOMEM. */
typedef int (*whole_compress_fn)(void *ctx, const uint8_t *in, size_t in_len,
				 uint8_t *out, size_t out_cap, size_t *out_len);

/* The search's scratch output, big enough for any compressed form. */
struct fixed_output {
	uint8_t *scratch;
	size_t cap;
};

/*
 * As encoder_fill(): a prefix of in[0, in_len) into at most out_cap bytes
 * of out.  bound: the most `compress` can write for in_len bytes.  granule:
 * the input precision worth a further try.
 */
int fixed_output_fill(struct fixed_output *f, whole_compress_fn compress,
		      void *ctx, size_t bound, const uint8_t *in, size_t in_len,
		      uint8_t *out, size_t out_cap, uint32_t granule,
		      size_t *consumed, size_t *out_len, size_t *hint);
void fixed_output_free(struct fixed_output *f);

/* A streaming compressor's next piece: compress in[0, len), flushed to a
 * byte boundary, appending to scratch at *out_pos (room for piece_bound
 * bytes is there). */
typedef int (*piece_compress_fn)(void *ctx, const uint8_t *in, size_t len,
				 uint8_t *scratch, size_t *out_pos);

/*
 * Filling a cluster in one pass, for compressors that can flush: the
 * input goes in pieces of at most `piece` bytes (smaller as the output
 * nears full), each flushed, until the output would no longer fit; the stream then ends after the last piece that fit,
 * with `trailer` (an empty final block).  The caller has reset its stream.
 */
int fixed_output_stream(struct fixed_output *f, piece_compress_fn compress, void *ctx,
			size_t piece, size_t piece_bound, const uint8_t *in, size_t in_len,
			uint8_t *out, size_t out_cap, const uint8_t *trailer,
			size_t trailer_len, size_t *consumed, size_t *out_len);

#endif
