/*
 * Compressed files: reading bytes through the extent map.  Uncompressed
 * extents are copied (shifted, or rotated when interlaced); compressed ones
 * go through the image's decompression engine, whole when the caller wants
 * the whole extent, else only the prefix that is needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec/engine.h"
#include "read/internal.h"

struct zbuf {
	uint8_t *in, *out;
	size_t in_cap, out_cap;
};

void *zbuf_new(void)
{
	return calloc(1, sizeof(struct zbuf));
}

void zbuf_free(void *p)
{
	struct zbuf *b = p;

	if (b) {
		free(b->in);
		free(b->out);
		free(b);
	}
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *p;

	if (need <= *cap)
		return 0;
	p = realloc(*buf, need);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = need;
	return 0;
}

static int read_raw(ek_inode *inode, const ek_extent *e, uint64_t off,
		    void *buf, size_t len, ek_error *err)
{
	return e->in_metadata ? meta_read(inode->img, inode->in_metabox, off, buf, len, err)
			      : image_read(inode->img, off, buf, len, err);
}

static int read_plain(ek_inode *inode, const ek_extent *e, uint64_t within,
		      uint8_t *buf, size_t n, ek_error *err)
{
	uint32_t blksz = inode->img->blksz;
	uint64_t pos;
	size_t first;
	int ret;

	if (!e->interlaced)
		return read_raw(inode, e, e->physical + within, buf, n, err);
	/* Interlaced: extent byte at file offset L sits at L mod blksz. */
	if (e->length > blksz || e->physical_length < blksz)
		return ek_fail(err, -EUCLEAN, "inode %llu: interlaced extent at %llu longer than a block",
			       (unsigned long long)inode->nid, (unsigned long long)e->logical);
	pos = (e->logical + within) & (blksz - 1);
	first = n < blksz - pos ? n : (size_t)(blksz - pos);
	ret = read_raw(inode, e, e->physical + pos, buf, first, err);
	if (!ret && n > first)
		ret = read_raw(inode, e, e->physical, buf + first, n - first, err);
	return ret;
}

static int read_compressed(ek_inode *inode, const ek_extent *e, uint64_t within,
			   uint8_t *buf, size_t n, ek_error *err)
{
	ek_image *img = inode->img;
	size_t want = (size_t)(within + n), skip = 0, scan;
	bool legacy_lz4 = e->algorithm == EROFS_ALG_LZ4 &&
			  !(img->sb.feature_incompat & EROFS_INCOMPAT_ZERO_PADDING);
	struct ek_dreq req = { .algorithm = e->algorithm };
	struct zbuf *zb = ctxpool_get(&img->zbufs);
	bool direct = within == 0 && n == want;
	int ret;

	if (!zb)
		return ek_fail(err, -ENOMEM, "out of memory");
	ret = grow(&zb->in, &zb->in_cap, (size_t)e->physical_length);
	if (!ret && !direct)
		ret = grow(&zb->out, &zb->out_cap, want);
	if (ret) {
		ret = ek_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = read_raw(inode, e, e->physical, zb->in, (size_t)e->physical_length, err);
	if (ret) {
		ek_error_prefix(err, "inode %llu: pcluster of extent at %llu: ",
				(unsigned long long)inode->nid,
				(unsigned long long)e->logical);
		goto out;
	}
	/* 0padding: the stream ends at the pcluster's end, after fewer than
	 * one block of zeros. */
	if (!legacy_lz4) {
		scan = e->physical_length < img->blksz ? (size_t)e->physical_length
							: img->blksz;
		while (skip < scan && zb->in[skip] == 0)
			skip++;
		if (skip == scan) {
			ret = ek_fail(err, -EUCLEAN,
				      "inode %llu: pcluster at byte %llu of extent %llu starts with a block of zeros",
				      (unsigned long long)inode->nid,
				      (unsigned long long)e->physical,
				      (unsigned long long)e->logical);
			goto out;
		}
	}
	req.in = zb->in + skip;
	req.in_len = (size_t)e->physical_length - skip;
	req.out = direct ? buf : zb->out;
	req.out_len = want;
	req.partial = legacy_lz4 || e->partial || want < e->length;
	ret = ek_engine_decompress(img->engine, &req);
	if (ret) {
		ret = ek_fail(err, ret == -ENOMEM ? -ENOMEM : -EUCLEAN,
			      "inode %llu: extent at offset %llu (%llu bytes, %s pcluster at image byte %llu, %llu bytes): %s",
			      (unsigned long long)inode->nid,
			      (unsigned long long)e->logical,
			      (unsigned long long)e->length,
			      ek_algorithm_name(e->algorithm),
			      (unsigned long long)e->physical,
			      (unsigned long long)e->physical_length, req.why);
		goto out;
	}
	if (!direct)
		memcpy(buf, zb->out + within, n);
out:
	ctxpool_put(&img->zbufs, zb);
	return ret;
}

int zdata_read(ek_inode *inode, void *buf, size_t len, uint64_t off,
	       ek_error *err)
{
	uint8_t *dst = buf;

	while (len > 0) {
		ek_extent e;
		uint64_t within;
		size_t n;
		int ret = zmap_map(inode, off, &e, err);

		if (ret)
			return ret;
		within = off - e.logical;
		n = e.logical + e.length - off < len ? (size_t)(e.logical + e.length - off)
						     : len;
		switch (e.kind) {
		case EK_EXTENT_HOLE:
			memset(dst, 0, n);
			break;
		case EK_EXTENT_FRAGMENT:
			ret = fragment_read(inode->img, e.physical + within, dst, n, err);
			if (ret)
				ek_error_prefix(err, "inode %llu: fragment: ",
						(unsigned long long)inode->nid);
			break;
		case EK_EXTENT_PLAIN:
			ret = read_plain(inode, &e, within, dst, n, err);
			break;
		default:
			ret = read_compressed(inode, &e, within, dst, n, err);
			break;
		}
		if (ret)
			return ret;
		dst += n;
		off += n;
		len -= n;
	}
	return 0;
}
