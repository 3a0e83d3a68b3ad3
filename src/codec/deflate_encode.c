/* The DEFLATE encoder: libdeflate for small clusters and the levels
 * only it has, zlib's streaming deflate for large clusters. */
#include <errno.h>
#include <libdeflate.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codec/codec.h"
#include "codec/fixed_output.h"

struct deflate_encoder {
	struct libdeflate_compressor *c;   /* small clusters */
	z_stream z;                        /* large ones, streamed */
	bool z_ready;
	int level;
	struct fixed_output fit;
	uint32_t granule;
};

static void deflate_configure(struct encoder_params *p, uint32_t pcluster,
			      struct fmt_zconfig *cfg)
{
	(void)p;
	(void)pcluster;
	cfg->deflate_windowbits = 15;
}

static void *deflate_create(const struct encoder_params *p)
{
	struct deflate_encoder *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->c = libdeflate_alloc_compressor(p->level);
	if (!e->c) {
		free(e);
		return NULL;
	}
	e->level = p->level;
	e->granule = p->block_size / 8;
	return e;
}

static void deflate_destroy(void *state)
{
	struct deflate_encoder *e = state;

	if (e) {
		libdeflate_free_compressor(e->c);
		if (e->z_ready)
			deflateEnd(&e->z);
		fixed_output_free(&e->fit);
		free(e);
	}
}

/* A non-final stored block starts with a zero byte, which 0padding would
 * take for padding; its five unused bits may be anything. */
static void no_leading_zero(uint8_t *out)
{
	if (out[0] == 0)
		out[0] = 0x08;
}

static int deflate_whole(void *ctx, const uint8_t *in, size_t in_len,
			 uint8_t *out, size_t out_cap, size_t *out_len)
{
	struct deflate_encoder *e = ctx;
	size_t n = libdeflate_deflate_compress(e->c, in, in_len, out, out_cap);

	if (!n)
		return -ENOSPC;
	no_leading_zero(out);
	*out_len = n;
	return 0;
}

/*
 * Large clusters in one pass, as zstd's (zstd.c): zlib's deflate takes
 * the input in pieces (fixed_output_stream() sizes them), each ending at
 * a byte boundary (Z_SYNC_FLUSH: the block ends, and an empty stored
 * block, 5 bytes, aligns it), until the output would no longer fit; the
 * stream then ends after the last piece that fitted with an empty final
 * block of fixed codes (BFINAL 1, BTYPE 01, end-of-block: 10 bits, 0x03
 * 0x00).  At level 9 zlib is as fast and as good as libdeflate per pass
 * (14 against 13 MB/s, 6.04:1 both on the same text), and the search
 * compressed each byte two or three times.  Levels above 9 are
 * libdeflate's alone.
 *
 * A flush ends a block, whose Huffman tables fit that piece alone: more
 * flushes cost headers on uniform data (text) and fit mixed data
 * (binaries) better.  Measured at level 9, image bytes with 256 KiB
 * pieces against 16 KiB: the small-files tree -0.12% at 128 KiB clusters
 * and -0.17% at 1 MiB; the root filesystem +0.16% and +0.17% (+0.22%
 * with all its files in the packed inode's 1 MiB clusters); the time the
 * same.  Clusters up to 128 KiB keep 16 KiB pieces; larger ones, which
 * the smallest setting fills with whole small files (mostly text), take
 * 256 KiB.
 */
#define STREAM_SMALL_CLUSTER_MAX (128u << 10)
#define STREAM_PIECE_SMALL_CLUSTER (16u << 10)
#define STREAM_PIECE_LARGE_CLUSTER (256u << 10)
#define STREAM_MIN_CAP (32u << 10)
/* zlib's default hash size: memLevel 9's larger table compressed no
 * better here and cost 8-10% more time (60 MB of a root filesystem,
 * level 9, 128 KiB clusters: 8.3-8.5 s against 9.1-9.2 s). */
#define STREAM_MEMLEVEL 8
static const uint8_t empty_final_block[2] = { 0x03, 0x00 };

/* The most a piece of len bytes can take: a stored block (5 bytes of
 * header) per 16 KiB at worst, as zlib's deflateBound() counts, and the
 * flush's empty stored block. */
static size_t piece_bound(size_t len)
{
	return len + (len >> 12) + (len >> 14) + 64;
}

static int stream_piece(void *ctx, const uint8_t *in, size_t len, uint8_t *scratch,
			size_t *out_pos)
{
	struct deflate_encoder *e = ctx;

	e->z.next_in = (Bytef *)in;
	e->z.avail_in = (uInt)len;
	e->z.next_out = scratch + *out_pos;
	e->z.avail_out = (uInt)piece_bound(len);
	/* A full output buffer would leave part of the flush unwritten. */
	if (deflate(&e->z, Z_SYNC_FLUSH) != Z_OK || e->z.avail_in || !e->z.avail_out)
		return -EIO;
	*out_pos = (size_t)e->z.total_out;
	return 0;
}

/* A stream that starts a new one for each cluster. */
static int stream_reset(struct deflate_encoder *e)
{
	if (e->z_ready)
		return deflateReset(&e->z) == Z_OK ? 0 : -EIO;
	if (deflateInit2(&e->z, e->level, Z_DEFLATED, -15, STREAM_MEMLEVEL, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	e->z_ready = true;
	return 0;
}

static int deflate_fill(void *state, const uint8_t *in, size_t in_len,
			uint8_t *out, size_t out_cap, size_t *consumed,
			size_t *out_len, size_t *hint)
{
	struct deflate_encoder *e = state;

	if (out_cap >= STREAM_MIN_CAP && e->level <= 9) {
		size_t piece = out_cap <= STREAM_SMALL_CLUSTER_MAX ? STREAM_PIECE_SMALL_CLUSTER :
			       STREAM_PIECE_LARGE_CLUSTER;
		int ret = stream_reset(e);

		if (!ret)
			ret = fixed_output_stream(&e->fit, stream_piece, e, piece,
						  piece_bound(piece), in, in_len, out, out_cap,
						  empty_final_block, sizeof(empty_final_block),
						  consumed, out_len);
		if (!ret)
			no_leading_zero(out);
		return ret;
	}
	return fixed_output_fill(&e->fit, deflate_whole, e,
				 libdeflate_deflate_compress_bound(NULL, in_len),
				 in, in_len, out, out_cap, e->granule, consumed,
				 out_len, hint);
}

const struct encoder_ops deflate_encoder_ops = {
	.configure = deflate_configure,
	.create = deflate_create,
	.destroy = deflate_destroy,
	.fill = deflate_fill,
};
