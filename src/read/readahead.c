/* Readahead jobs on a small pool; decoding itself fans out through the
 * image's engine. */
#include <errno.h>
#include <stdlib.h>

#include "read/readahead.h"
#include "util/error.h"
#include "util/pool.h"

#define WINDOW_MIN (8u << 20)

struct ek_readahead {
	struct pool *pool;
};

struct ra_job {
	struct pool_job job;
	ek_inode *inode;
	uint64_t from, to;
};

int readahead_create(ek_image *img, struct ek_readahead **out, ek_error *err)
{
	struct ek_readahead *ra = calloc(1, sizeof(*ra));

	(void)img;
	if (!ra)
		return ek_fail(err, -ENOMEM, "out of memory");
	if (pool_create(1, &ra->pool)) {
		free(ra);
		return ek_fail(err, -EAGAIN, "cannot start the readahead thread");
	}
	*out = ra;
	return 0;
}

void readahead_destroy(struct ek_readahead *ra)
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
	zcache_prefetch(r->inode, r->from, r->to);
	zcache_fill_ahead(r->inode, r->from, r->to);
	ek_inode_put(r->inode);
	free(r);
}

void readahead_note(struct ek_readahead *ra, ek_inode *inode, uint64_t off,
		    size_t len)
{
	uint64_t end = off + len, window, target, until;
	struct ra_job *r;

	if (atomic_exchange(&inode->ra_next, end) != off)
		return;   /* not where the last read ended: random access */
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
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	r->inode = ek_inode_ref(inode);
	r->from = until;
	r->to = target;
	r->job.run = run_ra;
	r->job.detached = true;
	pool_submit(ra->pool, &r->job);
}
