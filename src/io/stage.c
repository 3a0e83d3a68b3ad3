/*
 * A pool of CHUNK-sized, CHUNK-aligned pieces of the image, read on a ring
 * of its own and completed by one thread, so that the thread asking for a
 * range never waits for it.  Chunks are reclaimed least recently used
 * first, never while being read or copied from.
 *
 * FLOOR_CHUNKS cover the reads in flight ahead of a sequential reader.
 * Random readers need more: each of their misses in the decompressed-
 * cluster cache waits for the disk unless its compressed blocks are
 * already here, which is what the page cache gives the buffered path (it
 * ends up holding the whole image).  So the pool may grow by what its
 * creator lends it out of that cache's budget, up to the image's size:
 * measured on images of 131-166 MiB with a pool that held them, random
 * 4 KiB reads through the mount went from 0.70-1.04x the buffered path's
 * rate to 0.93-1.23x (bench/reports/direct.md).  Beyond the floor the
 * chunks are touched, and so resident (in steps of a huge page where the
 * kernel gives those), only once used.  A random reader
 * also gets the rest of the pool filled with the image in the background
 * (sweep_locked), as the page cache ends up holding it.
 */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "io/stage.h"
#include "util/hugebuf.h"

#define CHUNK ((size_t)512 << 10)
#define FLOOR_CHUNKS 32u            /* 16 MiB, registered with the ring */
#define FETCH_MAX (FLOOR_CHUNKS / 2) /* chunks one fetch may take */
#define WINDOW_MIN 2u               /* readahead windows, in chunks */
#define WINDOW_MAX (FLOOR_CHUNKS / 4)
#define SMALL_MISS (CHUNK / 32)
#define RING_DEPTH (FLOOR_CHUNKS * 2)
#define SWEEP_AFTER 8u              /* random misses before a sweep starts */
#define SWEEP_DEPTH 1u              /* its reads in flight */
#define ALIGN 4096u

enum chunk_state { CHUNK_EMPTY, CHUNK_READING, CHUNK_READY };

struct chunk {
	uint64_t index;             /* offset / CHUNK */
	enum chunk_state state;
	size_t len;                 /* bytes read (short at the file's end) */
	unsigned int users;         /* copies in progress: not reclaimable */
	bool consumed;              /* a copy was made from it */
	bool swept;                 /* read by the sweep */
	bool warm;                  /* its memory was read into before */
	unsigned int marker_window; /* readahead marker: its window's size */
	uint64_t window_end;        /* and last chunk */
	uint64_t last_use;
	uint8_t *buf;
};

struct stage {
	int fd;
	uint64_t size;
	pthread_mutex_t lock;
	pthread_cond_t changed;     /* a read completed */
	struct io_uring ring;
	pthread_t reaper;
	bool stopping, stop_seen;
	bool fixed;                 /* the floor's chunks are registered buffers */
	unsigned int reading;
	uint64_t clock;
	unsigned int nchunks;       /* the pool */
	unsigned int empty;         /* chunks holding nothing */
	unsigned int random_misses;
	bool sweeping;
	unsigned int sweep_reads;   /* in flight */
	uint64_t sweep_next;        /* the next chunk it looks at */
	struct chunk *chunks;
	uint8_t *memory;            /* the chunks' buffers (hugebuf_alloc) */
	uint64_t image_chunks;
	uint32_t *slot;             /* image chunk -> pool slot + 1 (0: none) */
};

static struct chunk *find(struct stage *s, uint64_t index)
{
	uint32_t at = index < s->image_chunks ? s->slot[index] : 0;
	struct chunk *c = at ? &s->chunks[at - 1] : NULL;

	/* A slot is left behind when its chunk is taken for another. */
	return c && c->state != CHUNK_EMPTY && c->index == index ? c : NULL;
}

/*
 * A chunk to read into, of those nobody reads or copies from: an empty one
 * whose memory was used before, else a fresh one or the least recently
 * used.  Until a reader has looked random, the pool past its floor takes
 * the least recently used chunk if it was copied from: a sequential
 * reader is done with it, and fresh memory costs a page fault and a
 * zeroed page per page (a sequential read of a 137 MiB image touched all
 * of the pool: 5% of the server's time zeroing it).  Random readers fill
 * the pool, as the page cache fills.  NULL when every chunk is busy.
 */
static struct chunk *reclaim(struct stage *s)
{
	struct chunk *lru = NULL, *fresh = NULL;
	unsigned int i, warm = 0;

	for (i = 0; i < s->nchunks; i++) {
		struct chunk *c = &s->chunks[i];

		warm += c->warm;
		if (c->state == CHUNK_READING || c->users)
			continue;
		if (c->state == CHUNK_EMPTY) {
			if (c->warm)
				return c;
			if (!fresh)
				fresh = c;
			continue;
		}
		if (!lru || c->last_use < lru->last_use)
			lru = c;
	}
	if (fresh && lru && lru->consumed && warm >= FLOOR_CHUNKS &&
	    s->random_misses < SWEEP_AFTER)
		return lru;
	return fresh ? fresh : lru;
}

static void free_stage(struct stage *s)
{
	free(s->chunks);
	free(s->slot);
	free(s->memory);
	free(s);
}

/* Start reading chunk `index` into a reclaimed one; NULL when nothing
 * can take it now (reads in flight at the ring's depth, every chunk busy).
 * Called with the lock held; the caller submits. */
static struct chunk *start_read(struct stage *s, uint64_t index)
{
	uint64_t start = index * CHUNK;
	size_t want = s->size - start < CHUNK ?
		      (size_t)((s->size - start + ALIGN - 1) / ALIGN * ALIGN) : CHUNK;
	struct io_uring_sqe *sqe;
	struct chunk *c;

	/* Within the ring's completion queue (a large pool could have more
	 * reads in flight than it holds). */
	if (s->reading >= RING_DEPTH)
		return NULL;
	c = reclaim(s);
	if (!c || !(sqe = io_uring_get_sqe(&s->ring)))
		return NULL;
	if (c->state == CHUNK_EMPTY)
		s->empty--;
	*c = (struct chunk){ .index = index, .state = CHUNK_READING, .buf = c->buf,
			     .warm = true, .last_use = ++s->clock };
	s->slot[index] = (uint32_t)(c - s->chunks) + 1;
	if (s->fixed && c - s->chunks < FLOOR_CHUNKS)
		io_uring_prep_read_fixed(sqe, s->fd, c->buf, (unsigned int)want, start,
					 (int)(c - s->chunks));
	else
		io_uring_prep_read(sqe, s->fd, c->buf, (unsigned int)want, start);
	io_uring_sqe_set_data(sqe, c);
	s->reading++;
	return c;
}

/*
 * Start reading the missing chunks of [first, last] (those the pool has
 * room for).  window: the chunk `first` becomes a readahead marker, and a
 * copy from it starts the next window, twice as large, after `last`.
 * Called with the lock held.
 */
static void fetch_locked(struct stage *s, uint64_t first, uint64_t last, unsigned int window)
{
	uint64_t index;
	unsigned int queued = 0;

	if (first >= s->image_chunks)
		return;
	if (last >= s->image_chunks)
		last = s->image_chunks - 1;
	for (index = first; index <= last && !s->stopping; index++) {
		struct chunk *c = find(s, index);

		if (c) {
			c->last_use = ++s->clock;
			continue;
		}
		c = start_read(s, index);
		if (!c)
			break;
		if (index == first && window) {
			c->marker_window = window;
			c->window_end = last;
		}
		queued++;
	}
	if (queued)
		io_uring_submit(&s->ring);
}

/*
 * A random reader, once SWEEP_AFTER of its misses were not sequential,
 * gets the image read in order into the pool's empty chunks: its later
 * misses then find their blocks here, as the buffered path finds them in
 * the page cache its readahead filled.  One read at a time, and only
 * while no other read is in flight, so that a reader's miss waits behind
 * at most one chunk; only into empty chunks, so that the sweep evicts
 * nothing and reads no more than the pool holds: its 16 MiB floor and
 * whatever part of the cache it was lent.  Measured
 * with and without it, eight alternating runs, medians of the per-pair
 * ratios: random 4 KiB reads of a whole 285 MiB file 1.05x (deflate) and
 * 1.09x (zstd) at 256 KiB clusters; 14 MiB of random reads 1.26x (lz4hc,
 * 256 KiB) and 0.98x (deflate, 4 KiB).  Called with the lock held.
 */
static void sweep_locked(struct stage *s)
{
	unsigned int queued = 0;

	while (s->sweeping && s->sweep_reads < SWEEP_DEPTH && s->reading == s->sweep_reads &&
	       !s->stopping) {
		struct chunk *c;

		if (!s->empty || s->sweep_next >= s->image_chunks) {
			s->sweeping = false;
			break;
		}
		if (find(s, s->sweep_next)) {
			s->sweep_next++;
			continue;
		}
		c = start_read(s, s->sweep_next);
		if (!c)
			break;
		c->swept = true;
		s->sweep_reads++;
		s->sweep_next++;
		queued++;
	}
	if (queued)
		io_uring_submit(&s->ring);
}

static void random_miss_locked(struct stage *s)
{
	if (s->random_misses < SWEEP_AFTER && ++s->random_misses == SWEEP_AFTER) {
		s->sweeping = true;
		sweep_locked(s);
	}
}

static void *reap(void *arg)
{
	struct stage *s = arg;
	bool done = false;

	while (!done) {
		struct io_uring_cqe *cqe;
		struct chunk *c;
		int res, ret = io_uring_wait_cqe(&s->ring, &cqe);

		if (ret == -EINTR)
			continue;
		pthread_mutex_lock(&s->lock);
		if (ret < 0) {
			/* The ring is broken: nothing more completes, nothing
			 * more is fetched, and this thread is done (waiting
			 * again would fail again at once). */
			unsigned int i;

			for (i = 0; i < s->nchunks; i++)
				if (s->chunks[i].state == CHUNK_READING) {
					s->chunks[i].state = CHUNK_EMPTY;
					s->empty++;
				}
			s->reading = 0;
			s->sweep_reads = 0;
			s->sweeping = false;
			s->stopping = s->stop_seen = true;
		} else {
			c = io_uring_cqe_get_data(cqe);
			res = cqe->res;
			io_uring_cqe_seen(&s->ring, cqe);
			if (!c) {
				s->stop_seen = true;
			} else {
				c->state = res > 0 ? CHUNK_READY : CHUNK_EMPTY;
				c->len = res > 0 ? (size_t)res : 0;
				s->empty += c->state == CHUNK_EMPTY;
				s->reading--;
				s->sweep_reads -= c->swept;
				sweep_locked(s);
			}
		}
		done = s->stopping && s->stop_seen && !s->reading;
		pthread_cond_broadcast(&s->changed);
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

struct stage *stage_create(int fd, uint64_t size, uint64_t lend, uint64_t *taken)
{
	struct stage *s = calloc(1, sizeof(*s));
	struct iovec iov[FLOOR_CHUNKS];
	uint64_t extra = lend / CHUNK, beyond_floor;
	unsigned int i;

	*taken = 0;
	if (!s)
		return NULL;
	s->image_chunks = (size + CHUNK - 1) / CHUNK;
	/* No more chunks than the image has, and within 32 bits of slots. */
	beyond_floor = s->image_chunks > FLOOR_CHUNKS ? s->image_chunks - FLOOR_CHUNKS : 0;
	if (extra > beyond_floor)
		extra = beyond_floor;
	if (extra > UINT32_MAX / 2)
		extra = UINT32_MAX / 2;
	/* The lent chunks if the system grants them (a large image and cache
	 * may ask for more than it will), else the floor alone. */
	for (;;) {
		s->nchunks = FLOOR_CHUNKS + (unsigned int)extra;
		/* On huge pages where the kernel has them: a page's first
		 * touch from user space is dear on some virtual machines
		 * (shadow page tables): on one, copying out of 64 MiB that
		 * O_DIRECT had just filled took 130 ms the first time and
		 * 3 ms the next, and 4 ms the first time on huge pages. */
		s->memory = hugebuf_alloc(CHUNK * s->nchunks);
		if (s->memory)
			break;
		if (!extra)
			break;
		extra = 0;
	}
	s->chunks = calloc(s->nchunks, sizeof(*s->chunks));
	s->slot = calloc(s->image_chunks ? s->image_chunks : 1, sizeof(*s->slot));
	if (!s->memory || !s->chunks || !s->slot) {
		free_stage(s);
		return NULL;
	}
	if (io_uring_queue_init(RING_DEPTH, &s->ring, 0) < 0) {
		free_stage(s);
		return NULL;
	}
	for (i = 0; i < s->nchunks; i++)
		s->chunks[i].buf = s->memory + (size_t)i * CHUNK;
	s->empty = s->nchunks;
	/* Fixed buffers spare the kernel pinning the pages on every read;
	 * refused (a memlock limit), plain reads do the same work.  Only the
	 * floor's: registering pins, and the rest is resident only once used. */
	for (i = 0; i < FLOOR_CHUNKS; i++)
		iov[i] = (struct iovec){ s->chunks[i].buf, CHUNK };
	s->fixed = io_uring_register_buffers(&s->ring, iov, FLOOR_CHUNKS) == 0;
	s->fd = fd;
	s->size = size;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->changed, NULL);
	if (pthread_create(&s->reaper, NULL, reap, s)) {
		io_uring_queue_exit(&s->ring);
		pthread_mutex_destroy(&s->lock);
		pthread_cond_destroy(&s->changed);
		free_stage(s);
		return NULL;
	}
	*taken = extra * CHUNK;
	return s;
}

void stage_fetch(struct stage *s, uint64_t off, uint64_t len)
{
	uint64_t first, last;

	/* fetch_locked keeps within the file. */
	if (!s || !len)
		return;
	first = off / CHUNK;
	last = (off + len - 1) / CHUNK;
	if (last - first >= FETCH_MAX)
		last = first + FETCH_MAX - 1;
	pthread_mutex_lock(&s->lock);
	fetch_locked(s, first, last, 0);
	pthread_mutex_unlock(&s->lock);
}

/*
 * The reader's own readahead, as the kernel keeps one for buffered files:
 * a miss right after a chunk that was read from starts a window of
 * WINDOW_MIN chunks; reading from a window's first chunk starts the next,
 * twice as large up to WINDOW_MAX, so a sequential reader finds its data
 * staged.  Any other miss of a small request (len up to SMALL_MISS) reads
 * its whole chunk: neighbours of small pclusters are likely wanted soon,
 * and one 512 KiB read costs little more than one 4 KiB read (measured on
 * a virtio disk: 135 us for 32 KiB, 1 ms for 512 KiB).  A larger request
 * is read on its own while the pool is its floor; a pool grown to hold
 * much of the image reads its whole chunks too and keeps them, as the page
 * cache does (random 4 KiB reads at 256 KiB clusters, lz4hc: 248 to 269
 * MiB/s, medians of four).  Called with the lock held.
 */
static void read_ahead_locked(struct stage *s, uint64_t off, size_t len)
{
	uint64_t first = off / CHUNK, last = (off + len - 1) / CHUNK;
	struct chunk *c = find(s, first);

	if (!c) {
		struct chunk *prev = first ? find(s, first - 1) : NULL;

		/* Behind a chunk copied from, or one still being read (its
		 * window's, or a reader's ahead of this one): sequential. */
		if (prev && (prev->consumed || prev->state == CHUNK_READING)) {
			fetch_locked(s, first, first + WINDOW_MIN - 1, WINDOW_MIN);
			return;
		}
		if (len <= SMALL_MISS)
			fetch_locked(s, first, first, 0);
		else if (s->nchunks > FLOOR_CHUNKS && last - first < FETCH_MAX)
			fetch_locked(s, first, last, 0);
		random_miss_locked(s);
		return;
	}
	if (c->marker_window) {
		unsigned int window = c->marker_window * 2 < WINDOW_MAX ? c->marker_window * 2
									  : WINDOW_MAX;
		uint64_t next = c->window_end + 1;

		c->marker_window = 0;
		fetch_locked(s, next, next + window - 1, window);
	}
}

void stage_prepare(struct stage *s, uint64_t off, size_t len)
{
	if (!s || !len)
		return;
	pthread_mutex_lock(&s->lock);
	read_ahead_locked(s, off, len);
	pthread_mutex_unlock(&s->lock);
}

int stage_copy(struct stage *s, void *dst, size_t len, uint64_t off)
{
	struct chunk *held[FETCH_MAX + 1];
	uint64_t first, last, index;
	unsigned int n = 0, k;
	bool whole = true;

	if (!s || !len)
		return -ENOENT;
	first = off / CHUNK;
	last = (off + len - 1) / CHUNK;
	if (last - first >= FETCH_MAX)
		return -ENOENT;
	pthread_mutex_lock(&s->lock);
	for (index = first; index <= last; index++) {
		struct chunk *c = find(s, index);

		if (!c)
			break;
		c->users++;
		c->last_use = ++s->clock;
		held[n++] = c;
	}
	if (n == last - first + 1) {
		for (k = 0; k < n; k++)
			while (held[k]->state == CHUNK_READING)
				pthread_cond_wait(&s->changed, &s->lock);
		/* A failed read leaves its chunk empty: the caller reads. */
		for (k = 0; k < n; k++)
			if (held[k]->state != CHUNK_READY)
				whole = false;
	} else {
		whole = false;
	}
	pthread_mutex_unlock(&s->lock);
	if (whole) {
		uint8_t *out = dst;

		for (k = 0; k < n && whole; k++) {
			uint64_t cstart = held[k]->index * CHUNK;
			uint64_t from = off > cstart ? off : cstart;
			uint64_t to = off + len < cstart + CHUNK ? off + len : cstart + CHUNK;

			if (to > cstart + held[k]->len)
				whole = false;      /* short read: not all there */
			else
				memcpy(out + (from - off), held[k]->buf + (from - cstart), to - from);
		}
	}
	pthread_mutex_lock(&s->lock);
	for (k = 0; k < n; k++) {
		held[k]->users--;
		held[k]->consumed |= whole;
	}
	pthread_mutex_unlock(&s->lock);
	return whole ? 0 : -ENOENT;
}

void stage_destroy(struct stage *s)
{
	struct io_uring_sqe *sqe;

	if (!s)
		return;
	/* A no-op wakes the reaper; it leaves once nothing is in flight
	 * (the kernel may still be writing into the chunks until then). */
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	while (!(sqe = io_uring_get_sqe(&s->ring)))
		io_uring_submit(&s->ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data(sqe, NULL);
	io_uring_submit(&s->ring);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->reaper, NULL);
	io_uring_queue_exit(&s->ring);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->changed);
	free_stage(s);
}
