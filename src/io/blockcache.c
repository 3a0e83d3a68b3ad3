/*
 * A persistent cache of a remote image's bytes, in front of the HTTP back
 * end: a second mount of the same image reads nothing from the network.
 *
 * The image is cut into 64 KiB chunks; a miss fetches whole chunks (a 4 KiB
 * metadata read brings its neighbours, which the next reads want).  Two
 * files per image, named by a SHA-256 of the URL, the object's validator
 * and size (an image that changed on the server gets fresh files):
 *
 *   KEY.data   sparse, as long as the image: chunk c at c * 64 KiB;
 *   KEY.map    a header, then one entry per chunk: the chunk's hash
 *              (0 = absent), a generation and the time of its last use.
 *
 * Safe across crashes: a chunk is written before its entry says present,
 * and the first use of a chunk in a process checks it against its hash,
 * so a torn write, a power cut between data and map or a damaged file is
 * a miss, never a wrong byte.
 *
 * Shared by concurrent mounts: the map is mapped shared and entries change
 * by compare-and-swap.  A reader copies a chunk's bytes between two loads
 * of its entry and keeps them only when the entry (hash and generation)
 * did not change: eviction clears an entry before it punches the hole.
 *
 * Bounded: past cache_max bytes, the least recently used chunks are
 * punched out, under an exclusive lock on the map so two processes do not
 * both evict.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "io/cachedir.h"
#include "io/io.h"
#include "util/digest.h"
#include "util/error.h"
#include "util/pool.h"

#define CHUNK_SHIFT 16u
#define CHUNK ((uint64_t)1 << CHUNK_SHIFT)
#define ATIME_STEP 30u          /* seconds: touch an entry no more often */
#define EVICT_TO_PERCENT 90u
#define PREFETCH_THREADS 4u
#define PREFETCH_JOB_MAX 32u           /* chunks: 2 MiB, one range */
#define PREFETCH_QUEUE_MAX 1024u       /* chunks queued: 64 MiB */
/* Sequential readers of the image: windows of chunks fetched ahead of
 * them, doubling from RA_MIN to RA_MAX, the next issued when half the
 * last is left (latency is what a link costs; 16 MiB ahead keeps a
 * 20 ms link busy at 400 MiB/s). */
#define RA_STREAMS 4u
#define RA_MIN 4u
#define RA_MAX 256u
#define RA_SLACK 8u                     /* chunks back that still count */

/* state packs the hash (low 32 bits, 0 = absent) and a generation
 * (high 32 bits, bumped by every change) so one load tells both. */
struct map_entry {
	uint64_t state;
	uint32_t atime;
	uint32_t reserved;
};

_Static_assert(sizeof(struct map_header) <= CACHE_HEADER_SIZE, "header fits");

struct cache_io {
	struct io base;
	struct io *inner;
	int data_fd, map_fd;
	void *map;
	size_t map_len;
	struct map_header *hdr;
	struct map_entry *ent;
	uint64_t nchunks;
	uint64_t max_chunks;
	uint8_t *verified;           /* per chunk: hash checked in this process */
	pthread_mutex_t evict_lock;
	/* Per chunk: a thread of this process is fetching it. */
	uint8_t *claimed;
	pthread_mutex_t claim_lock;
	pthread_cond_t claim_done;
	struct pool *pool;           /* background fetches; NULL: none */
	uint64_t prefetch_queued;    /* chunks */
	bool store_failed;           /* the disk is full: no prefetching */
	bool closing;
	pthread_mutex_t ra_lock;
	struct ra_stream {
		uint64_t next;           /* the chunk after its last read */
		uint64_t ahead;          /* fetched (or fetching) up to here */
		uint64_t window;
		uint64_t used;           /* for replacement: a clock */
	} ra[RA_STREAMS];
	uint64_t ra_clock;
	char digest[80];             /* "sha256:..." of the whole, or "" */
	/* The directory, for cachedir_tidy as the cache grows. */
	char *dir;
	char key[2 * DIGEST_SIZE + 1];
	const char *identity;        /* inner's */
	uint64_t stored_since_tidy;  /* chunks */
	/* The whole blob, once all of it is here, checked against digest
	 * in the background; a mismatch fails every later read. */
	bool whole_checked;
	bool bad;
	char bad_why[256];
};

/* A background job of the cache's pool. */
struct prefetch_job {
	struct pool_job job;
	struct cache_io *c;
	size_t n;
	uint64_t chunks[];
};

static inline uint32_t state_hash(uint64_t s)
{
	return (uint32_t)s;
}

static inline uint64_t state_make(uint32_t gen, uint32_t hash)
{
	return (uint64_t)gen << 32 | hash;
}

static uint32_t chunk_hash(const void *data, size_t len)
{
	uint32_t h = (uint32_t)XXH3_64bits(data, len);

	return h ? h : 1;   /* 0 means absent */
}

static uint64_t chunk_len(const struct cache_io *c, uint64_t chunk)
{
	uint64_t off = chunk << CHUNK_SHIFT;

	return c->base.size - off < CHUNK ? c->base.size - off : CHUNK;
}

static uint32_t now_seconds(void)
{
	return (uint32_t)time(NULL);
}

/* All len bytes read (or written), or -1: an error or the end of the
 * file. */
static int full_io(int fd, void *buf, size_t len, uint64_t off, bool write)
{
	char *p = buf;

	while (len) {
		ssize_t n = write ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	return full_io(fd, buf, len, off, false);
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	return full_io(fd, (void *)buf, len, off, true);
}

static void touch(struct cache_io *c, uint64_t chunk)
{
	uint32_t now = now_seconds(), last = __atomic_load_n(&c->ent[chunk].atime, __ATOMIC_RELAXED);

	if (now - last >= ATIME_STEP)
		__atomic_store_n(&c->ent[chunk].atime, now, __ATOMIC_RELAXED);
}

/* Drop a chunk whose entry still reads expect: the entry first, then the
 * bytes (a reader between the two sees the entry change). */
static void drop_chunk(struct cache_io *c, uint64_t chunk, uint64_t expect)
{
	uint64_t cleared = state_make((uint32_t)(expect >> 32) + 1, 0);

	if (!state_hash(expect) ||
	    !__atomic_compare_exchange_n(&c->ent[chunk].state, &expect, cleared, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	__atomic_fetch_sub(&c->hdr->present, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->verified[chunk], 0, __ATOMIC_RELAXED);
	(void)fallocate(c->data_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			(off_t)(chunk << CHUNK_SHIFT), (off_t)chunk_len(c, chunk));
}

/* Whether the chunk is present and good.  Its first use in this process
 * reads it whole and checks its hash: a bad chunk is dropped. */
static bool chunk_present(struct cache_io *c, uint64_t chunk, uint8_t *scratch)
{
	uint64_t s = __atomic_load_n(&c->ent[chunk].state, __ATOMIC_ACQUIRE);
	size_t len = (size_t)chunk_len(c, chunk);

	if (!state_hash(s))
		return false;
	if (__atomic_load_n(&c->verified[chunk], __ATOMIC_RELAXED))
		return true;
	if (pread_full(c->data_fd, scratch, len, chunk << CHUNK_SHIFT) ||
	    chunk_hash(scratch, len) != state_hash(s)) {
		/* Unless another process rewrote it meanwhile. */
		if (__atomic_load_n(&c->ent[chunk].state, __ATOMIC_ACQUIRE) == s)
			drop_chunk(c, chunk, s);
		return false;
	}
	__atomic_store_n(&c->verified[chunk], 1, __ATOMIC_RELAXED);
	return true;
}

static int by_atime(const void *a, const void *b, void *arg)
{
	const struct map_entry *ent = arg;
	uint32_t x = ent[*(const uint64_t *)a].atime, y = ent[*(const uint64_t *)b].atime;

	return x < y ? -1 : x > y;
}

/* Past the bound: the least recently used chunks out, down to 90%. */
static void evict(struct cache_io *c)
{
	uint64_t *order, n = 0, i, target = c->max_chunks * EVICT_TO_PERCENT / 100;

	if (__atomic_load_n(&c->hdr->present, __ATOMIC_RELAXED) <= c->max_chunks ||
	    pthread_mutex_trylock(&c->evict_lock))
		return;
	if (flock(c->map_fd, LOCK_EX | LOCK_NB))
		goto out;   /* another process is at it */
	order = malloc(c->nchunks * sizeof(*order));
	if (order) {
		for (i = 0; i < c->nchunks; i++)
			if (state_hash(__atomic_load_n(&c->ent[i].state, __ATOMIC_RELAXED)))
				order[n++] = i;
		qsort_r(order, n, sizeof(*order), by_atime, c->ent);
		for (i = 0; i < n && __atomic_load_n(&c->hdr->present, __ATOMIC_RELAXED) > target; i++)
			drop_chunk(c, order[i], __atomic_load_n(&c->ent[order[i]].state, __ATOMIC_ACQUIRE));
		free(order);
	}
	flock(c->map_fd, LOCK_UN);
out:
	pthread_mutex_unlock(&c->evict_lock);
}

static int cache_verify(struct io *io, char *why, size_t size);

static void run_check_whole(struct pool_job *job, unsigned int worker)
{
	struct cache_io *c = ((struct prefetch_job *)job)->c;
	char why[sizeof(c->bad_why)];

	(void)worker;
	if (!__atomic_load_n(&c->closing, __ATOMIC_RELAXED) &&
	    cache_verify(&c->base, why, sizeof(why)) == -EUCLEAN) {
		memcpy(c->bad_why, why, sizeof(why));
		__atomic_store_n(&c->bad, true, __ATOMIC_RELEASE);
	}
	free(job);
}

/* Every chunk is here: the blob against its digest, once, in the
 * background (fsck does it in the foreground, ek_verify_source). */
static void check_whole(struct cache_io *c)
{
	struct prefetch_job *p;

	if (!c->digest[0] || !c->pool || __atomic_exchange_n(&c->whole_checked, true, __ATOMIC_ACQ_REL))
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->c = c;
	p->job = (struct pool_job){ .run = run_check_whole, .detached = true };
	pool_submit(c->pool, &p->job);
}

/* A fetched chunk into the cache.  A full disk or any write error leaves
 * it absent: the read still has its bytes. */
static void store_chunk(struct cache_io *c, uint64_t chunk, const void *data)
{
	size_t len = (size_t)chunk_len(c, chunk);
	uint64_t s = __atomic_load_n(&c->ent[chunk].state, __ATOMIC_ACQUIRE);

	if (state_hash(s))
		return;
	if (pwrite_full(c->data_fd, data, len, chunk << CHUNK_SHIFT)) {
		__atomic_store_n(&c->store_failed, true, __ATOMIC_RELAXED);
		return;
	}
	if (__atomic_compare_exchange_n(&c->ent[chunk].state, &s,
					state_make((uint32_t)(s >> 32) + 1, chunk_hash(data, len)),
					false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		uint64_t present = __atomic_add_fetch(&c->hdr->present, 1, __ATOMIC_RELAXED);

		__atomic_store_n(&c->verified[chunk], 1, __ATOMIC_RELAXED);
		__atomic_store_n(&c->ent[chunk].atime, now_seconds(), __ATOMIC_RELAXED);
		if (present == c->nchunks)
			check_whole(c);
	}
}

/* Copy [off, off + len) of a present chunk; false when the chunk changed
 * under the copy (evicted, or rewritten by another process). */
static bool copy_from_cache(struct cache_io *c, uint64_t chunk, void *buf, size_t len, uint64_t off)
{
	uint64_t s = __atomic_load_n(&c->ent[chunk].state, __ATOMIC_ACQUIRE);

	if (!state_hash(s) || pread_full(c->data_fd, buf, len, off))
		return false;
	if (__atomic_load_n(&c->ent[chunk].state, __ATOMIC_ACQUIRE) != s)
		return false;
	touch(c, chunk);
	return true;
}

/* ------------------------------------------------------------ reading */

struct fetch {
	uint64_t *chunks;        /* sorted, distinct */
	size_t n;
	uint8_t *data;           /* n * CHUNK */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const uint8_t *fetched(const struct fetch *f, uint64_t chunk)
{
	const uint64_t *hit = bsearch(&chunk, f->chunks, f->n, sizeof(*f->chunks), cmp_u64);

	return hit ? f->data + (size_t)(hit - f->chunks) * CHUNK : NULL;
}

/* Claims: a chunk one thread of this process is fetching is not fetched
 * by another, which waits for it instead.  Under c->claim_lock. */
static bool claim(struct cache_io *c, uint64_t chunk)
{
	if (c->claimed[chunk])
		return false;
	c->claimed[chunk] = 1;
	return true;
}

static void release_claims(struct cache_io *c, const uint64_t *chunks, size_t n)
{
	size_t i;

	pthread_mutex_lock(&c->claim_lock);
	for (i = 0; i < n; i++)
		c->claimed[chunks[i]] = 0;
	pthread_cond_broadcast(&c->claim_done);
	pthread_mutex_unlock(&c->claim_lock);
}

static void wait_claim(struct cache_io *c, uint64_t chunk)
{
	pthread_mutex_lock(&c->claim_lock);
	while (c->claimed[chunk])
		pthread_cond_wait(&c->claim_done, &c->claim_lock);
	pthread_mutex_unlock(&c->claim_lock);
}

/* The directory as a whole within cache_max, looked at again each time
 * this image has stored a sixteenth of it. */
static void tidy_dir(struct cache_io *c, size_t stored)
{
	uint64_t step = c->max_chunks / 16 ? c->max_chunks / 16 : 1;

	if (!c->dir || __atomic_add_fetch(&c->stored_since_tidy, stored, __ATOMIC_RELAXED) < step)
		return;
	__atomic_store_n(&c->stored_since_tidy, 0, __ATOMIC_RELAXED);
	cachedir_tidy(c->dir, c->key, c->identity, c->max_chunks << CHUNK_SHIFT);
}

/* Claimed chunks (sorted) from the inner back end, in one batch there
 * (neighbours merge into one range), into data (n * CHUNK) and the
 * cache. */
static int fetch_chunks(struct cache_io *c, const uint64_t *chunks, size_t n, uint8_t *data)
{
	struct io_req *reqs = calloc(n, sizeof(*reqs));
	size_t i;
	int ret = 0;

	if (!reqs)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		reqs[i] = (struct io_req){
			.buf = data + i * CHUNK,
			.len = (size_t)chunk_len(c, chunks[i]),
			.offset = chunks[i] << CHUNK_SHIFT,
		};
	c->inner->ops->read_batch(c->inner, reqs, n);
	for (i = 0; i < n && !ret; i++)
		ret = reqs[i].result;
	for (i = 0; i < n && !ret; i++)
		store_chunk(c, chunks[i], reqs[i].buf);
	if (!ret) {
		evict(c);
		tidy_dir(c, n);
	}
	free(reqs);
	return ret;
}

static int push_chunk(uint64_t **list, size_t *n, size_t *cap, uint64_t chunk)
{
	if (*n == *cap) {
		size_t grown_cap = *cap ? 2 * *cap : 16;
		uint64_t *grown = realloc(*list, grown_cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		*list = grown;
		*cap = grown_cap;
	}
	(*list)[(*n)++] = chunk;
	return 0;
}

/* Every chunk the requests touch that is not present: fetched here, or
 * waited for where another thread is fetching it. */
static int fetch_missing(struct cache_io *c, struct io_req *reqs, size_t n, struct fetch *f)
{
	uint8_t *scratch = malloc(CHUNK);
	uint64_t *need = NULL, *waits = NULL, ch;
	size_t i, k, nneed = 0, need_cap = 0, nwaits = 0;
	int ret = 0;

	memset(f, 0, sizeof(*f));
	if (!scratch)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i++) {
		if (!reqs[i].len)
			continue;
		for (ch = reqs[i].offset >> CHUNK_SHIFT;
		     ch <= (reqs[i].offset + reqs[i].len - 1) >> CHUNK_SHIFT && !ret; ch++)
			if (!chunk_present(c, ch, scratch))
				ret = push_chunk(&need, &nneed, &need_cap, ch);
	}
	if (ret || !nneed)
		goto out;
	qsort(need, nneed, sizeof(*need), cmp_u64);
	for (i = k = 0; i < nneed; i++)
		if (!k || need[k - 1] != need[i])
			need[k++] = need[i];
	nneed = k;
	/* Room for every outcome before anything is claimed: a claim must
	 * never be lost. */
	f->chunks = malloc(nneed * sizeof(*f->chunks));
	waits = malloc(nneed * sizeof(*waits));
	if (!f->chunks || !waits) {
		ret = -ENOMEM;
		goto out;
	}
	pthread_mutex_lock(&c->claim_lock);
	for (i = 0; i < nneed; i++) {
		if (claim(c, need[i]))
			f->chunks[f->n++] = need[i];
		else
			waits[nwaits++] = need[i];
	}
	pthread_mutex_unlock(&c->claim_lock);
	if (f->n) {
		f->data = malloc(f->n * CHUNK);
		ret = f->data ? fetch_chunks(c, f->chunks, f->n, f->data) : -ENOMEM;
		release_claims(c, f->chunks, f->n);
	}
	/* Served from the cache once their fetcher is done (or from the
	 * server, where it failed). */
	for (i = 0; i < nwaits; i++)
		wait_claim(c, waits[i]);
out:
	free(scratch);
	free(need);
	free(waits);
	return ret;
}

/* ------------------------------------------------------------ prefetch */


static void run_prefetch(struct pool_job *job, unsigned int worker)
{
	struct prefetch_job *p = (struct prefetch_job *)job;
	struct cache_io *c = p->c;
	uint8_t *data;

	(void)worker;
	if (!__atomic_load_n(&c->closing, __ATOMIC_RELAXED)) {
		data = malloc(p->n * CHUNK);
		if (data)
			(void)fetch_chunks(c, p->chunks, p->n, data);
		free(data);
	}
	release_claims(c, p->chunks, p->n);
	__atomic_fetch_sub(&c->prefetch_queued, p->n, __ATOMIC_RELAXED);
	free(p);
}

/* [first, first + count) that is neither present nor being fetched, to
 * a background fetch; false when there was nothing to do or no room. */
static bool prefetch_chunks(struct cache_io *c, uint64_t first, uint64_t count)
{
	struct prefetch_job *p;
	uint64_t ch;

	if (__atomic_load_n(&c->prefetch_queued, __ATOMIC_RELAXED) + count > PREFETCH_QUEUE_MAX)
		return false;
	p = malloc(sizeof(*p) + count * sizeof(p->chunks[0]));
	if (!p)
		return false;
	p->c = c;
	p->n = 0;
	pthread_mutex_lock(&c->claim_lock);
	for (ch = first; ch < first + count; ch++)
		if (!state_hash(__atomic_load_n(&c->ent[ch].state, __ATOMIC_ACQUIRE)) && claim(c, ch))
			p->chunks[p->n++] = ch;
	pthread_mutex_unlock(&c->claim_lock);
	if (!p->n) {
		free(p);
		return false;
	}
	__atomic_fetch_add(&c->prefetch_queued, p->n, __ATOMIC_RELAXED);
	p->job = (struct pool_job){ .run = run_prefetch, .detached = true };
	pool_submit(c->pool, &p->job);
	return true;
}

/* The whole image, one range at a time, on one background thread: the
 * readers' own fetches run beside it on their own connections. */
static void run_prefetch_all(struct pool_job *job, unsigned int worker)
{
	struct cache_io *c = ((struct prefetch_job *)job)->c;
	uint8_t *data = malloc(PREFETCH_JOB_MAX * CHUNK);
	uint64_t chunks[PREFETCH_JOB_MAX], first, ch;
	size_t n;

	(void)worker;
	for (first = 0; data && first < c->nchunks; first += PREFETCH_JOB_MAX) {
		if (__atomic_load_n(&c->closing, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&c->store_failed, __ATOMIC_RELAXED))
			break;
		n = 0;
		pthread_mutex_lock(&c->claim_lock);
		for (ch = first; ch < first + PREFETCH_JOB_MAX && ch < c->nchunks; ch++)
			if (!state_hash(__atomic_load_n(&c->ent[ch].state, __ATOMIC_ACQUIRE)) &&
			    claim(c, ch))
				chunks[n++] = ch;
		pthread_mutex_unlock(&c->claim_lock);
		if (!n)
			continue;
		(void)fetch_chunks(c, chunks, n, data);
		release_claims(c, chunks, n);
	}
	free(data);
	free(job);
}

/* [first, first + count) clipped to the image, to background fetches of
 * one range each. */
static void prefetch_range(struct cache_io *c, uint64_t first, uint64_t count)
{
	if (!c->pool || first >= c->nchunks ||
	    __atomic_load_n(&c->store_failed, __ATOMIC_RELAXED))
		return;
	if (count > c->nchunks - first)
		count = c->nchunks - first;
	while (count) {
		uint64_t n = count < PREFETCH_JOB_MAX ? count : PREFETCH_JOB_MAX;

		prefetch_chunks(c, first, n);
		first += n;
		count -= n;
	}
}

/* The read layer's hint: what its readahead is about to read. */
static void cache_prefetch(struct io *io, uint64_t offset, uint64_t len)
{
	struct cache_io *c = (struct cache_io *)io;

	if (!len || offset >= io->size)
		return;
	if (len > io->size - offset)
		len = io->size - offset;
	prefetch_range(c, offset >> CHUNK_SHIFT,
		       ((offset + len - 1) >> CHUNK_SHIFT) - (offset >> CHUNK_SHIFT) + 1);
}

/* A read of chunks [first, last]: when it continues a stream, the stream
 * reads further ahead; else it starts one in place of the least recently
 * used (a random read starts nothing until it is followed). */
static void read_ahead(struct cache_io *c, uint64_t first, uint64_t last)
{
	struct ra_stream *s, *lru = &c->ra[0];
	uint64_t from = 0, count = 0;
	unsigned int i;

	pthread_mutex_lock(&c->ra_lock);
	for (i = 0; i < RA_STREAMS; i++) {
		s = &c->ra[i];
		if (s->window && first + RA_SLACK >= s->next && first <= s->ahead)
			break;
		if (c->ra[i].used < lru->used)
			lru = &c->ra[i];
	}
	if (i == RA_STREAMS) {
		*lru = (struct ra_stream){ .next = last + 1, .ahead = last + 1, .window = RA_MIN / 2 };
		s = lru;
	} else if (last + 1 > s->next) {
		s->next = last + 1;
		if (s->ahead < s->next)
			s->ahead = s->next;
		/* Less than half a window left ahead: the next, larger one. */
		if (s->ahead - s->next < s->window / 2 + 1) {
			s->window = s->window * 2 > RA_MAX ? RA_MAX : s->window * 2;
			from = s->ahead;
			count = s->window;
			s->ahead += count;
		}
	}
	s->used = ++c->ra_clock;
	pthread_mutex_unlock(&c->ra_lock);
	if (count)
		prefetch_range(c, from, count);
}

static void fetch_free(struct fetch *f)
{
	free(f->chunks);
	free(f->data);
}

/* One request from this batch's fetched chunks and the cache file. */
static int serve(struct cache_io *c, const struct fetch *f, struct io_req *r)
{
	uint64_t off = r->offset, end = r->offset + r->len;
	uint8_t *dst = r->buf;

	while (off < end) {
		uint64_t chunk = off >> CHUNK_SHIFT;
		uint64_t piece_end = (chunk + 1) << CHUNK_SHIFT;
		size_t len = (size_t)((end < piece_end ? end : piece_end) - off);
		const uint8_t *mem = f->n ? fetched(f, chunk) : NULL;

		if (mem)
			memcpy(dst, mem + (off & (CHUNK - 1)), len);
		else if (!copy_from_cache(c, chunk, dst, len, off)) {
			/* Evicted since it was found: from the server. */
			int ret = c->inner->ops->read(c->inner, dst, len, off);

			if (ret)
				return ret;
		}
		dst += len;
		off += len;
	}
	return 0;
}

static void cache_read_batch(struct io *io, struct io_req *reqs, size_t n)
{
	struct cache_io *c = (struct cache_io *)io;
	struct fetch f;
	size_t i;
	int ret;

	if (__atomic_load_n(&c->bad, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < n; i++)
			reqs[i].result = -EIO;
		return;
	}
	for (i = 0; i < n; i++)
		if (reqs[i].len)
			read_ahead(c, reqs[i].offset >> CHUNK_SHIFT,
				  (reqs[i].offset + reqs[i].len - 1) >> CHUNK_SHIFT);
	ret = fetch_missing(c, reqs, n, &f);

	for (i = 0; i < n; i++)
		reqs[i].result = ret ? ret : serve(c, &f, &reqs[i]);
	fetch_free(&f);
}

static int cache_read(struct io *io, void *buf, size_t len, uint64_t off)
{
	struct io_req r = { .buf = buf, .len = len, .offset = off };

	cache_read_batch(io, &r, 1);
	return r.result;
}

static const char *cache_why(struct io *io)
{
	struct cache_io *c = (struct cache_io *)io;

	if (__atomic_load_n(&c->bad, __ATOMIC_ACQUIRE))
		return c->bad_why;
	return c->inner->ops->why ? c->inner->ops->why(c->inner) : NULL;
}

static void cache_close(struct io *io)
{
	struct cache_io *c = (struct cache_io *)io;

	__atomic_store_n(&c->closing, true, __ATOMIC_RELAXED);
	if (c->pool)
		pool_destroy(c->pool);   /* queued fetches end at once */
	if (c->map && c->map != MAP_FAILED)
		munmap(c->map, c->map_len);
	if (c->map_fd >= 0)
		close(c->map_fd);
	if (c->data_fd >= 0)
		close(c->data_fd);
	io_close(c->inner);
	pthread_mutex_destroy(&c->evict_lock);
	pthread_mutex_destroy(&c->claim_lock);
	pthread_cond_destroy(&c->claim_done);
	pthread_mutex_destroy(&c->ra_lock);
	free(c->verified);
	free(c->claimed);
	free(c->dir);
	free(c);
}

/* The whole object read in order (what is missing fetched, sequential
 * readahead helping) and hashed against its digest.  A mismatch drops
 * every chunk: the next reader fetches them afresh. */
static int cache_verify(struct io *io, char *why, size_t size)
{
	struct cache_io *c = (struct cache_io *)io;
	size_t piece = (size_t)1 << 20;
	uint8_t *buf, raw[DIGEST_SIZE];
	char hex[2 * DIGEST_SIZE + 1];
	struct digest_state *d;
	uint64_t off, ch;
	int ret = 0;

	if (!c->digest[0])
		return -ENODATA;
	__atomic_store_n(&c->whole_checked, true, __ATOMIC_RELAXED);
	buf = malloc(piece);
	d = digest_begin();
	if (!buf || !d) {
		free(buf);
		if (d)
			digest_end(d, raw);
		snprintf(why, size, "out of memory");
		return -ENOMEM;
	}
	for (off = 0; off < io->size && !ret; off += piece) {
		size_t len = io->size - off < piece ? (size_t)(io->size - off) : piece;

		ret = cache_read(io, buf, len, off);
		if (ret)
			snprintf(why, size, "reading it at %" PRIu64 ": %s", off, io_strerror(io, ret));
		else
			digest_add(d, buf, len);
	}
	digest_end(d, raw);
	free(buf);
	if (ret)
		return ret;
	digest_to_hex(raw, hex);
	if (strncmp(c->digest, "sha256:", 7) || strcmp(c->digest + 7, hex)) {
		snprintf(why, size, "its bytes hash to sha256:%s, not to its digest %s", hex, c->digest);
		for (ch = 0; ch < c->nchunks; ch++)
			drop_chunk(c, ch, __atomic_load_n(&c->ent[ch].state, __ATOMIC_ACQUIRE));
		return -EUCLEAN;
	}
	return 0;
}

static const struct io_ops cache_ops = {
	.read = cache_read,
	.read_batch = cache_read_batch,
	.prefetch = cache_prefetch,
	.why = cache_why,
	.verify = cache_verify,
	.close = cache_close,
};

/* ------------------------------------------------------------ opening */

/* mkdir -p, for the default under $XDG_CACHE_HOME. */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int io_cache_default_dir(char *out, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && *xdg == '/')
		n = snprintf(out, size, "%s/erofskit", xdg);
	else if (home && *home == '/')
		n = snprintf(out, size, "%s/.cache/erofskit", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The map as this image wants it: kept when it is this image's, else
 * started afresh (with the data file emptied).  Under an exclusive lock,
 * so that two mounts starting together agree. */
static int map_prepare(struct cache_io *c, const char *identity)
{
	struct map_header want = { .image_size = c->base.size, .chunk_shift = CHUNK_SHIFT };
	struct stat st;
	bool keep = false;
	int ret = 0;

	memcpy(want.magic, CACHE_MAGIC, sizeof(CACHE_MAGIC));
	snprintf(want.identity, sizeof(want.identity), "%s", identity);
	if (flock(c->map_fd, LOCK_EX))
		return -errno;
	if (!fstat(c->map_fd, &st) && (uint64_t)st.st_size == c->map_len) {
		struct map_header have;

		keep = !pread_full(c->map_fd, &have, sizeof(have), 0) &&
		       !memcmp(have.magic, want.magic, sizeof(want.magic)) &&
		       have.image_size == want.image_size && have.chunk_shift == CHUNK_SHIFT &&
		       !memcmp(have.identity, want.identity, sizeof(want.identity));
	}
	if (!keep) {
		if (ftruncate(c->map_fd, 0) || ftruncate(c->map_fd, (off_t)c->map_len) ||
		    ftruncate(c->data_fd, 0) || ftruncate(c->data_fd, (off_t)c->base.size) ||
		    pwrite_full(c->map_fd, &want, sizeof(want), 0))
			ret = -errno;
	}
	flock(c->map_fd, LOCK_UN);
	return ret;
}

static int open_files(struct cache_io *c, const char *dir, const char *identity)
{
	uint8_t digest[DIGEST_SIZE];
	char hex[2 * DIGEST_SIZE + 1], path[PATH_MAX];
	int ret;

	digest_of(identity, strlen(identity), digest);
	digest_to_hex(digest, hex);
	ret = make_dirs(dir);
	if (ret)
		return ret;
	if (snprintf(path, sizeof(path), "%s/%s.map", dir, hex) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	c->map_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (c->map_fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s.data", dir, hex);
	c->data_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (c->data_fd < 0)
		return -errno;
	ret = map_prepare(c, identity);
	if (ret)
		return ret;
	/* In use as long as it is open (cachedir_tidy removes only files
	 * nobody holds), and most recently used now. */
	if (flock(c->data_fd, LOCK_SH))
		return -errno;
	(void)futimens(c->map_fd, NULL);
	c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->map_fd, 0);
	if (c->map == MAP_FAILED)
		return -errno;
	c->dir = strdup(dir);
	memcpy(c->key, hex, sizeof(c->key));
	c->identity = identity;
	cachedir_tidy(dir, hex, identity, c->max_chunks << CHUNK_SHIFT);
	return 0;
}

/* No directory: a private unnamed file, gone when the image closes. */
static int open_private(struct cache_io *c)
{
	const char *tmp = getenv("TMPDIR");

	c->data_fd = open(tmp && *tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (c->data_fd < 0 || ftruncate(c->data_fd, (off_t)c->base.size))
		return -errno;
	c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return c->map == MAP_FAILED ? -errno : 0;
}

/* The count of present chunks, which a process that died between an entry
 * and the count may have left wrong. */
static void recount(struct cache_io *c)
{
	uint64_t i, n = 0;

	if (c->map_fd >= 0 && flock(c->map_fd, LOCK_EX))
		return;
	for (i = 0; i < c->nchunks; i++)
		n += state_hash(__atomic_load_n(&c->ent[i].state, __ATOMIC_RELAXED)) != 0;
	__atomic_store_n(&c->hdr->present, n, __ATOMIC_RELAXED);
	if (c->map_fd >= 0)
		flock(c->map_fd, LOCK_UN);
}

static void start_prefetch_all(struct cache_io *c)
{
	struct prefetch_job *p = calloc(1, sizeof(*p));

	if (!p)
		return;
	p->c = c;
	p->job = (struct pool_job){ .run = run_prefetch_all, .detached = true };
	pool_submit(c->pool, &p->job);
}

int io_open_cache(struct io *inner, const char *dir, uint64_t max_bytes, bool prefetch_all,
		  const char *digest, struct io **out, ek_error *err)
{
	struct cache_io *c = calloc(1, sizeof(*c));
	const char *identity = inner->identity;
	int ret;

	if (!c)
		return err_fail(err, -ENOMEM, "out of memory");
	c->inner = inner;
	c->data_fd = c->map_fd = -1;
	snprintf(c->digest, sizeof(c->digest), "%s", digest ? digest : "");
	pthread_mutex_init(&c->evict_lock, NULL);
	pthread_mutex_init(&c->claim_lock, NULL);
	pthread_cond_init(&c->claim_done, NULL);
	pthread_mutex_init(&c->ra_lock, NULL);
	c->base = (struct io){ .ops = &cache_ops, .size = inner->size, .name = inner->name };
	c->nchunks = (inner->size + CHUNK - 1) >> CHUNK_SHIFT;
	c->max_chunks = max_bytes >> CHUNK_SHIFT;
	if (c->max_chunks < 16)
		c->max_chunks = 16;
	c->map_len = CACHE_HEADER_SIZE + c->nchunks * sizeof(struct map_entry);
	c->verified = calloc(c->nchunks ? c->nchunks : 1, 1);
	c->claimed = calloc(c->nchunks ? c->nchunks : 1, 1);
	if (!c->verified || !c->claimed) {
		c->inner = NULL;   /* still the caller's */
		cache_close(&c->base);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	/* A persistent cache needs to know the object it holds. */
	if (dir && *dir && identity && strlen(identity) < CACHE_IDENTITY_MAX)
		ret = open_files(c, dir, identity);
	else
		ret = open_private(c);
	if (ret) {
		c->inner = NULL;
		cache_close(&c->base);
		return err_fail(err, ret, "cache in %s: %s", dir && *dir ? dir : "$TMPDIR",
				strerror(-ret));
	}
	c->hdr = c->map;
	c->ent = (struct map_entry *)((uint8_t *)c->map + CACHE_HEADER_SIZE);
	recount(c);
	/* Without threads there is no prefetching, nothing worse. */
	if (pool_create(PREFETCH_THREADS, &c->pool))
		c->pool = NULL;
	if (prefetch_all && c->pool)
		start_prefetch_all(c);
	*out = &c->base;
	return 0;
}
