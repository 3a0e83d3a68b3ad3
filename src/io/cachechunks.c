/* The block cache's chunks: their state in the shared map (hash and
 * generation, by compare-and-swap), stored, found, copied, dropped and
 * evicted; claims on chunks in flight; and fetching claimed chunks from
 * the inner back end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "io/blockcache.h"
#include "util/fdio.h"

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

static void touch(struct cache_io *c, uint64_t chunk)
{
	uint32_t now = now_seconds(), last = __atomic_load_n(&c->ent[chunk].atime, __ATOMIC_RELAXED);

	if (now - last >= ATIME_STEP)
		__atomic_store_n(&c->ent[chunk].atime, now, __ATOMIC_RELAXED);
}

/* Drop a chunk whose entry still reads expect: the entry first, then the
 * bytes (a reader between the two sees the entry change). */
void bc_drop_chunk(struct cache_io *c, uint64_t chunk, uint64_t expect)
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
 * reads it whole (into *scratch, allocated then) and checks its hash: a
 * bad chunk is dropped. */
bool bc_chunk_present(struct cache_io *c, uint64_t chunk, uint8_t **scratch)
{
	uint64_t s = __atomic_load_n(&c->ent[chunk].state, __ATOMIC_ACQUIRE);
	size_t len = (size_t)chunk_len(c, chunk);

	if (!state_hash(s))
		return false;
	if (__atomic_load_n(&c->verified[chunk], __ATOMIC_RELAXED))
		return true;
	if (!*scratch && !(*scratch = malloc(CHUNK)))
		return false;   /* fetched again, that is all */
	if (fd_pread_full(c->data_fd, *scratch, len, chunk << CHUNK_SHIFT) ||
	    chunk_hash(*scratch, len) != state_hash(s)) {
		/* Unless another process rewrote it meanwhile. */
		if (__atomic_load_n(&c->ent[chunk].state, __ATOMIC_ACQUIRE) == s)
			bc_drop_chunk(c, chunk, s);
		return false;
	}
	__atomic_store_n(&c->verified[chunk], 1, __ATOMIC_RELAXED);
	return true;
}

/* A present chunk and when it was last used, as eviction found it: other
 * threads store atimes meanwhile, and a sort needs values that hold. */
struct aged_chunk {
	uint32_t atime;
	uint64_t chunk;
};

static int by_atime(const void *a, const void *b)
{
	uint32_t x = ((const struct aged_chunk *)a)->atime, y = ((const struct aged_chunk *)b)->atime;

	return x < y ? -1 : x > y;
}

/* Past the bound: the least recently used chunks out, down to 90%. */
static void evict(struct cache_io *c)
{
	struct aged_chunk *order;
	uint64_t n = 0, i, target = c->max_chunks * EVICT_TO_PERCENT / 100;

	if (__atomic_load_n(&c->hdr->present, __ATOMIC_RELAXED) <= c->max_chunks)
		return;
	/* Waited for, not tried: a thread that stored while another was
	 * evicting would otherwise leave the cache over its bound. */
	pthread_mutex_lock(&c->evict_lock);
	if (__atomic_load_n(&c->hdr->present, __ATOMIC_RELAXED) <= c->max_chunks)
		goto out;
	/* Another process at it (a private cache has no map file). */
	if (c->map_fd >= 0 && flock(c->map_fd, LOCK_EX | LOCK_NB))
		goto out;
	order = malloc(c->nchunks * sizeof(*order));
	if (order) {
		for (i = 0; i < c->nchunks; i++)
			if (state_hash(__atomic_load_n(&c->ent[i].state, __ATOMIC_RELAXED)))
				order[n++] = (struct aged_chunk){
					__atomic_load_n(&c->ent[i].atime, __ATOMIC_RELAXED), i };
		qsort(order, n, sizeof(*order), by_atime);
		for (i = 0; i < n && __atomic_load_n(&c->hdr->present, __ATOMIC_RELAXED) > target; i++)
			bc_drop_chunk(c, order[i].chunk,
				      __atomic_load_n(&c->ent[order[i].chunk].state, __ATOMIC_ACQUIRE));
		free(order);
	}
	if (c->map_fd >= 0)
		flock(c->map_fd, LOCK_UN);
out:
	pthread_mutex_unlock(&c->evict_lock);
}

/* A fetched chunk into the cache.  A full disk or any write error leaves
 * it absent: the read still has its bytes. */
static void store_chunk(struct cache_io *c, uint64_t chunk, const void *data)
{
	size_t len = (size_t)chunk_len(c, chunk);
	uint64_t s = __atomic_load_n(&c->ent[chunk].state, __ATOMIC_ACQUIRE);

	if (state_hash(s))
		return;
	if (fd_pwrite_full(c->data_fd, data, len, chunk << CHUNK_SHIFT)) {
		__atomic_store_n(&c->store_failed, true, __ATOMIC_RELAXED);
		return;
	}
	if (__atomic_compare_exchange_n(&c->ent[chunk].state, &s,
					state_make((uint32_t)(s >> 32) + 1, chunk_hash(data, len)),
					false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		uint64_t present = __atomic_add_fetch(&c->hdr->present, 1, __ATOMIC_RELAXED);

		__atomic_fetch_and(&c->hdr->flags, ~CACHE_WHOLE_CHECKED, __ATOMIC_RELAXED);
		__atomic_store_n(&c->verified[chunk], 1, __ATOMIC_RELAXED);
		__atomic_store_n(&c->ent[chunk].atime, now_seconds(), __ATOMIC_RELAXED);
		if (present == c->nchunks && c->complete)
			c->complete(c);
	}
}

/* Copy [off, off + len) of a present chunk; false when the chunk changed
 * under the copy (evicted, or rewritten by another process). */
bool bc_copy_from_cache(struct cache_io *c, uint64_t chunk, void *buf, size_t len, uint64_t off)
{
	uint64_t s = __atomic_load_n(&c->ent[chunk].state, __ATOMIC_ACQUIRE);

	if (!state_hash(s) || fd_pread_full(c->data_fd, buf, len, off))
		return false;
	if (__atomic_load_n(&c->ent[chunk].state, __ATOMIC_ACQUIRE) != s)
		return false;
	touch(c, chunk);
	return true;
}

/* Claims: a chunk one thread of this process is fetching is not fetched
 * by another, which waits for it instead.  Under c->claim_lock. */
bool bc_claim(struct cache_io *c, uint64_t chunk)
{
	if (c->claimed[chunk])
		return false;
	c->claimed[chunk] = 1;
	return true;
}

void bc_release_claims(struct cache_io *c, const uint64_t *chunks, size_t n)
{
	size_t i;

	pthread_mutex_lock(&c->claim_lock);
	for (i = 0; i < n; i++)
		c->claimed[chunks[i]] = 0;
	pthread_cond_broadcast(&c->claim_done);
	pthread_mutex_unlock(&c->claim_lock);
}

void bc_wait_claim(struct cache_io *c, uint64_t chunk)
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
int bc_fetch_chunks(struct cache_io *c, const uint64_t *chunks, size_t n, uint8_t *data)
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
