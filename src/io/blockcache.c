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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/blockcache.h"

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
	} else if (__atomic_load_n(&c->closing, __ATOMIC_RELAXED)) {
		/* Not done: the next process to open the image does it. */
		__atomic_store_n(&c->whole_checked, false, __ATOMIC_RELAXED);
	}
	free(job);
}

/* Every chunk is here: the blob against its digest, once, in the
 * background (fsck does it in the foreground, ek_verify_source). */
void bc_check_whole(struct cache_io *c)
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
	uint8_t *scratch = NULL;   /* a warm read needs none */
	uint64_t *need = NULL, *waits = NULL, ch;
	size_t i, k, nneed = 0, need_cap = 0, nwaits = 0;
	int ret = 0;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < n && !ret; i++) {
		if (!reqs[i].len)
			continue;
		for (ch = reqs[i].offset >> CHUNK_SHIFT;
		     ch <= (reqs[i].offset + reqs[i].len - 1) >> CHUNK_SHIFT && !ret; ch++)
			if (!bc_chunk_present(c, ch, &scratch))
				ret = push_chunk(&need, &nneed, &need_cap, ch);
	}
	if (ret || !nneed)
		goto out;
	qsort(need, nneed, sizeof(*need), cmp_u64);
	for (i = k = 0; i < nneed; i++)
		if (!k || need[k - 1] != need[i])
			need[k++] = need[i];
	nneed = k;
	/* Room for every outcome before anything is claimed: a bc_claim must
	 * never be lost. */
	f->chunks = malloc(nneed * sizeof(*f->chunks));
	waits = malloc(nneed * sizeof(*waits));
	if (!f->chunks || !waits) {
		ret = -ENOMEM;
		goto out;
	}
	pthread_mutex_lock(&c->claim_lock);
	for (i = 0; i < nneed; i++) {
		if (bc_claim(c, need[i]))
			f->chunks[f->n++] = need[i];
		else
			waits[nwaits++] = need[i];
	}
	pthread_mutex_unlock(&c->claim_lock);
	if (f->n) {
		f->data = malloc(f->n * CHUNK);
		ret = f->data ? bc_fetch_chunks(c, f->chunks, f->n, f->data) : -ENOMEM;
		bc_release_claims(c, f->chunks, f->n);
	}
	/* Served from the cache once their fetcher is done (or from the
	 * server, where it failed). */
	for (i = 0; i < nwaits; i++)
		bc_wait_claim(c, waits[i]);
out:
	free(scratch);
	free(need);
	free(waits);
	return ret;
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
		else if (!bc_copy_from_cache(c, chunk, dst, len, off)) {
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
			bc_read_ahead(c, reqs[i].offset >> CHUNK_SHIFT,
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

static bool cache_condemned(struct io *io)
{
	return __atomic_load_n(&((struct cache_io *)io)->bad, __ATOMIC_ACQUIRE);
}

static const char *cache_why(struct io *io)
{
	struct cache_io *c = (struct cache_io *)io;

	if (__atomic_load_n(&c->bad, __ATOMIC_ACQUIRE))
		return c->bad_why;
	return c->inner->ops->why ? c->inner->ops->why(c->inner) : NULL;
}

void bc_close(struct io *io)
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
			bc_drop_chunk(c, ch, __atomic_load_n(&c->ent[ch].state, __ATOMIC_ACQUIRE));
		return -EUCLEAN;
	}
	if (__atomic_load_n(&c->hdr->present, __ATOMIC_RELAXED) == c->nchunks)
		__atomic_fetch_or(&c->hdr->flags, CACHE_WHOLE_CHECKED, __ATOMIC_RELAXED);
	return 0;
}

const struct io_ops bc_ops = {
	.read = cache_read,
	.read_batch = cache_read_batch,
	.prefetch = bc_prefetch,
	.why = cache_why,
	.verify = cache_verify,
	.condemned = cache_condemned,
	.close = bc_close,
};
