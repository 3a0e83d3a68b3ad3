/* Sharded LRU cache of decoded extents. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "read/cache.h"
#include "util/error.h"

#define SHARDS_MAX 64u
/* Hash buckets: one per this many bytes of budget, so that chains stay
 * short even when every entry is a single 4 KiB block. */
#define BYTES_PER_BUCKET 4096u

struct shard {
	pthread_mutex_t lock;
	pthread_cond_t settled;   /* a pending entry was published or abandoned */
	struct cache_entry **buckets;
	size_t mask;              /* buckets - 1, a power of two less one */
	struct cache_entry *head, *tail;   /* most / least recently used */
	size_t bytes;
	uint64_t hits, misses;
} __attribute__((aligned(64)));

struct cache {
	size_t budget;            /* per shard */
	unsigned int nshards;
	struct shard shards[SHARDS_MAX];
};

/* splitmix64 of both halves of the key: byte offsets (multiples of 4096)
 * and small block numbers alike spread over every shard and bucket. */
static uint64_t key_hash(uint64_t nid, uint64_t la)
{
	uint64_t h = nid * 0x9E3779B97F4A7C15ull + la;

	h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
	h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
	return h ^ (h >> 31);
}

int cache_create(size_t bytes, size_t min_shard, struct cache **out,
		    ek_error *err)
{
	struct cache *c = aligned_alloc(64, sizeof(*c));
	unsigned int i;
	size_t nbuckets;

	if (!c)
		return err_fail(err, -ENOMEM, "out of memory");
	memset(c, 0, sizeof(*c));
	c->nshards = (unsigned int)(bytes / (min_shard ? min_shard : 1));
	if (c->nshards < 1)
		c->nshards = 1;
	if (c->nshards > SHARDS_MAX)
		c->nshards = SHARDS_MAX;
	c->budget = bytes / c->nshards;
	for (nbuckets = 256; nbuckets < c->budget / BYTES_PER_BUCKET && nbuckets < (1u << 20);)
		nbuckets *= 2;
	for (i = 0; i < c->nshards; i++) {
		struct shard *s = &c->shards[i];

		s->buckets = calloc(nbuckets, sizeof(*s->buckets));
		if (!s->buckets) {
			while (i--)
				free(c->shards[i].buckets);
			free(c);
			return err_fail(err, -ENOMEM, "out of memory");
		}
		s->mask = nbuckets - 1;
		pthread_mutex_init(&s->lock, NULL);
		pthread_cond_init(&s->settled, NULL);
	}
	*out = c;
	return 0;
}

static void free_entry(struct cache_entry *e)
{
	free(e->data);
	free(e);
}

void cache_destroy(struct cache *c)
{
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < c->nshards; i++) {
		struct cache_entry *e = c->shards[i].head;

		while (e) {
			struct cache_entry *next = e->next;

			free_entry(e);
			e = next;
		}
		pthread_mutex_destroy(&c->shards[i].lock);
		pthread_cond_destroy(&c->shards[i].settled);
		free(c->shards[i].buckets);
	}
	free(c);
}

static void lru_unlink(struct shard *s, struct cache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		s->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		s->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push(struct shard *s, struct cache_entry *e)
{
	e->prev = NULL;
	e->next = s->head;
	if (s->head)
		s->head->prev = e;
	s->head = e;
	if (!s->tail)
		s->tail = e;
}

static struct cache_entry **find(struct shard *s, uint64_t h, uint64_t nid,
				   uint64_t la)
{
	struct cache_entry **p = &s->buckets[(h >> 6) & s->mask];

	while (*p && ((*p)->nid != nid || (*p)->la != la))
		p = &(*p)->hnext;
	return p;
}

struct cache_entry *cache_get(struct cache *c, uint64_t nid, uint64_t la)
{
	uint64_t h = key_hash(nid, la);
	struct shard *s = &c->shards[h % c->nshards];
	struct cache_entry *e;

	pthread_mutex_lock(&s->lock);
	e = *find(s, h, nid, la);
	if (e) {
		atomic_fetch_add(&e->refs, 1);
		/* A pending entry is not on the LRU list yet. */
		if (s->head != e && atomic_load(&e->state) == EK_CACHE_READY) {
			lru_unlink(s, e);
			lru_push(s, e);
		}
		s->hits++;
	} else {
		s->misses++;
	}
	pthread_mutex_unlock(&s->lock);
	return e;
}

int cache_contains(struct cache *c, uint64_t nid, uint64_t la)
{
	uint64_t h = key_hash(nid, la);
	struct shard *s = &c->shards[h % c->nshards];
	int found;

	pthread_mutex_lock(&s->lock);
	found = *find(s, h, nid, la) != NULL;
	pthread_mutex_unlock(&s->lock);
	return found;
}

struct cache_entry *cache_alloc(struct cache *c, size_t len)
{
	struct cache_entry *e = calloc(1, sizeof(*e));

	(void)c;
	if (!e)
		return NULL;
	e->data = malloc(len ? len : 1);
	if (!e->data) {
		free(e);
		return NULL;
	}
	e->len = len;
	atomic_init(&e->refs, 1);
	return e;
}

void cache_put(struct cache *c, struct cache_entry *e)
{
	(void)c;
	if (e && atomic_fetch_sub(&e->refs, 1) == 1)
		free_entry(e);
}

/* Put a ready entry on its shard's LRU list and evict from the cold end
 * until the shard fits its budget again; called with the shard locked.
 * Returns the evicted entries, to be released outside the lock (an entry
 * a reader still holds is freed by its last reader). */
static struct cache_entry *account(struct cache *c, struct shard *s,
				      struct cache_entry *e)
{
	struct cache_entry *victim, *doomed = NULL;

	lru_push(s, e);
	s->bytes += e->len;
	victim = s->tail;
	while (s->bytes > c->budget && victim) {
		struct cache_entry *prev = victim->prev, **p;

		if (victim != e) {
			p = find(s, key_hash(victim->nid, victim->la), victim->nid, victim->la);
			*p = victim->hnext;
			lru_unlink(s, victim);
			s->bytes -= victim->len;
			victim->in_cache = 0;
			victim->hnext = doomed;
			doomed = victim;
		}
		victim = prev;
	}
	return doomed;
}

static void release_all(struct cache *c, struct cache_entry *doomed)
{
	while (doomed) {
		struct cache_entry *next = doomed->hnext;

		cache_put(c, doomed);
		doomed = next;
	}
}

/* Make e visible under its key, with the cache's own reference. */
static void link_key(struct cache_entry **slot, struct cache_entry *e,
		     uint64_t nid, uint64_t la, unsigned int idx)
{
	e->nid = nid;
	e->la = la;
	e->shard = idx;
	e->in_cache = 1;
	atomic_fetch_add(&e->refs, 1);
	e->hnext = NULL;
	*slot = e;
}

void cache_insert(struct cache *c, struct cache_entry *e,
		     uint64_t nid, uint64_t la)
{
	uint64_t h = key_hash(nid, la);
	unsigned int idx = (unsigned int)(h % c->nshards);
	struct shard *s = &c->shards[idx];
	struct cache_entry **slot, *doomed;

	/* Larger than a shard's whole budget: not worth keeping. */
	if (e->len > c->budget)
		return;
	atomic_store(&e->state, EK_CACHE_READY);
	pthread_mutex_lock(&s->lock);
	slot = find(s, h, nid, la);
	if (*slot) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	link_key(slot, e, nid, la, idx);
	doomed = account(c, s, e);
	pthread_mutex_unlock(&s->lock);
	release_all(c, doomed);
}

int cache_claim(struct cache *c, uint64_t nid, uint64_t la, size_t len,
		   struct cache_entry **out)
{
	uint64_t h = key_hash(nid, la);
	unsigned int idx = (unsigned int)(h % c->nshards);
	struct shard *s = &c->shards[idx];
	struct cache_entry **slot, *e;

	*out = NULL;
	if (len > c->budget || cache_contains(c, nid, la))
		return 0;
	/* Allocated outside the lock; a claim that lost the race in the
	 * meantime gives it back. */
	e = cache_alloc(c, len);
	if (!e)
		return -ENOMEM;
	atomic_store(&e->state, EK_CACHE_PENDING);
	pthread_mutex_lock(&s->lock);
	slot = find(s, h, nid, la);
	if (*slot) {
		pthread_mutex_unlock(&s->lock);
		free_entry(e);
		return 0;
	}
	link_key(slot, e, nid, la, idx);
	pthread_mutex_unlock(&s->lock);
	*out = e;
	return 1;
}

void cache_publish(struct cache *c, struct cache_entry *e)
{
	struct shard *s = &c->shards[e->shard];
	struct cache_entry *doomed;

	pthread_mutex_lock(&s->lock);
	atomic_store(&e->state, EK_CACHE_READY);
	doomed = account(c, s, e);
	pthread_cond_broadcast(&s->settled);
	pthread_mutex_unlock(&s->lock);
	release_all(c, doomed);
}

void cache_abandon(struct cache *c, struct cache_entry *e)
{
	struct shard *s = &c->shards[e->shard];
	struct cache_entry **slot;

	pthread_mutex_lock(&s->lock);
	slot = find(s, key_hash(e->nid, e->la), e->nid, e->la);
	if (*slot == e)
		*slot = e->hnext;
	e->in_cache = 0;
	atomic_store(&e->state, EK_CACHE_FAILED);
	pthread_cond_broadcast(&s->settled);
	pthread_mutex_unlock(&s->lock);
	cache_put(c, e);   /* the cache's reference */
}

void cache_drop(struct cache *c, struct cache_entry *e)
{
	struct shard *s = &c->shards[e->shard];
	struct cache_entry **slot;
	int dropped = 0;

	pthread_mutex_lock(&s->lock);
	if (e->in_cache && atomic_load(&e->state) == EK_CACHE_READY) {
		slot = find(s, key_hash(e->nid, e->la), e->nid, e->la);
		if (*slot == e) {
			*slot = e->hnext;
			lru_unlink(s, e);
			s->bytes -= e->len;
			e->in_cache = 0;
			dropped = 1;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (dropped)
		cache_put(c, e);   /* the cache's reference */
}

int cache_wait(struct cache *c, struct cache_entry *e)
{
	struct shard *s = &c->shards[e->shard];
	int state = atomic_load(&e->state);

	if (state == EK_CACHE_PENDING) {
		pthread_mutex_lock(&s->lock);
		while ((state = atomic_load(&e->state)) == EK_CACHE_PENDING)
			pthread_cond_wait(&s->settled, &s->lock);
		pthread_mutex_unlock(&s->lock);
	}
	return state == EK_CACHE_READY ? 0 : -1;
}

void cache_stats(struct cache *c, uint64_t *hits, uint64_t *misses,
		    uint64_t *bytes)
{
	unsigned int i;

	*hits = *misses = *bytes = 0;
	for (i = 0; i < c->nshards; i++) {
		pthread_mutex_lock(&c->shards[i].lock);
		*hits += c->shards[i].hits;
		*misses += c->shards[i].misses;
		*bytes += c->shards[i].bytes;
		pthread_mutex_unlock(&c->shards[i].lock);
	}
}
