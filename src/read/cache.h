/*
 * Decompressed-cluster cache: whole decoded extents, keyed by (inode,
 * extent start), bounded in bytes, shared by every thread of an image.
 *
 * It is split into shards by key hash, each with its own lock, hash table
 * and LRU list, so that hits in different shards never contend: there is
 * no global lock on the hit path.  Entries are reference counted: a
 * reader holds one while it copies, eviction only frees unreferenced ones.
 */
#ifndef EK_READ_CACHE_H
#define EK_READ_CACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

struct ek_cache;

struct ek_cache_entry {
	uint64_t nid, la;          /* key */
	size_t len;
	atomic_uint refs;
	uint8_t *data;
	struct ek_cache_entry *hnext, *prev, *next;
	unsigned int shard;
	int in_cache;
};

/* min_shard: the smallest shard worth having (the largest entry that must
 * fit in one); more shards mean less contention. */
int ek_cache_create(size_t bytes, size_t min_shard, struct ek_cache **out,
		    ek_error *err);
void ek_cache_destroy(struct ek_cache *c);

/* A referenced entry, or NULL on a miss. */
struct ek_cache_entry *ek_cache_get(struct ek_cache *c, uint64_t nid, uint64_t la);
/* Whether the key is cached (no reference taken). */
int ek_cache_contains(struct ek_cache *c, uint64_t nid, uint64_t la);
/* A new entry of len bytes (one reference, not yet visible). */
struct ek_cache_entry *ek_cache_alloc(struct ek_cache *c, size_t len);
/* Publish e under its key; when the key is already there the older entry
 * stays and e is merely released later by its owner. */
void ek_cache_insert(struct ek_cache *c, struct ek_cache_entry *e,
		     uint64_t nid, uint64_t la);
void ek_cache_put(struct ek_cache *c, struct ek_cache_entry *e);

/* Statistics: hits, misses, bytes held. */
void ek_cache_stats(struct ek_cache *c, uint64_t *hits, uint64_t *misses,
		    uint64_t *bytes);

#endif
