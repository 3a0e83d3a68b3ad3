/*
 * Fixed-output compression for codecs that only compress whole buffers
 * (deflate, zstd): find, in a few tries, about the largest input prefix
 * whose compressed form fits out_cap bytes.  Each try compresses into a
 * scratch buffer big enough for any output, so an overflowing try still
 * tells its size, and the next guess scales the input by cap / size.
 * Everything depends only on the input, so results are reproducible.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec/fixed_output.h"

#define FIT_TRIES 7

static int search(whole_compress_fn compress, void *ctx,
		  const uint8_t *in, size_t in_len, uint8_t *out,
		  size_t out_cap, uint8_t *scratch, size_t scratch_cap,
		  uint32_t granule, size_t *consumed, size_t *out_len,
		  size_t *hint)
{
	size_t lo = 0, lo_out = 0, hi = in_len + 1;
	/* Start where the previous extent ended up, slightly below. */
	size_t guess = hint && *hint ? *hint - *hint / 64 : out_cap * 3;
	int i;

	if (guess > in_len)
		guess = in_len;
	if (!granule)
		granule = 1;
	for (i = 0; i < FIT_TRIES && guess > lo && guess < hi; i++) {
		size_t got;
		int ret = compress(ctx, in, guess, scratch, scratch_cap, &got);
		double next;

		if (ret == -ENOMEM)
			return ret;
		if (ret) {
			/* Cannot even tell the size: halve. */
			hi = guess;
			guess = lo + (hi - lo) / 2;
			continue;
		}
		if (got <= out_cap) {
			lo = guess;
			lo_out = got;
			memcpy(out, scratch, got);
			if (guess == in_len || got + out_cap / 64 >= out_cap)
				break;
		} else {
			hi = guess;
		}
		if (hi - lo <= granule)
			break;
		/* Aim a little below a full cluster: overshooting costs a try. */
		next = (double)guess * (double)out_cap / (double)(got ? got : 1) * 0.985;
		guess = next > (double)in_len ? in_len : (size_t)next;
		if (guess >= hi)
			guess = hi - 1 - (hi - lo) / 8;
		if (guess <= lo)
			guess = lo + (hi - lo + 1) / 2;
		if (guess > in_len)
			guess = in_len;
	}
	if (!lo)
		return -ENOSPC;
	*consumed = lo;
	*out_len = lo_out;
	if (hint)
		*hint = (size_t)((double)lo * (double)out_cap / (double)(lo_out ? lo_out : 1));
	return 0;
}

static int reserve(struct fixed_output *f, size_t bound)
{
	if (bound > f->cap) {
		uint8_t *s = realloc(f->scratch, bound);

		if (!s)
			return -ENOMEM;
		f->scratch = s;
		f->cap = bound;
	}
	return 0;
}

int fixed_output_fill(struct fixed_output *f, whole_compress_fn compress,
		      void *ctx, size_t bound, const uint8_t *in, size_t in_len,
		      uint8_t *out, size_t out_cap, uint32_t granule,
		      size_t *consumed, size_t *out_len, size_t *hint)
{
	if (reserve(f, bound))
		return -ENOMEM;
	return search(compress, ctx, in, in_len, out, out_cap, f->scratch, f->cap,
		      granule, consumed, out_len, hint);
}

void fixed_output_free(struct fixed_output *f)
{
	free(f->scratch);
	f->scratch = NULL;
	f->cap = 0;
}

/* The smallest piece: its flush costs a few bytes, and the piece that
 * overflows is lost to the cluster. */
#define PIECE_MIN 512u

/*
 * The next piece: the first at most three quarters of the room, so that
 * it fits even if it does not compress; then a third of what the space
 * left holds at the ratio so far, at most `piece`, down to PIECE_MIN.
 * The piece that overflows is lost to this cluster, so the last ones are
 * small; the few extra flushes (a block header each) cost far less.  On
 * a root filesystem's files at deflate 9 and 128 KiB clusters: 2.2% more
 * input per cluster, 4% fewer bytes compressed twice.
 */
static size_t next_piece(size_t piece, size_t in_done, size_t out_done,
			 size_t out_cap, size_t trailer_len)
{
	size_t room = out_cap - trailer_len - out_done, want;

	if (!out_done || !in_done)
		want = room / 4 * 3;
	else
		want = (size_t)((double)room * (double)in_done / (double)out_done / 3.0);
	if (want >= piece)
		return piece;
	return want < PIECE_MIN ? PIECE_MIN : want;
}

int fixed_output_stream(struct fixed_output *f, piece_compress_fn compress, void *ctx,
			size_t piece, size_t piece_bound, const uint8_t *in, size_t in_len,
			uint8_t *out, size_t out_cap, const uint8_t *trailer,
			size_t trailer_len, size_t *consumed, size_t *out_len)
{
	size_t pos = 0, out_pos = 0, fit_in = 0, fit_out = 0;

	if (out_cap <= trailer_len)
		return -ENOSPC;
	if (reserve(f, out_cap + piece_bound))
		return -ENOMEM;
	while (pos < in_len) {
		size_t len = next_piece(piece, fit_in, fit_out, out_cap, trailer_len);
		int ret;

		if (len > in_len - pos)
			len = in_len - pos;
		ret = compress(ctx, in + pos, len, f->scratch, &out_pos);
		if (ret)
			return ret;
		if (out_pos + trailer_len > out_cap)
			break;
		pos += len;
		fit_in = pos;
		fit_out = out_pos;
	}
	if (!fit_in)
		return -ENOSPC;
	memcpy(out, f->scratch, fit_out);
	memcpy(out + fit_out, trailer, trailer_len);
	*consumed = fit_in;
	*out_len = fit_out + trailer_len;
	return 0;
}
