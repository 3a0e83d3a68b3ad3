/*
 * Filling the decoded-extent cache, a batch at a time.
 *
 * A batch claims the compressed extents of a range that nobody has cached
 * or is decoding (a claimed extent is pending: a second reader waits for
 * it instead of decoding it again), reads their pclusters back to back
 * into one reused buffer, and decodes them through the engine's
 * asynchronous call, publishing each extent the moment it is decoded.
 * A reader filling what it is about to copy decodes a share itself;
 * readahead only submits, and reads the next batch's pclusters while the
 * engine decodes this one.  Claimed extents that are not decoded are
 * abandoned, so that nobody waits for them forever.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "codec/engine.h"
#include "read/badextents.h"
#include "read/blocks.h"
#include "read/cache.h"
#include "read/zcache.h"
#include "read/zdecode.h"
#include "read/zmap.h"

#define BATCH_MAX 256u           /* extents decoded together, at most */
#define BATCH_BYTES (1u << 20)   /* and about this much decoded data */

struct batch_item {
	ek_extent e;
	struct cache_entry *ce;   /* claimed, pending until decoded */
	uint8_t *in;
	struct dreq req;
};

struct batch {
	ek_inode *inode;
	struct batch_item items[BATCH_MAX];
	struct dreq *reqs[BATCH_MAX];
	size_t n, nreq;
	struct zbuf *scratch;        /* holds every item's pcluster */
	pthread_mutex_t lock;
	pthread_cond_t settled;
	size_t outstanding;          /* requests not yet completed */
	int failed;
	ek_error first;              /* the first decode failure */
};

/* Batches come from the image's pool: a struct batch is some 60 KB, and
 * one taken fresh per fill cost an mmap each under ASan (4,253 of them in
 * one fsck --extract of 8,067 files). */
void *zcache_batch_new(void)
{
	struct batch *b = malloc(sizeof(*b));

	if (!b)
		return NULL;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->settled, NULL);
	return b;
}

void zcache_batch_free(void *p)
{
	struct batch *b = p;

	pthread_cond_destroy(&b->settled);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

static struct batch *batch_get(ek_inode *inode)
{
	struct batch *b = ctxpool_get(&inode->img->batches);

	if (!b)
		return NULL;
	b->inode = inode;
	b->n = b->nreq = b->outstanding = 0;
	b->scratch = NULL;
	b->failed = 0;
	return b;
}

/* A decode finished (on any thread): publish the extent at once, so
 * that whoever waits for it goes on before the rest of the batch is done. */
static void item_decoded(struct dreq *r, void *ctx)
{
	struct batch *b = ctx;
	struct batch_item *it = r->user;
	ek_image *img = b->inode->img;
	ek_error one;

	if (!r->result) {
		cache_publish(b->inode->cache, it->ce);
	} else {
		zdecode_failed(b->inode, &it->e, r->result, r->why, &one);
		bad_extents_add(img->bad, b->inode->nid, it->e.logical, &one);
		cache_abandon(b->inode->cache, it->ce);
	}
	/* The batch may be freed as soon as the count drops: touch nothing
	 * of it after the unlock. */
	pthread_mutex_lock(&b->lock);
	if (r->result && !b->failed) {
		b->failed = 1;
		b->first = one;
	}
	if (--b->outstanding == 0)
		pthread_cond_signal(&b->settled);
	pthread_mutex_unlock(&b->lock);
}

/* Claim the compressed extents of [*offp, end) that nobody has cached or
 * is decoding, up to BATCH_MAX of them or BATCH_BYTES decoded; *offp
 * moves past the last extent mapped. */
static int claim_extents(struct batch *b, uint64_t *offp, uint64_t end, ek_error *err)
{
	ek_inode *inode = b->inode;
	ek_image *img = inode->img;
	uint64_t off = *offp;
	size_t bytes = 0;
	int ret = 0;

	while (off < end && b->n < BATCH_MAX && bytes < BATCH_BYTES) {
		struct batch_item *it = &b->items[b->n];

		ret = zmap_map(inode, off, &it->e, err);
		if (ret)
			break;
		off = it->e.logical + it->e.length;
		if (it->e.kind != EK_EXTENT_COMPRESSED)
			continue;
		ret = bad_extents_check(img->bad, inode->nid, it->e.logical, err);
		if (ret)
			break;
		/* Before any buffer is sized by it. */
		if (!it->e.in_metadata && (it->e.physical > img->size ||
					   it->e.physical_length > img->size - it->e.physical)) {
			ret = err_fail(err, -EUCLEAN, "inode %llu: pcluster past the end of the image",
				      (unsigned long long)inode->nid);
			break;
		}
		ret = cache_claim(inode->cache, inode->nid, it->e.logical,
				     (size_t)it->e.length, &it->ce);
		if (ret < 0) {
			ret = err_fail(err, ret, "out of memory");
			break;
		}
		if (ret == 0)
			continue;   /* cached, pending elsewhere, or too big */
		ret = 0;
		bytes += (size_t)it->e.length;
		b->n++;
	}
	*offp = off;
	return ret;
}

/* One reused buffer for the batch's pclusters, back to back (as they
 * mostly lie in the image, so that one read can fill several): no
 * allocation, and no fresh pages to fault in, per pcluster. */
static int place_pclusters(struct batch *b, ek_error *err)
{
	size_t total = 0, at = 0, i;

	for (i = 0; i < b->n; i++)
		total += (size_t)b->items[i].e.physical_length;
	b->scratch = ctxpool_get(&b->inode->img->zbufs);
	if (!b->scratch || zbuf_grow(&b->scratch->in, &b->scratch->in_cap, total))
		return err_fail(err, -ENOMEM, "out of memory");
	for (i = 0; i < b->n; i++) {
		b->items[i].in = b->scratch->in + at;
		at += (size_t)b->items[i].e.physical_length;
	}
	return 0;
}

/* Read the claimed extents' pclusters: inline tails from metadata, the
 * rest as one batch of I/Os. */
static int read_pclusters(struct batch *b, ek_error *err)
{
	ek_inode *inode = b->inode;
	ek_image *img = inode->img;
	struct io_req ios[BATCH_MAX];
	size_t nio = 0, i;
	int ret = 0;

	for (i = 0; i < b->n && !ret; i++) {
		struct batch_item *it = &b->items[i];

		if (it->e.in_metadata) {
			ret = meta_read(img, inode->in_metabox, it->e.physical, it->in,
					(size_t)it->e.physical_length, err);
			continue;
		}
		ios[nio++] = (struct io_req){
			.buf = it->in, .len = (size_t)it->e.physical_length,
			.offset = it->e.physical,
		};
	}
	if (ret || !nio)
		return ret;
	img->io->ops->read_batch(img->io, ios, nio);
	for (i = 0; i < nio; i++)
		if (ios[i].result)
			return err_fail(err, ios[i].result, "inode %llu: reading a pcluster at %llu: %s",
				       (unsigned long long)inode->nid,
				       (unsigned long long)ios[i].offset,
				       io_strerror(img->io, ios[i].result));
	return 0;
}

/* Claim, place and read a batch of [*offp, end) and set up its decode
 * requests; on failure everything claimed is abandoned. */
static int batch_prepare(struct batch *b, uint64_t *offp, uint64_t end, ek_error *err)
{
	size_t i;
	int ret = claim_extents(b, offp, end, err);

	if (!ret && b->n)
		ret = place_pclusters(b, err);
	if (!ret)
		ret = read_pclusters(b, err);
	for (i = 0; i < b->n && !ret; i++) {
		struct batch_item *it = &b->items[i];
		size_t skip;
		bool legacy;

		ret = zdecode_stream_start(b->inode, &it->e, it->in, &skip, &legacy, err);
		if (ret)
			break;
		it->req = (struct dreq){
			.algorithm = it->e.algorithm,
			.in = it->in + skip,
			.in_len = (size_t)it->e.physical_length - skip,
			.out = it->ce->data,
			.out_len = (size_t)it->e.length,
			.partial = legacy || it->e.partial,
			.user = it,
		};
		b->reqs[b->nreq++] = &it->req;
	}
	if (ret) {
		for (i = 0; i < b->n; i++)
			cache_abandon(b->inode->cache, b->items[i].ce);
		b->nreq = 0;
	}
	b->outstanding = b->nreq;
	return ret;
}

/* Decode the batch, this thread taking a share; returns when done. */
static void batch_decode_here(struct batch *b)
{
	if (b->nreq)
		engine_run_batch(b->inode->img->engine, b->reqs, b->nreq,
					 item_decoded, b);
}

/* Hand the batch to the engine's workers and return at once (decode it
 * here if the engine has none, or refuses). */
static void batch_submit(struct batch *b)
{
	struct engine *engine = b->inode->img->engine;

	if (!b->nreq)
		return;
	if (!engine->workers || engine->ops->submit(engine, b->reqs, b->nreq, item_decoded, b))
		batch_decode_here(b);
}

/* Wait until every request completed, then release the batch; returns
 * the first decode failure. */
static int batch_finish(struct batch *b, ek_error *err)
{
	ek_image *img = b->inode->img;
	int ret = 0;
	size_t i;

	pthread_mutex_lock(&b->lock);
	while (b->outstanding)
		pthread_cond_wait(&b->settled, &b->lock);
	pthread_mutex_unlock(&b->lock);
	if (b->failed) {
		ret = b->first.code;
		if (err)
			*err = b->first;
	}
	for (i = 0; i < b->n; i++)
		cache_put(b->inode->cache, b->items[i].ce);
	if (b->scratch)
		ctxpool_put(&img->zbufs, b->scratch);
	ctxpool_put(&img->batches, b);
	return ret;
}

/* Extents larger than the cache can hold are left out: the reader decodes
 * those around the cache. */
int zcache_fill(ek_inode *inode, uint64_t off, uint64_t end, ek_error *err)
{
	uint64_t start = off;
	int ret = 0;

	if (end > inode->raw.size)
		end = inode->raw.size;
	while (off < end && !ret) {
		uint64_t before = off;
		struct batch *b = batch_get(inode);
		ek_error why = { 0, "" };

		if (!b)
			return err_fail(err, -ENOMEM, "out of memory");
		ret = batch_prepare(b, &off, end, &why);
		if (!ret) {
			batch_decode_here(b);
			ret = batch_finish(b, &why);
		} else {
			batch_finish(b, NULL);
			/* A bad extent after the first: the reader meets it in
			 * its turn, after whatever is wrong before it, so that
			 * problems are told in the order of the file. */
			if (off > start)
				return 0;
		}
		if (ret && err)
			*err = why;
		if (off <= before)   /* the map did not move: never spin */
			break;
	}
	return ret;
}

void zcache_fill_ahead(ek_inode *inode, uint64_t off, uint64_t end,
		       const _Atomic uint64_t *reader)
{
	struct batch *prev = NULL;
	ek_error ignored;

	if (end > inode->raw.size)
		end = inode->raw.size;
	while (off < end) {
		uint64_t before, at = reader ? atomic_load(reader) : 0;
		struct batch *b;

		/* What the reader has passed it decoded itself (and may have
		 * dropped behind it): decoding it again would be wasted. */
		if (off < at)
			off = at;
		if (off >= end)
			break;
		before = off;
		b = batch_get(inode);
		if (!b)
			break;
		if (batch_prepare(b, &off, end, &ignored)) {
			batch_finish(b, NULL);
			break;
		}
		batch_submit(b);
		if (prev)
			batch_finish(prev, NULL);
		prev = b;
		if (off <= before)
			break;
	}
	if (prev)
		batch_finish(prev, NULL);
}

void zcache_prefetch(ek_inode *inode, uint64_t off, uint64_t end)
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
