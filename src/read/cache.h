/*
 * Decompressed-cluster cache: whole decoded extents, keyed by (inode,
 * extent start), bounded in bytes, shared by every thread of an image.
 *
 * It is split into shards by key hash, each with its own lock, hash table
 * and LRU list, so that hits in different shards never contend: there is
 * no global lock on the hit path.  Entries are reference counted: a
 * reader holds one while it copies, eviction only frees unreferenced ones.
 *
 * An extent being decoded is claimed first: a pending entry is visible
 * under its key (not yet in the LRU or the byte count), so that a second
 * reader of it, or the readahead thread, waits for the one decode instead
 * of repeating it.  The claimer publishes it when decoded or abandons it
 * on failure, waking those that wait.
 */
#ifndef EK_READ_CACHE_H
#define EK_READ_CACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

struct cache;

enum cache_state { EK_CACHE_PENDING, EK_CACHE_READY, EK_CACHE_FAILED };

struct cache_entry {
	uint64_t nid, la;          /* key */
	size_t len;
	atomic_uint refs;
	_Atomic int state;         /* enum cache_state */
	uint8_t *data;
	struct cache_entry *hnext, *prev, *next;
	unsigned int shard;
	int in_cache;
};

/* min_shard: the smallest shard worth having (the largest entry that must
 * fit in one); more shards mean less contention. */
int cache_create(size_t bytes, size_t min_shard, struct cache **out,
		    ek_error *err);
void cache_destroy(struct cache *c);

/* A referenced entry, or NULL on a miss.  The entry may still be
 * pending: cache_wait() before reading its data. */
struct cache_entry *cache_get(struct cache *c, uint64_t nid, uint64_t la);
/* Whether the key is cached (no reference taken). */
int cache_contains(struct cache *c, uint64_t nid, uint64_t la);
/* A new entry of len bytes (one reference, not yet visible). */
struct cache_entry *cache_alloc(struct cache *c, size_t len);
/* Publish e under its key; when the key is already there the older entry
 * stays and e is merely released later by its owner. */
void cache_insert(struct cache *c, struct cache_entry *e,
		     uint64_t nid, uint64_t la);
void cache_put(struct cache *c, struct cache_entry *e);

/* Take a ready entry out of the cache early (a sequential reader is done
 * with it): its memory goes back for the next decode. */
void cache_drop(struct cache *c, struct cache_entry *e);

/* Claim the key for decoding len bytes into a new pending entry.
 * Returns 1 and *out (one reference, the claimer's) when claimed; 0 when
 * the key is already cached or pending, or the entry would be too big to
 * keep (nothing to do: the reader finds it, or decodes around the cache);
 * -ENOMEM. */
int cache_claim(struct cache *c, uint64_t nid, uint64_t la, size_t len,
		   struct cache_entry **out);
/* The claimed entry's data is complete: make it a normal entry. */
void cache_publish(struct cache *c, struct cache_entry *e);
/* The claimed entry will not be completed: withdraw its key. */
void cache_abandon(struct cache *c, struct cache_entry *e);
/* Wait while e is pending; 0 when its data is ready, -1 if abandoned. */
int cache_wait(struct cache *c, struct cache_entry *e);

/* Statistics: hits, misses, bytes held. */
void cache_stats(struct cache *c, uint64_t *hits, uint64_t *misses,
		    uint64_t *bytes);

#endif
