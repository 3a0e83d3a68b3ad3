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

#endif
