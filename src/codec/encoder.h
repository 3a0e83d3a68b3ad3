/* An encoder of one codec, for one thread at a time. */
#ifndef EK_CODEC_ENCODER_H
#define EK_CODEC_ENCODER_H

#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"

struct encoder;

/* p: configured by the codec (its encoder's configure()). */
int encoder_create(const struct codec *c, const struct encoder_params *p,
		   struct encoder **out);
void encoder_destroy(struct encoder *e);

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
int encoder_fill(struct encoder *e, const uint8_t *in, size_t in_len,
		 uint8_t *out, size_t out_cap, size_t *consumed,
		 size_t *out_len, size_t *hint);

#endif
