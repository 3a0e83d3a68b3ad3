/*
 * A cheap look at how well data compresses, with LZ4's fastest mode
 * (about 1 GB/s) and, for encoders that code literals by frequency
 * (entropy_coded: every codec but LZ4), a byte histogram, before a slow
 * encoder spends its time on it.
 */
#ifndef EK_CODEC_PROBE_H
#define EK_CODEC_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether some 64 KiB window of in[0, len) shrinks by a 64th under fast
 * LZ4 or, entropy_coded, by its byte frequencies: data that does neither
 * (already compressed, random) no slower encoder shrinks by a block's
 * worth either. */
bool probe_compressible(const uint8_t *in, size_t len, bool entropy_coded);

/* What in[0, len) takes under the probe, 64 KiB windows apart (a window
 * that does not shrink counts whole): about an upper bound of what the
 * real encoder will make of it, near enough to weigh layouts. */
size_t probe_size(const uint8_t *in, size_t len, bool entropy_coded);

/* Whether probe_size(in, len) < cap, looking no further than needed. */
bool probe_fits(const uint8_t *in, size_t len, bool entropy_coded, size_t cap);

#endif
