/* The block cache's background fetches: the read layer's hints, windows
 * ahead of sequential streams of chunk reads, and prefetch=all. */
#include <stdlib.h>

#include "io/blockcache.h"

static void run_prefetch(struct pool_job *job, unsigned int worker)
{
	struct prefetch_job *p = (struct prefetch_job *)job;
	struct cache_io *c = p->c;
	uint8_t *data;

	(void)worker;
	if (!__atomic_load_n(&c->closing, __ATOMIC_RELAXED)) {
		data = malloc(p->n * CHUNK);
		if (data)
			(void)bc_fetch_chunks(c, p->chunks, p->n, data);
		free(data);
	}
	bc_release_claims(c, p->chunks, p->n);
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
		if (!state_hash(__atomic_load_n(&c->ent[ch].state, __ATOMIC_ACQUIRE)) && bc_claim(c, ch))
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
			    bc_claim(c, ch))
				chunks[n++] = ch;
		pthread_mutex_unlock(&c->claim_lock);
		if (!n)
			continue;
		(void)bc_fetch_chunks(c, chunks, n, data);
		bc_release_claims(c, chunks, n);
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
void bc_prefetch(struct io *io, uint64_t offset, uint64_t len)
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
void bc_read_ahead(struct cache_io *c, uint64_t first, uint64_t last)
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

void bc_prefetch_all(struct cache_io *c)
{
	struct prefetch_job *p = calloc(1, sizeof(*p));

	if (!p)
		return;
	p->c = c;
	p->job = (struct pool_job){ .run = run_prefetch_all, .detached = true };
	pool_submit(c->pool, &p->job);
}
