/* The compressibility probe: LZ4 at a high acceleration, 64 KiB at a time
 * into a buffer just short of the input, on the stack. */
#include <lz4.h>
#include <stdint.h>

#include "codec/probe.h"

#define PROBE_WINDOW (64u << 10)
#define ACCELERATION 8

/* The window's size under fast LZ4 when it shrinks by a 64th, else 0. */
static size_t window_size(const uint8_t *in, size_t len)
{
	char out[PROBE_WINDOW];
	int n;

	if (len < 64)
		return len;     /* too small to tell: let the encoder try */
	n = LZ4_compress_fast((const char *)in, out, (int)len, (int)(len - len / 64),
			      ACCELERATION);
	return n > 0 ? (size_t)n : 0;
}

static size_t window_len(size_t len, size_t at)
{
	return len - at < PROBE_WINDOW ? len - at : PROBE_WINDOW;
}

bool probe_compressible(const uint8_t *in, size_t len)
{
	size_t at;

	for (at = 0; at < len; at += PROBE_WINDOW)
		if (window_size(in + at, window_len(len, at)))
			return true;
	return !len;
}

/* The probe's size of in[0, len), stopping once it reaches limit. */
static size_t size_up_to(const uint8_t *in, size_t len, size_t limit)
{
	size_t at, total = 0;

	for (at = 0; at < len && total < limit; at += PROBE_WINDOW) {
		size_t w = window_len(len, at), n = window_size(in + at, w);

		total += n ? n : w;
	}
	return total;
}

size_t probe_size(const uint8_t *in, size_t len)
{
	return size_up_to(in, len, SIZE_MAX);
}

bool probe_fits(const uint8_t *in, size_t len, size_t cap)
{
	return size_up_to(in, len, cap) < cap;
}
