/*
 * Compressed files: reading bytes through the extent map.
 *
 * Without a cache (fsck, extraction: every extent is read once) an extent
 * is decoded straight into the caller's buffer when the caller wants all
 * of it, else into scratch, only as far as needed.
 *
 * With a cache (mounts, in-process readers), a read first makes sure every
 * compressed extent it touches is cached: the missing ones have their
 * pclusters read in one batch (several I/Os in flight) and decoded in one
 * batch through the engine's asynchronous call, then bytes are copied out
 * of the cache.  A sequential reader also gets the following extents
 * decoded in the background (readahead).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec/engine.h"
#include "read/badmemo.h"
#include "read/cache.h"
#include "read/internal.h"
#include "read/readahead.h"

#define BATCH_MAX 64u   /* extents decoded together */

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

/* Where the stream starts in a pcluster read into `in`: after the zero
 * padding, which is shorter than a block (0padding); legacy LZ4 images
 * without it start at once and decode as a prefix. */
static int stream_start(ek_inode *inode, const ek_extent *e, const uint8_t *in,
			size_t *skip, bool *legacy, ek_error *err)
{
	ek_image *img = inode->img;
	size_t scan;

	*skip = 0;
	*legacy = e->algorithm == EROFS_ALG_LZ4 &&
		  !(img->sb.feature_incompat & EROFS_INCOMPAT_ZERO_PADDING);
	if (*legacy)
		return 0;
	scan = e->physical_length < img->blksz ? (size_t)e->physical_length : img->blksz;
	while (*skip < scan && in[*skip] == 0)
		(*skip)++;
	if (*skip == scan)
		return ek_fail(err, -EUCLEAN,
			       "inode %llu: pcluster at byte %llu of extent %llu starts with a block of zeros",
			       (unsigned long long)inode->nid, (unsigned long long)e->physical,
			       (unsigned long long)e->logical);
	return 0;
}

static int decode_failed(ek_inode *inode, const ek_extent *e, int code,
			 const char *why, ek_error *err)
{
	return ek_fail(err, code == -ENOMEM ? -ENOMEM : -EUCLEAN,
		       "inode %llu: extent at offset %llu (%llu bytes, %s pcluster at image byte %llu, %llu bytes): %s",
		       (unsigned long long)inode->nid, (unsigned long long)e->logical,
		       (unsigned long long)e->length, ek_algorithm_name(e->algorithm),
		       (unsigned long long)e->physical,
		       (unsigned long long)e->physical_length, why);
}

/* Decode the first `want` bytes of extent e into out, synchronously. */
static int decode_sync(ek_inode *inode, const ek_extent *e, uint8_t *out,
		       size_t want, ek_error *err)
{
	ek_image *img = inode->img;
	struct ek_dreq req = { .algorithm = e->algorithm };
	struct zbuf *zb;
	ek_error local;
	size_t skip;
	bool legacy;
	int ret;

	if (!err)
		err = &local;   /* the failure is remembered even if not shown */
	ret = badmemo_check(img->bad, inode->nid, e->logical, err);

	if (ret)
		return ret;
	zb = ctxpool_get(&img->zbufs);
	if (!zb)
		return ek_fail(err, -ENOMEM, "out of memory");
	if (grow(&zb->in, &zb->in_cap, (size_t)e->physical_length)) {
		ret = ek_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = read_raw(inode, e, e->physical, zb->in, (size_t)e->physical_length, err);
	if (ret) {
		ek_error_prefix(err, "inode %llu: pcluster of extent at %llu: ",
				(unsigned long long)inode->nid, (unsigned long long)e->logical);
		goto out;
	}
	ret = stream_start(inode, e, zb->in, &skip, &legacy, err);
	if (ret)
		goto out;
	req.in = zb->in + skip;
	req.in_len = (size_t)e->physical_length - skip;
	req.out = out;
	req.out_len = want;
	req.partial = legacy || e->partial || want < e->length;
	ret = ek_engine_decompress(img->engine, &req);
	if (ret)
		ret = decode_failed(inode, e, ret, req.why, err);
out:
	if (ret == -EUCLEAN)
		badmemo_add(img->bad, inode->nid, e->logical, err);
	ctxpool_put(&img->zbufs, zb);
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
	zb = ctxpool_get(&inode->img->zbufs);
	if (!zb || grow(&zb->out, &zb->out_cap, want)) {
		if (zb)
			ctxpool_put(&inode->img->zbufs, zb);
		return ek_fail(err, -ENOMEM, "out of memory");
	}
	ret = decode_sync(inode, e, zb->out, want, err);
	if (!ret)
		memcpy(buf, zb->out + within, n);
	ctxpool_put(&inode->img->zbufs, zb);
	return ret;
}

/* ------------------------------------------------------------ batches */

struct batch_item {
	ek_extent e;
	struct ek_cache_entry *ce;
	uint8_t *in;
	struct ek_dreq req;
	int ready;
};

/*
 * Cache the compressed extents of [*offp, end), at most BATCH_MAX of them:
 * map them, read the missing pclusters in one batch, decode them in one
 * batch, and publish them; *offp moves past the last one mapped.
 */
static int fill_cache_batch(ek_inode *inode, uint64_t *offp, uint64_t end, ek_error *err)
{
	uint64_t off = *offp;
	ek_image *img = inode->img;
	struct batch_item items[BATCH_MAX];
	struct ek_io_req ios[BATCH_MAX];
	struct ek_dreq *reqs[BATCH_MAX];
	size_t n = 0, nio = 0, nreq = 0, i;
	int ret = 0;

	while (off < end && n < BATCH_MAX) {
		struct batch_item *it = &items[n];

		ret = zmap_map(inode, off, &it->e, err);
		if (ret)
			break;
		off = it->e.logical + it->e.length;
		if (it->e.kind != EK_EXTENT_COMPRESSED ||
		    ek_cache_contains(img->cache, inode->nid, it->e.logical))
			continue;
		ret = badmemo_check(img->bad, inode->nid, it->e.logical, err);
		if (ret)
			break;
		it->ce = ek_cache_alloc(img->cache, (size_t)it->e.length);
		it->in = malloc((size_t)it->e.physical_length);
		it->ready = 0;
		if (!it->ce || !it->in) {
			ek_cache_put(img->cache, it->ce);
			free(it->in);
			ret = ek_fail(err, -ENOMEM, "out of memory");
			break;
		}
		n++;
	}
	/* Inline tails come from metadata; pclusters go out as one batch. */
	for (i = 0; i < n && !ret; i++) {
		struct batch_item *it = &items[i];

		if (it->e.in_metadata) {
			ret = meta_read(img, inode->in_metabox, it->e.physical, it->in,
					(size_t)it->e.physical_length, err);
			continue;
		}
		if (it->e.physical > img->size ||
		    it->e.physical_length > img->size - it->e.physical) {
			ret = ek_fail(err, -EUCLEAN, "inode %llu: pcluster past the end of the image",
				      (unsigned long long)inode->nid);
			break;
		}
		ios[nio] = (struct ek_io_req){
			.buf = it->in, .len = (size_t)it->e.physical_length,
			.offset = it->e.physical,
		};
		nio++;
	}
	if (!ret && nio) {
		img->io->ops->read_batch(img->io, ios, nio);
		for (i = 0; i < nio; i++)
			if (ios[i].result)
				ret = ek_fail(err, ios[i].result, "inode %llu: reading a pcluster at %llu: %s",
					      (unsigned long long)inode->nid,
					      (unsigned long long)ios[i].offset,
					      ek_strerror(ios[i].result));
	}
	for (i = 0; i < n && !ret; i++) {
		struct batch_item *it = &items[i];
		size_t skip;
		bool legacy;

		ret = stream_start(inode, &it->e, it->in, &skip, &legacy, err);
		if (ret)
			break;
		it->req = (struct ek_dreq){
			.algorithm = it->e.algorithm,
			.in = it->in + skip,
			.in_len = (size_t)it->e.physical_length - skip,
			.out = it->ce->data,
			.out_len = (size_t)it->e.length,
			.partial = legacy || it->e.partial,
		};
		reqs[nreq++] = &it->req;
	}
	if (!ret && nreq) {
		ek_engine_run_batch(img->engine, reqs, nreq);
		for (i = 0; i < n; i++) {
			struct batch_item *it = &items[i];

			if (it->req.result) {
				ek_error one;

				decode_failed(inode, &it->e, it->req.result, it->req.why, &one);
				badmemo_add(img->bad, inode->nid, it->e.logical, &one);
				if (!ret) {
					ret = one.code;
					if (err)
						*err = one;
				}
				continue;
			}
			ek_cache_insert(img->cache, it->ce, inode->nid, it->e.logical);
		}
	}
	for (i = 0; i < n; i++) {
		ek_cache_put(img->cache, items[i].ce);
		free(items[i].in);
	}
	*offp = off;
	return ret;
}

void zdata_prefetch(ek_inode *inode, uint64_t off, uint64_t end)
{
	ek_image *img = inode->img;
	ek_extent first, last;
	uint64_t from, to;

	if (!img->io->ops->prefetch || off >= end || end > inode->raw.size ||
	    zmap_map(inode, off, &first, NULL) || zmap_map(inode, end - 1, &last, NULL) ||
	    first.kind != EK_EXTENT_COMPRESSED || last.kind != EK_EXTENT_COMPRESSED ||
	    first.in_metadata || last.in_metadata)
		return;
	from = first.physical;
	to = last.physical + last.physical_length;
	/* Not one run (or a damaged map): leave it to the reads. */
	if (to <= from || to - from > 2 * (end - off))
		return;
	img->io->ops->prefetch(img->io, from, to - from);
}

/* Make sure the compressed extents of [off, end) are cached, a batch at a
 * time.  Extents larger than the cache can hold are left to the uncached
 * path. */
int zdata_fill_cache(ek_inode *inode, uint64_t off, uint64_t end, ek_error *err)
{
	int ret = 0;

	if (end > inode->raw.size)
		end = inode->raw.size;
	while (off < end && !ret) {
		uint64_t before = off;

		ret = fill_cache_batch(inode, &off, end, err);
		if (off <= before)   /* the map did not move: never spin */
			break;
	}
	return ret;
}

/* A compressed extent through the cache (or around it, if too big). */
static int read_cached(ek_inode *inode, const ek_extent *e, uint64_t within,
		       uint8_t *buf, size_t n, ek_error *err)
{
	ek_image *img = inode->img;
	struct ek_cache_entry *ce = ek_cache_get(img->cache, inode->nid, e->logical);
	int ret;

	if (!ce) {
		ret = zdata_fill_cache(inode, e->logical, e->logical + 1, err);
		if (ret)
			return ret;
		ce = ek_cache_get(img->cache, inode->nid, e->logical);
		if (!ce)
			return read_compressed(inode, e, within, buf, n, err);
	}
	memcpy(buf, ce->data + within, n);
	ek_cache_put(img->cache, ce);
	return 0;
}

int zdata_read(ek_inode *inode, void *buf, size_t len, uint64_t off,
	       ek_error *err)
{
	ek_image *img = inode->img;
	uint8_t *dst = buf;
	int ret;

	if (img->cache) {
		/* The whole request's missing extents in one batch. */
		ret = zdata_fill_cache(inode, off, off + len, err);
		if (ret)
			return ret;
		if (img->readahead)
			readahead_note(img->readahead, inode, off, len);
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
			ret = fragment_read(inode->img, e.physical + within, dst, n, err);
			if (ret)
				ek_error_prefix(err, "inode %llu: fragment: ",
						(unsigned long long)inode->nid);
			break;
		case EK_EXTENT_PLAIN:
			ret = read_plain(inode, &e, within, dst, n, err);
			break;
		default:
			ret = img->cache ? read_cached(inode, &e, within, dst, n, err)
					 : read_compressed(inode, &e, within, dst, n, err);
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
