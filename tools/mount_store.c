/*
 * Page-cache prefill for the FUSE mount: see mount_store.h.
 */
#include "mount_store.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#define QUEUE_SLOTS 32
/* Bytes pushed on each side of a read at most: a 1 MiB cluster is pushed
 * whole, larger extents (big pclusters compress to more) only around it. */
#define WINDOW (512u * 1024)
/* Only small reads are offered: larger ones are the kernel's readahead. */
#define OFFER_MAX (128u * 1024)
/* What one push may take: any read-around window the library has, an
 * extent's 2 * WINDOW around a read; more is not worth the copy. */
#define PUSH_MAX (16u << 20)

struct offer {
	fuse_ino_t ino;
	ek_nid nid;
	uint64_t off, len;
};

struct page_store {
	struct fuse_session *se;
	ek_image *img;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct offer queue[QUEUE_SLOTS];
	unsigned int head, count;
	bool stopping;
	uint64_t page;
	char *buf;                /* grown to the largest push so far */
	size_t buf_cap;
};

static void store_range(struct page_store *ps, fuse_ino_t ino, const char *data,
			uint64_t from, uint64_t to)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(to - from);

	if (to <= from)
		return;
	bv.buf[0].mem = (void *)data;
	/* Fails harmlessly when the kernel has forgotten the inode or the
	 * filesystem is going away. */
	(void)fuse_lowlevel_notify_store(ps->se, ino, (off_t)from, &bv, 0);
}

/* Push the whole pages of [lo, hi) that lie outside the read. */
static void store_window(struct page_store *ps, ek_inode *inode, const struct offer *o,
			 uint64_t lo, uint64_t hi)
{
	uint64_t size = ek_inode_stat(inode)->size, skip_lo, skip_hi;
	ssize_t n;

	if (hi > size)
		hi = size;
	/* Whole pages only: the kernel marks a page valid only when it is
	 * filled (or ends the file). */
	lo = (lo + ps->page - 1) / ps->page * ps->page;
	if (hi != size)
		hi = hi / ps->page * ps->page;
	skip_lo = o->off / ps->page * ps->page;
	skip_hi = (o->off + o->len + ps->page - 1) / ps->page * ps->page;
	if (hi <= lo || (lo >= skip_lo && hi <= skip_hi) || hi - lo > PUSH_MAX)
		return;
	if (hi - lo > ps->buf_cap) {
		char *grown = realloc(ps->buf, hi - lo);

		if (!grown)
			return;
		ps->buf = grown;
		ps->buf_cap = hi - lo;
	}
	/* Mostly cached already: the read's own cluster, or the library's
	 * read-around of small clusters (being) decoded in the background. */
	n = ek_read(inode, ps->buf, hi - lo, lo, NULL);
	if (n != (ssize_t)(hi - lo))
		return;
	store_range(ps, o->ino, ps->buf, lo, skip_lo < hi ? skip_lo : hi);
	if (skip_hi < lo)
		skip_hi = lo;
	store_range(ps, o->ino, ps->buf + (skip_hi - lo), skip_hi, hi);
}

/* Push the pages of the extent holding `at`, at most WINDOW each side of
 * the read; extents with a read-around window are pushed with the window
 * (which the library decodes around a random read).  Returns where the
 * extent ends (0 when it could not be mapped). */
static uint64_t store_extent(struct page_store *ps, ek_inode *inode, const struct offer *o,
			     uint64_t at)
{
	uint64_t size = ek_inode_stat(inode)->size, lo, hi;
	ek_extent ext;

	if (at >= size || ek_map(inode, at, &ext, NULL))
		return 0;
	/* Plain data is cheap to read on demand; holes are zeros. */
	if (ext.kind != EK_EXTENT_COMPRESSED && ext.kind != EK_EXTENT_FRAGMENT)
		return ext.logical + ext.length;
	if (ext.kind == EK_EXTENT_COMPRESSED && ek_read_around(inode, at, &lo, &hi)) {
		store_window(ps, inode, o, lo, hi);
		return hi;
	}
	lo = ext.logical;
	hi = ext.logical + ext.length;
	if (o->off > WINDOW && lo < o->off - WINDOW)
		lo = o->off - WINDOW;
	if (hi > o->off + o->len + WINDOW)
		hi = o->off + o->len + WINDOW;
	store_window(ps, inode, o, lo, hi);
	return ext.logical + ext.length;
}

static void serve(struct page_store *ps, const struct offer *o)
{
	ek_inode *inode;
	uint64_t last = o->off + o->len - 1, first_end;

	if (ek_inode_get(ps->img, o->nid, &inode, NULL))
		return;
	first_end = store_extent(ps, inode, o, o->off);
	/* A read across an extent boundary: the second extent too. */
	if (first_end && last >= first_end)
		store_extent(ps, inode, o, last);
	ek_inode_put(inode);
}

static void *store_thread(void *arg)
{
	struct page_store *ps = arg;
	struct offer o;

	pthread_mutex_lock(&ps->lock);
	for (;;) {
		while (!ps->count && !ps->stopping)
			pthread_cond_wait(&ps->wake, &ps->lock);
		if (ps->stopping)
			break;
		o = ps->queue[ps->head];
		ps->head = (ps->head + 1) % QUEUE_SLOTS;
		ps->count--;
		pthread_mutex_unlock(&ps->lock);
		serve(ps, &o);
		pthread_mutex_lock(&ps->lock);
	}
	pthread_mutex_unlock(&ps->lock);
	return NULL;
}

struct page_store *page_store_start(struct fuse_session *se, ek_image *img)
{
	struct page_store *ps = calloc(1, sizeof(*ps));
	long page = sysconf(_SC_PAGESIZE);

	if (!ps)
		return NULL;
	ps->se = se;
	ps->img = img;
	ps->page = page > 0 ? (uint64_t)page : 4096;
	pthread_mutex_init(&ps->lock, NULL);
	pthread_cond_init(&ps->wake, NULL);
	if (pthread_create(&ps->thread, NULL, store_thread, ps)) {
		pthread_cond_destroy(&ps->wake);
		pthread_mutex_destroy(&ps->lock);
		free(ps);
		return NULL;
	}
	return ps;
}

void page_store_offer(struct page_store *ps, fuse_ino_t ino, ek_nid nid,
		      uint64_t off, uint64_t len)
{
	if (!ps || !len || len > OFFER_MAX)
		return;
	pthread_mutex_lock(&ps->lock);
	if (ps->count < QUEUE_SLOTS && !ps->stopping) {
		struct offer *o = &ps->queue[(ps->head + ps->count) % QUEUE_SLOTS];

		o->ino = ino;
		o->nid = nid;
		o->off = off;
		o->len = len;
		ps->count++;
		pthread_cond_signal(&ps->wake);
	}
	pthread_mutex_unlock(&ps->lock);
}

void page_store_stop(struct page_store *ps)
{
	if (!ps)
		return;
	pthread_mutex_lock(&ps->lock);
	ps->stopping = true;
	pthread_cond_signal(&ps->wake);
	pthread_mutex_unlock(&ps->lock);
	pthread_join(ps->thread, NULL);
	pthread_cond_destroy(&ps->wake);
	pthread_mutex_destroy(&ps->lock);
	free(ps->buf);
	free(ps);
}
