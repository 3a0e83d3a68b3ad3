/* The compressibility probe: LZ4 at a high acceleration, 64 KiB at a time
 * into a buffer just short of the input, on the stack; and, for encoders
 * that code literals by their frequency, the window's order-0 entropy. */
#include <lz4.h>
#include <math.h>
#include <stdint.h>

#include "codec/probe.h"

#define PROBE_WINDOW (64u << 10)
#define ACCELERATION 8
/* A histogram of few bytes underrates their entropy (512 random bytes
 * show 7.3 bits a byte): below this, entropy must promise an eighth. */
#define ENTROPY_SMALL_LEN 4096u

/* What coding each byte by its frequency alone would take: the bound an
 * entropy coder (Huffman, FSE, a range coder) nears on data without
 * repeats, such as base64 or hex (6 and 4 bits a byte), which LZ4 does
 * not shrink at all. */
static size_t entropy_size(const uint8_t *in, size_t len)
{
	uint32_t count[256] = { 0 };
	double bits = 0;
	size_t i;

	for (i = 0; i < len; i++)
		count[in[i]]++;
	for (i = 0; i < 256; i++)
		if (count[i])
			bits -= count[i] * log2((double)count[i] / (double)len);
	return (size_t)(bits / 8) + 1;
}

/* The window's size under the probe when it shrinks by a 64th (by its
 * entropy, an eighth under ENTROPY_SMALL_LEN), else 0. */
static size_t window_size(const uint8_t *in, size_t len, bool entropy_coded)
{
	char out[PROBE_WINDOW];
	size_t want = len - len / 64, best = 0;
	int n;

	if (len < 64)
		return len;     /* too small to tell: let the encoder try */
	n = LZ4_compress_fast((const char *)in, out, (int)len, (int)want, ACCELERATION);
	if (n > 0)
		best = (size_t)n;
	if (entropy_coded) {
		size_t e = entropy_size(in, len);
		size_t e_want = len < ENTROPY_SMALL_LEN ? len - len / 8 : want;

		if (e < e_want && (!best || e < best))
			best = e;
	}
	return best;
}

static size_t window_len(size_t len, size_t at)
{
	return len - at < PROBE_WINDOW ? len - at : PROBE_WINDOW;
}

bool probe_compressible(const uint8_t *in, size_t len, bool entropy_coded)
{
	size_t at;

	for (at = 0; at < len; at += PROBE_WINDOW)
		if (window_size(in + at, window_len(len, at), entropy_coded))
			return true;
	return !len;
}

/* The probe's size of in[0, len), stopping once it reaches limit. */
static size_t size_up_to(const uint8_t *in, size_t len, bool entropy_coded, size_t limit)
{
	size_t at, total = 0;

	for (at = 0; at < len && total < limit; at += PROBE_WINDOW) {
		size_t w = window_len(len, at), n = window_size(in + at, w, entropy_coded);

		total += n ? n : w;
	}
	return total;
}

size_t probe_size(const uint8_t *in, size_t len, bool entropy_coded)
{
	return size_up_to(in, len, entropy_coded, SIZE_MAX);
}

bool probe_fits(const uint8_t *in, size_t len, bool entropy_coded, size_t cap)
{
	return size_up_to(in, len, entropy_coded, cap) < cap;
}
