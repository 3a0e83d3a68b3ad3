/*
 * Compressed files: reading bytes through the extent map.
 *
 * Without a cache (fsck, extraction: every extent is read once) an extent
 * is decoded straight into the caller's buffer when the caller wants all
 * of it, else into scratch, only as far as needed.
 *
 * With a cache (mounts, in-process readers), a read first makes sure every
 * compressed extent it touches is cached or being decoded (zcache.c), then
 * copies bytes out of the cache.  A sequential reader also gets the
 * following extents decoded in the background (readahead).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec/engine.h"
#include "read/badextents.h"
#include "read/blocks.h"
#include "read/cache.h"
#include "read/internal.h"
#include "read/readahead.h"
#include "read/zcache.h"
#include "read/zdata.h"
#include "read/zdecode.h"
#include "read/zmap.h"


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
		return err_fail(err, -EUCLEAN, "inode %llu: interlaced extent at %llu longer than a block",
			       (unsigned long long)inode->nid, (unsigned long long)e->logical);
	pos = (e->logical + within) & (blksz - 1);
	first = n < blksz - pos ? n : (size_t)(blksz - pos);
	ret = read_raw(inode, e, e->physical + pos, buf, first, err);
	if (!ret && n > first)
		ret = read_raw(inode, e, e->physical, buf + first, n - first, err);
	return ret;
}

/* Decode the first `want` bytes of extent e, whose pcluster is in `in`,
 * into out; a corrupt extent is remembered. */
static int decode_pcluster(ek_inode *inode, const ek_extent *e, const uint8_t *in,
			   uint8_t *out, size_t want, ek_error *err)
{
	struct dreq req = { .algorithm = e->algorithm };
	size_t skip;
	bool legacy;
	int ret = zdecode_stream_start(inode, e, in, &skip, &legacy, err);

	if (!ret) {
		req.in = in + skip;
		req.in_len = (size_t)e->physical_length - skip;
		req.out = out;
		req.out_len = want;
		req.partial = legacy || e->partial || want < e->length;
		ret = engine_decompress(inode->img->engine, &req);
		if (ret)
			ret = zdecode_failed(inode, e, ret, req.why, err);
	}
	if (ret == -EUCLEAN)
		bad_extents_add(inode->img->bad, inode->nid, e->logical, err);
	return ret;
}

static int pcluster_read_failed(ek_inode *inode, const ek_extent *e, ek_error *err)
{
	err_prefix(err, "inode %llu: pcluster of extent at %llu: ",
			(unsigned long long)inode->nid, (unsigned long long)e->logical);
	return err->code;
}

/* Decode the first `want` bytes of extent e into out, synchronously. */
static int decode_sync(ek_inode *inode, const ek_extent *e, uint8_t *out,
		       size_t want, ek_error *err)
{
	ek_image *img = inode->img;
	struct zbuf *zb;
	ek_error local;
	int ret;

	if (!err)
		err = &local;   /* the failure is remembered even if not shown */
	ret = bad_extents_check(img->bad, inode->nid, e->logical, err);
	if (ret)
		return ret;
	zb = ctxpool_get(&img->zbufs);
	if (!zb)
		return err_fail(err, -ENOMEM, "out of memory");
	if (zbuf_grow(&zb->in, &zb->in_cap, (size_t)e->physical_length))
		ret = err_fail(err, -ENOMEM, "out of memory");
	else if (read_raw(inode, e, e->physical, zb->in, (size_t)e->physical_length, err))
		ret = pcluster_read_failed(inode, e, err);
	else
		ret = decode_pcluster(inode, e, zb->in, out, want, err);
	ctxpool_put(&img->zbufs, zb);
	return ret;
}

/* Uncached reads of several whole extents (fsck, extraction): those whose
 * pclusters lie back to back in the image are read with one I/O, up to
 * these limits, then each is decoded straight into the caller's buffer. */
#define RUN_EXTENTS 64
#define RUN_IN_BYTES (1u << 20)

static bool extends_run(ek_inode *inode, const ek_extent *prev, const ek_extent *y,
			size_t out, size_t in, size_t len)
{
	return y->kind == EK_EXTENT_COMPRESSED && !y->in_metadata &&
	       y->logical == prev->logical + prev->length &&
	       y->physical == prev->physical + prev->physical_length &&
	       y->length <= len - out && y->physical_length <= RUN_IN_BYTES - in &&
	       !bad_extents_check(inode->img->bad, inode->nid, y->logical, NULL);
}

/* first: a whole extent wanted from its start, len >= its length.  *done:
 * the bytes of buf filled (whole extents). */
static int read_run(ek_inode *inode, const ek_extent *first, uint8_t *buf,
		    size_t len, size_t *done, ek_error *err)
{
	ek_extent run[RUN_EXTENTS];
	size_t n = 1, out = (size_t)first->length, in = (size_t)first->physical_length, i;
	struct zbuf *zb;
	ek_error local;
	int ret = 0;

	if (!err)
		err = &local;
	run[0] = *first;
	if (!first->in_metadata && in <= RUN_IN_BYTES &&
	    !bad_extents_check(inode->img->bad, inode->nid, first->logical, NULL))
		while (n < RUN_EXTENTS && out < len &&
		       !zmap_map(inode, run[n - 1].logical + run[n - 1].length, &run[n], NULL) &&
		       extends_run(inode, &run[n - 1], &run[n], out, in, len)) {
			out += (size_t)run[n].length;
			in += (size_t)run[n].physical_length;
			n++;
		}
	*done = out;
	if (n == 1)
		return decode_sync(inode, first, buf, (size_t)first->length, err);
	zb = ctxpool_get(&inode->img->zbufs);
	if (!zb)
		return err_fail(err, -ENOMEM, "out of memory");
	if (zbuf_grow(&zb->in, &zb->in_cap, in))
		ret = err_fail(err, -ENOMEM, "out of memory");
	else if (image_read(inode->img, first->physical, zb->in, in, err))
		ret = pcluster_read_failed(inode, first, err);
	for (i = 0, in = 0; !ret && i < n; in += (size_t)run[i++].physical_length)
		ret = decode_pcluster(inode, &run[i], zb->in + in,
				      buf + (run[i].logical - first->logical),
				      (size_t)run[i].length, err);
	ctxpool_put(&inode->img->zbufs, zb);
	return ret;
}

/* Uncached path: decode into buf when the whole extent is wanted from
 * its start, else the needed prefix into scratch. */
static int read_compressed(ek_inode *inode, const ek_extent *e, uint64_t within,
			   uint8_t *buf, size_t n, ek_error *err)
{
	size_t want = (size_t)(within + n);
	struct zbuf *zb;
	int ret;

	if (within == 0)
		return decode_sync(inode, e, buf, want, err);
	/* A known bad extent fails before a buffer is sized for it. */
	ret = bad_extents_check(inode->img->bad, inode->nid, e->logical, err);
	if (ret)
		return ret;
	zb = ctxpool_get(&inode->img->zbufs);
	if (!zb || zbuf_grow(&zb->out, &zb->out_cap, want)) {
		if (zb)
			ctxpool_put(&inode->img->zbufs, zb);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	ret = decode_sync(inode, e, zb->out, want, err);
	if (!ret)
		memcpy(buf, zb->out + within, n);
	ctxpool_put(&inode->img->zbufs, zb);
	return ret;
}

/* A compressed extent through the cache (or around it, if too big).
 * When another thread is decoding it, wait for that rather than decode
 * it twice; if that decode fails, try (and fail) here, for the error. */
static int read_cached(ek_inode *inode, const ek_extent *e, uint64_t within,
		       uint8_t *buf, size_t n, bool drop_behind, ek_error *err)
{
	struct cache_entry *ce;
	int attempt, ret;

	for (attempt = 0; attempt < 2; attempt++) {
		ce = cache_get(inode->cache, inode->nid, e->logical);
		if (!ce) {
			ret = zcache_fill(inode, e->logical, e->logical + 1, err);
			if (ret)
				return ret;
			ce = cache_get(inode->cache, inode->nid, e->logical);
			if (!ce)   /* too big to cache */
				return read_compressed(inode, e, within, buf, n, err);
		}
		if (!cache_wait(inode->cache, ce)) {
			memcpy(buf, ce->data + within, n);
			if (drop_behind && within + n == e->length)
				cache_drop(inode->cache, ce);
			cache_put(inode->cache, ce);
			return 0;
		}
		cache_put(inode->cache, ce);
	}
	/* Abandoned twice without a remembered failure: decode around it. */
	return read_compressed(inode, e, within, buf, n, err);
}

int zdata_read(ek_inode *inode, void *buf, size_t len, uint64_t off,
	       size_t *done, ek_error *err)
{
	ek_image *img = inode->img;
	uint8_t *dst = buf;
	size_t want = len;
	struct ra_plan plan = { 0 };
	int ret;

	if (inode->cache) {
		/* Readahead first, so that it runs beside this read's own
		 * decoding; then the request's missing extents, in batches;
		 * read-around of a random read only after them, so that it
		 * never delays the read itself. */
		if (img->readahead)
			readahead_note(img->readahead, inode, off, len, &plan);
		ret = zcache_fill(inode, off, off + len, err);
		if (ret)
			return ret;
		if (img->readahead)
			readahead_around(img->readahead, inode, &plan);
	}
	while (len > 0) {
		ek_extent e;
		uint64_t within;
		size_t n;

		ret = zmap_map(inode, off, &e, err);
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
			*done = want - len;   /* the caller reads it */
			return 0;
		case EK_EXTENT_PLAIN:
			ret = read_plain(inode, &e, within, dst, n, err);
			break;
		default:
			if (inode->cache)
				ret = read_cached(inode, &e, within, dst, n, plan.drop_behind, err);
			else if (within == 0 && n == e.length && len > n)
				ret = read_run(inode, &e, dst, len, &n, err);
			else
				ret = read_compressed(inode, &e, within, dst, n, err);
			break;
		}
		if (ret)
			return ret;
		dst += n;
		off += n;
		len -= n;
	}
	*done = want;
	return 0;
}
