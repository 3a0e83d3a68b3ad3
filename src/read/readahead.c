/* Readahead and read-around jobs on one background thread; decoding
 * itself fans out through the image's engine. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read/cache.h"
#include "read/readahead.h"
#include "read/zcache.h"
#include "read/zmap.h"
#include "util/error.h"
#include "util/pool.h"

#define WINDOW_MIN (8u << 20)
/* Read-around: the aligned window of file data around a random read is
 * decoded in the background, on a CPU that would otherwise wait with the
 * reader.  Its pclusters are adjacent, so they come in the read's own I/O;
 * later reads near it then hit the cache.  Measured with fio randread 4k
 * through the mount (MiB/s, 64 KiB clusters): no read-around 127-144,
 * 1 MiB windows 346-355 (the kernel: 140); 128 KiB windows, kept for small
 * extents before, did less at every cluster size.  Extents bigger than
 * AROUND_EXTENT_MAX are their own read-around. */
#define AROUND (1u << 20)
#define AROUND_EXTENT_MAX (256u << 10)
#define AROUND_QUEUED_MAX 4   /* beyond this, random readers outrun it */

struct readahead {
	struct pool *pool;
	atomic_uint around_queued;
};

struct ra_job {
	struct pool_job job;
	struct readahead *ra;
	ek_inode *inode;
	uint64_t from, to;
	bool around;
};

int readahead_create(ek_image *img, struct readahead **out, ek_error *err)
{
	struct readahead *ra = calloc(1, sizeof(*ra));

	(void)img;
	if (!ra)
		return err_fail(err, -ENOMEM, "out of memory");
	if (pool_create(1, &ra->pool)) {
		free(ra);
		return err_fail(err, -EAGAIN, "cannot start the readahead thread");
	}
	*out = ra;
	return 0;
}

void readahead_destroy(struct readahead *ra)
{
	if (ra) {
		pool_destroy(ra->pool);
		free(ra);
	}
}

static void run_ra(struct pool_job *job, unsigned int worker)
{
	struct ra_job *r = (struct ra_job *)job;

	(void)worker;
	if (!r->around)
		zcache_prefetch(r->inode, r->from, r->to);
	zcache_fill_ahead(r->inode, r->from, r->to, r->around ? NULL : &r->inode->ra_next);
	if (r->around)
		atomic_fetch_sub(&r->ra->around_queued, 1);
	ek_inode_put(r->inode);
	free(r);
}

static void queue(struct readahead *ra, ek_inode *inode, uint64_t from,
		  uint64_t to, bool around)
{
	struct ra_job *r = calloc(1, sizeof(*r));

	if (!r) {
		if (around)
			atomic_fetch_sub(&ra->around_queued, 1);
		return;
	}
	r->ra = ra;
	r->inode = inode_ref(inode);
	r->from = from;
	r->to = to;
	r->around = around;
	r->job.run = run_ra;
	r->job.detached = true;
	pool_submit(ra->pool, &r->job);
}

/* Whether the extent at off is cached or being decoded (NULL: unmapped). */
static bool have(ek_inode *inode, uint64_t off, ek_extent *e)
{
	if (zmap_map(inode, off, e, NULL) || e->kind != EK_EXTENT_COMPRESSED)
		return true;   /* nothing to decode there */
	return cache_contains(inode->cache, inode->nid, e->logical);
}

/* The read-around window of a random read at off: false when its extent
 * is not small (big extents are their own read-around). */
static bool readahead_window(ek_inode *inode, uint64_t off, uint64_t *fromp,
			     uint64_t *top)
{
	uint64_t from = off & ~(uint64_t)(AROUND - 1), to = from + AROUND;
	ek_extent here;

	if (to > inode->raw.size)
		to = inode->raw.size;
	if (from >= to || zmap_map(inode, off, &here, NULL) ||
	    here.kind != EK_EXTENT_COMPRESSED || here.length > AROUND_EXTENT_MAX)
		return false;
	*fromp = from;
	*top = to;
	return true;
}

int ek_read_around(ek_inode *inode, uint64_t off, uint64_t *from, uint64_t *to)
{
	return inode->img->readahead && off < inode->raw.size &&
	       readahead_window(inode, off, from, to);
}

void readahead_around(struct readahead *ra, ek_inode *inode,
		      const struct ra_plan *plan)
{
	if (!plan->around)
		return;
	if (atomic_fetch_add(&ra->around_queued, 1) >= AROUND_QUEUED_MAX) {
		atomic_fetch_sub(&ra->around_queued, 1);
		return;
	}
	queue(ra, inode, plan->from, plan->to, true);
}

void readahead_note(struct readahead *ra, ek_inode *inode, uint64_t off,
		    size_t len, struct ra_plan *plan)
{
	uint64_t end = off + len, window, target, until;
	ek_extent first, last;

	memset(plan, 0, sizeof(*plan));
	if (atomic_exchange(&inode->ra_next, end) != off) {
		/* Random access.  Its window's pclusters are fetched along
		 * with the read's own (one I/O where there would be two), to
		 * be decoded after the read; unless both ends of the window
		 * are cached already (it was read around before). */
		if (readahead_window(inode, off, &plan->from, &plan->to) &&
		    !(have(inode, plan->from, &first) && have(inode, plan->to - 1, &last))) {
			plan->around = true;
			zcache_prefetch(inode, plan->from, plan->to);
		}
		return;
	}
	/* A sequential reader does not come back: what it has finished is
	 * dropped behind, so that its memory is reused instead of fresh
	 * pages being faulted in, and readahead stays ahead of it. */
	plan->drop_behind = true;
	window = (uint64_t)len * 4 > WINDOW_MIN ? (uint64_t)len * 4 : WINDOW_MIN;
	target = end + window;
	if (target > inode->raw.size)
		target = inode->raw.size;
	until = atomic_load(&inode->ra_until);
	if (until < end)
		until = end;
	/* Issue when less than half a window is still ahead. */
	if (target <= until + window / 2 ||
	    !atomic_compare_exchange_strong(&inode->ra_until, &(uint64_t){
		    atomic_load(&inode->ra_until) }, target))
		return;
	queue(ra, inode, until, target, false);
}
