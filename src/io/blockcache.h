/*
 * The block cache's parts, each calling only those below it: cachechunks.c
 * (chunks, claims, fetching them), cacheahead.c (background fetches),
 * blockcache.c (reads, checks, the io_ops), cacheopen.c (files, opening);
 * and what they share.  See blockcache.c for the design.
 */
#ifndef EK_IO_BLOCKCACHE_H
#define EK_IO_BLOCKCACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/cachedir.h"
#include "io/io.h"
#include "util/digest.h"
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
	/* Called when the last chunk arrives (bc_check_whole). */
	void (*complete)(struct cache_io *c);
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

/* cachechunks.c */
/* Whether a chunk is present and good (its first use in this process
 * reads it whole against its hash, into *scratch: NULL or CHUNK bytes,
 * allocated when first needed, the caller's to free). */
bool bc_chunk_present(struct cache_io *c, uint64_t chunk, uint8_t **scratch);
/* Drop a chunk whose entry still reads expect. */
void bc_drop_chunk(struct cache_io *c, uint64_t chunk, uint64_t expect);
/* Copy [off, off + len) of a present chunk; false when it changed under
 * the copy. */
bool bc_copy_from_cache(struct cache_io *c, uint64_t chunk, void *buf, size_t len, uint64_t off);
/* Under c->claim_lock: claim a chunk for this thread to fetch; false when
 * another has it. */
bool bc_claim(struct cache_io *c, uint64_t chunk);
void bc_release_claims(struct cache_io *c, const uint64_t *chunks, size_t n);
void bc_wait_claim(struct cache_io *c, uint64_t chunk);
/* Claimed chunks (sorted) fetched into data (n * CHUNK) and the cache. */
int bc_fetch_chunks(struct cache_io *c, const uint64_t *chunks, size_t n, uint8_t *data);

/* blockcache.c */
extern const struct io_ops bc_ops;
void bc_close(struct io *io);
/* Every chunk present: the whole against the digest, in the background
 * (cache_io.complete). */
void bc_check_whole(struct cache_io *c);

/* cacheahead.c */
/* The read layer's hint, io_ops.prefetch. */
void bc_prefetch(struct io *io, uint64_t offset, uint64_t len);
/* A read of chunks [first, last]: sequential streams read further ahead. */
void bc_read_ahead(struct cache_io *c, uint64_t first, uint64_t last);
/* The whole image, in the background. */
void bc_prefetch_all(struct cache_io *c);

#endif
