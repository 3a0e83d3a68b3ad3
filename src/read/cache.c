/* Sharded LRU cache of decoded extents. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "read/cache.h"
#include "util/error.h"

#define SHARDS_MAX 64u
#define BUCKETS 256u   /* per shard; chains stay short for any sane budget */

struct shard {
	pthread_mutex_t lock;
	struct ek_cache_entry *buckets[BUCKETS];
	struct ek_cache_entry *head, *tail;   /* most / least recently used */
	size_t bytes;
	uint64_t hits, misses;
} __attribute__((aligned(64)));

struct ek_cache {
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

int ek_cache_create(size_t bytes, size_t min_shard, struct ek_cache **out,
		    ek_error *err)
{
	struct ek_cache *c = aligned_alloc(64, sizeof(*c));
	unsigned int i;

	if (!c)
		return ek_fail(err, -ENOMEM, "out of memory");
	memset(c, 0, sizeof(*c));
	c->nshards = (unsigned int)(bytes / (min_shard ? min_shard : 1));
	if (c->nshards < 1)
		c->nshards = 1;
	if (c->nshards > SHARDS_MAX)
		c->nshards = SHARDS_MAX;
	c->budget = bytes / c->nshards;
	for (i = 0; i < c->nshards; i++)
		pthread_mutex_init(&c->shards[i].lock, NULL);
	*out = c;
	return 0;
}

static void free_entry(struct ek_cache_entry *e)
{
	free(e->data);
	free(e);
}

void ek_cache_destroy(struct ek_cache *c)
{
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < c->nshards; i++) {
		struct ek_cache_entry *e = c->shards[i].head;

		while (e) {
			struct ek_cache_entry *next = e->next;

			free_entry(e);
			e = next;
		}
		pthread_mutex_destroy(&c->shards[i].lock);
	}
	free(c);
}

static void lru_unlink(struct shard *s, struct ek_cache_entry *e)
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

static void lru_push(struct shard *s, struct ek_cache_entry *e)
{
	e->prev = NULL;
	e->next = s->head;
	if (s->head)
		s->head->prev = e;
	s->head = e;
	if (!s->tail)
		s->tail = e;
}

static struct ek_cache_entry **find(struct shard *s, uint64_t h, uint64_t nid,
				   uint64_t la)
{
	struct ek_cache_entry **p = &s->buckets[(h >> 6) % BUCKETS];

	while (*p && ((*p)->nid != nid || (*p)->la != la))
		p = &(*p)->hnext;
	return p;
}

struct ek_cache_entry *ek_cache_get(struct ek_cache *c, uint64_t nid, uint64_t la)
{
	uint64_t h = key_hash(nid, la);
	struct shard *s = &c->shards[h % c->nshards];
	struct ek_cache_entry *e;

	pthread_mutex_lock(&s->lock);
	e = *find(s, h, nid, la);
	if (e) {
		atomic_fetch_add(&e->refs, 1);
		if (s->head != e) {
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

int ek_cache_contains(struct ek_cache *c, uint64_t nid, uint64_t la)
{
	uint64_t h = key_hash(nid, la);
	struct shard *s = &c->shards[h % c->nshards];
	int found;

	pthread_mutex_lock(&s->lock);
	found = *find(s, h, nid, la) != NULL;
	pthread_mutex_unlock(&s->lock);
	return found;
}

struct ek_cache_entry *ek_cache_alloc(struct ek_cache *c, size_t len)
{
	struct ek_cache_entry *e = calloc(1, sizeof(*e));

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

void ek_cache_put(struct ek_cache *c, struct ek_cache_entry *e)
{
	(void)c;
	if (e && atomic_fetch_sub(&e->refs, 1) == 1)
		free_entry(e);
}

void ek_cache_insert(struct ek_cache *c, struct ek_cache_entry *e,
		     uint64_t nid, uint64_t la)
{
	uint64_t h = key_hash(nid, la);
	unsigned int idx = (unsigned int)(h % c->nshards);
	struct shard *s = &c->shards[idx];
	struct ek_cache_entry **slot, *victim, *doomed = NULL;

	/* Larger than a shard's whole budget: not worth keeping. */
	if (e->len > c->budget)
		return;
	pthread_mutex_lock(&s->lock);
	slot = find(s, h, nid, la);
	if (*slot) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	e->nid = nid;
	e->la = la;
	e->shard = idx;
	e->in_cache = 1;
	atomic_fetch_add(&e->refs, 1);   /* the cache's own reference */
	e->hnext = NULL;
	*slot = e;
	lru_push(s, e);
	s->bytes += e->len;
	/* Evict from the cold end.  An entry a reader still holds leaves the
	 * cache now and is freed by its last reader. */
	victim = s->tail;
	while (s->bytes > c->budget && victim) {
		struct ek_cache_entry *prev = victim->prev, **p;

		if (victim != e) {
			p = find(s, key_hash(victim->nid, victim->la), victim->nid, victim->la);
			*p = victim->hnext;
			lru_unlink(s, victim);
			s->bytes -= victim->len;
			victim->in_cache = 0;
			victim->hnext = doomed;   /* release outside the lock */
			doomed = victim;
		}
		victim = prev;
	}
	pthread_mutex_unlock(&s->lock);
	while (doomed) {
		struct ek_cache_entry *next = doomed->hnext;

		ek_cache_put(c, doomed);
		doomed = next;
	}
}

void ek_cache_stats(struct ek_cache *c, uint64_t *hits, uint64_t *misses,
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
