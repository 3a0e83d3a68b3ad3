/* The decoded-extent cache's claims (one decode per extent, however many
 * threads want it) and the engine's batches (every request completes
 * exactly once, with its callback, whatever the split between workers). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <lz4.h>

#include "codec/engine.h"
#include "erofskit/build.h"
#include "read/cache.h"
#include "read/internal.h"

/* The fastest of each algorithm, as an image gets by default. */
static const struct decoder_choice default_decoders = {
	.use = {
		[EROFS_ALG_LZ4] = &lz4_decoder,
		[EROFS_ALG_LZMA] = &microlzma_decoder,
		[EROFS_ALG_DEFLATE] = &libdeflate_decoder,
		[EROFS_ALG_ZSTD] = &zstd_decoder,
	},
};

static struct cache *new_cache(size_t bytes)
{
	struct cache *c = NULL;
	ek_error err;

	assert_int_equal(cache_create(bytes, bytes, &c, &err), 0);
	return c;
}

/* Claim a key that must be free, fill it with `fill` and publish it. */
static void publish_new(struct cache *c, uint64_t nid, uint64_t la,
			size_t len, int fill)
{
	struct cache_entry *e;

	assert_int_equal(cache_claim(c, nid, la, len, &e), 1);
	memset(e->data, fill, len);
	cache_publish(c, e);
	cache_put(c, e);
}

static void test_claim_then_publish(void **state)
{
	struct cache *c = new_cache(1u << 20);
	struct cache_entry *e, *again, *seen;

	(void)state;
	assert_int_equal(cache_claim(c, 7, 4096, 100, &e), 1);
	assert_non_null(e);
	/* Claimed once: a second claim has nothing to do. */
	assert_int_equal(cache_claim(c, 7, 4096, 100, &again), 0);
	assert_null(again);
	seen = cache_get(c, 7, 4096);
	assert_ptr_equal(seen, e);
	assert_int_equal(atomic_load(&seen->state), EK_CACHE_PENDING);
	memset(e->data, 0xAB, 100);
	cache_publish(c, e);
	assert_int_equal(cache_wait(c, seen), 0);
	assert_int_equal(seen->data[99], 0xAB);
	cache_put(c, seen);
	cache_put(c, e);
	/* Published: found ready, still not claimable. */
	seen = cache_get(c, 7, 4096);
	assert_non_null(seen);
	assert_int_equal(cache_wait(c, seen), 0);
	cache_put(c, seen);
	assert_int_equal(cache_claim(c, 7, 4096, 100, &again), 0);
	cache_destroy(c);
}

static void test_abandon(void **state)
{
	struct cache *c = new_cache(1u << 20);
	struct cache_entry *e, *seen;

	(void)state;
	assert_int_equal(cache_claim(c, 1, 0, 10, &e), 1);
	seen = cache_get(c, 1, 0);
	cache_abandon(c, e);
	cache_put(c, e);
	assert_int_equal(cache_wait(c, seen), -1);
	cache_put(c, seen);
	/* The key is free again. */
	assert_null(cache_get(c, 1, 0));
	publish_new(c, 1, 0, 10, 0);
	cache_destroy(c);
}

static void test_drop(void **state)
{
	struct cache *c = new_cache(1u << 20);
	struct cache_entry *e, *held;
	uint64_t hits, misses, bytes;

	(void)state;
	assert_int_equal(cache_claim(c, 2, 0, 4096, &e), 1);
	/* A pending entry is not dropped. */
	cache_drop(c, e);
	assert_non_null(held = cache_get(c, 2, 0));
	cache_put(c, held);
	memset(e->data, 0x5A, 4096);
	cache_publish(c, e);
	cache_put(c, e);
	held = cache_get(c, 2, 0);
	cache_drop(c, held);
	/* Gone from the cache and its byte count; the holder's copy lives. */
	assert_null(cache_get(c, 2, 0));
	cache_stats(c, &hits, &misses, &bytes);
	assert_int_equal(bytes, 0);
	assert_int_equal(held->data[4095], 0x5A);
	cache_drop(c, held);   /* twice: nothing happens */
	cache_put(c, held);
	publish_new(c, 2, 0, 4096, 0);   /* the key is free again */
	cache_destroy(c);
}

static void test_too_big(void **state)
{
	struct cache *c = new_cache(64u << 10);
	struct cache_entry *e = (void *)1;

	(void)state;
	assert_int_equal(cache_claim(c, 1, 0, 65u << 10, &e), 0);
	assert_null(e);
	assert_null(cache_get(c, 1, 0));
	cache_destroy(c);
}

static void test_budget(void **state)
{
	struct cache *c = new_cache(256u << 10);
	uint64_t hits, misses, bytes, i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		publish_new(c, 3, i * 4096, 4096, i);
		cache_stats(c, &hits, &misses, &bytes);
		assert_true(bytes <= 256u << 10);
	}
	/* The newest stayed, the oldest went. */
	assert_int_equal(cache_claim(c, 3, 999 * 4096, 4096, &(struct cache_entry *){ NULL }), 0);
	assert_null(cache_get(c, 3, 0));
	cache_destroy(c);
}

/* Many threads want the same keys: each key is claimed (decoded) once,
 * and everyone reads the claimer's bytes. */
#define KEYS 400
#define THREADS 6

struct racer {
	pthread_t tid;
	struct cache *c;
	atomic_int *claims;
	int bad;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	int k;

	for (k = 0; k < KEYS; k++) {
		struct cache_entry *e, *seen;

		if (cache_claim(r->c, 9, (uint64_t)k, 64, &e) == 1) {
			atomic_fetch_add(&r->claims[k], 1);
			if (k % 7 == 0)
				usleep(50);   /* let others find it pending */
			memset(e->data, k & 0xFF, 64);
			cache_publish(r->c, e);
			cache_put(r->c, e);
		}
		seen = cache_get(r->c, 9, (uint64_t)k);
		if (!seen || cache_wait(r->c, seen) || seen->data[63] != (k & 0xFF))
			r->bad++;
		if (seen)
			cache_put(r->c, seen);
	}
	return NULL;
}

static void test_one_decode_per_key(void **state)
{
	struct cache *c = new_cache(4u << 20);
	atomic_int claims[KEYS];
	struct racer r[THREADS];
	int i;

	(void)state;
	for (i = 0; i < KEYS; i++)
		atomic_init(&claims[i], 0);
	for (i = 0; i < THREADS; i++) {
		r[i] = (struct racer){ .c = c, .claims = claims };
		assert_int_equal(pthread_create(&r[i].tid, NULL, race, &r[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(r[i].tid, NULL);
		assert_int_equal(r[i].bad, 0);
	}
	for (i = 0; i < KEYS; i++)
		assert_int_equal(atomic_load(&claims[i]), 1);
	cache_destroy(c);
}

/* ------------------------------------------------------------ batches */

struct tally {
	atomic_int calls[300];
};

static void count_call(struct dreq *r, void *ctx)
{
	struct tally *t = ctx;

	atomic_fetch_add(&t->calls[(size_t)(uintptr_t)r->user], 1);
}

static void run_batches(struct engine *engine)
{
	static const size_t counts[] = { 1, 2, 3, 5, 64, 300 };
	size_t ci;

	for (ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
		size_t n = counts[ci], i;
		struct dreq *reqs = calloc(n, sizeof(*reqs));
		struct dreq **ptrs = calloc(n, sizeof(*ptrs));
		struct tally *t = calloc(1, sizeof(*t));
		uint8_t *plain = malloc(70000);

		assert_non_null(reqs);
		assert_non_null(t);
		for (i = 0; i < 70000; i++)
			plain[i] = (uint8_t)(i / 100 + i % 7);
		for (i = 0; i < n; i++) {
			/* Sizes from a few bytes to 64 KiB, so that work shares differ. */
			size_t len = 1 + (i * 7919) % 65536;
			uint8_t *in = malloc(LZ4_compressBound((int)len));
			int clen = LZ4_compress_default((const char *)plain + i % 100, (char *)in, (int)len,
						    LZ4_compressBound((int)len));
			assert_true(clen > 0);
			reqs[i] = (struct dreq){
				.algorithm = EROFS_ALG_LZ4, .in = in, .in_len = (size_t)clen,
				.out = malloc(len), .out_len = len,
				.user = (void *)(uintptr_t)i,
			};
			ptrs[i] = &reqs[i];
		}
		assert_int_equal(engine_run_batch(engine, ptrs, n, count_call, t), 0);
		for (i = 0; i < n; i++) {
			assert_int_equal(atomic_load(&t->calls[i]), 1);
			assert_int_equal(reqs[i].result, 0);
			assert_memory_equal(reqs[i].out, plain + i % 100, reqs[i].out_len);
			free((void *)reqs[i].in);
			free(reqs[i].out);
		}
		free(plain);
		free(reqs);
		free(ptrs);
		free(t);
	}
}

static void test_batches(void **state)
{
	unsigned int workers;
	ek_error err;

	(void)state;
	for (workers = 0; workers <= 3; workers++) {
		struct engine *sw = NULL, *e = NULL;

		assert_int_equal(engine_software_create(&default_decoders, &sw, &err), 0);
		if (workers)
			assert_int_equal(engine_pool_create(sw, workers, &e, &err), 0);
		else
			e = sw;
		run_batches(e);
		engine_destroy(e);
	}
}

/* A failing request fails alone, and still completes once. */
static void test_batch_failure(void **state)
{
	struct engine *sw = NULL, *e = NULL;
	struct dreq reqs[4], *ptrs[4];
	uint8_t in[4][64], out[4][64];
	struct tally *t = calloc(1, sizeof(*t));
	ek_error err;
	int i;

	(void)state;
	assert_int_equal(engine_software_create(&default_decoders, &sw, &err), 0);
	assert_int_equal(engine_pool_create(sw, 2, &e, &err), 0);
	for (i = 0; i < 4; i++) {
		int clen = LZ4_compress_default("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", (char *)in[i], 40, 64);

		assert_true(clen > 0);
		reqs[i] = (struct dreq){ .algorithm = EROFS_ALG_LZ4, .in = in[i], .in_len = (size_t)clen,
					    .out = out[i], .out_len = 40, .user = (void *)(uintptr_t)i };
		ptrs[i] = &reqs[i];
	}
	reqs[1].in_len = 3;   /* truncated stream */
	assert_int_not_equal(engine_run_batch(e, ptrs, 4, count_call, t), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(atomic_load(&t->calls[i]), 1);
		if (i == 1)
			assert_int_not_equal(reqs[i].result, 0);
		else
			assert_int_equal(reqs[i].result, 0);
	}
	engine_destroy(e);
	free(t);
}

/* ------------------------------------------------------------ read path */

/* open_small_clusters(): a 3 MiB file of 4 KiB lz4 clusters, opened with
 * a cache and readahead. */
#define SMALL_FILE (3u << 20)

struct small_clusters {
	char dir[64], path[96];
	ek_image *img;
	ek_inode *inode;
	uint8_t *bytes;
};

static void open_small_clusters(struct small_clusters *t)
{
	static const char *const words[] = {
		"cluster", "extent", "inode", "block", "read", "around", "page", "cache",
		"decode", "lz4", "erofs", "image", "kernel", "fuse", "mount", "window",
		"batch", "engine", "worker", "claim", "publish", "wait", "abandon", "zstd",
		"deflate", "lzma", "tail", "head", "map", "index", "compact", "super",
	};
	uint64_t seed;
	ek_build_options bo;
	ek_open_options oo;
	ek_error err;
	char src[96], file[128];
	ek_nid nid;
	ek_extent e;
	FILE *f;
	size_t i;

	snprintf(t->dir, sizeof(t->dir), "/tmp/ek-unit-cache-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(src, sizeof(src), "%s/src", t->dir);
	snprintf(file, sizeof(file), "%s/data", src);
	snprintf(t->path, sizeof(t->path), "%s/img", t->dir);
	assert_int_equal(mkdir(src, 0755), 0);
	t->bytes = malloc(SMALL_FILE);
	assert_non_null(t->bytes);
	/* Words from a small vocabulary in random order: lz4 halves it, so
	 * that a 4 KiB cluster holds about 8 KiB of file. */
	for (i = 0, seed = 12345; i < SMALL_FILE;) {
		const char *w;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		w = words[(seed >> 33) % (sizeof(words) / sizeof(words[0]))];
		while (*w && i < SMALL_FILE)
			t->bytes[i++] = (uint8_t)*w++;
		if (i < SMALL_FILE)
			t->bytes[i++] = (uint8_t)((seed >> 40) % 3 ? ' ' : '\n');
	}
	f = fopen(file, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(t->bytes, 1, SMALL_FILE, f), SMALL_FILE);
	fclose(f);
	ek_build_options_init(&bo);
	bo.compressor = EK_COMPRESS_LZ4;
	bo.pcluster_size = 4096;
	assert_int_equal(ek_build(t->path, src, &bo, NULL, &err), 0);
	ek_open_options_init(&oo);
	oo.cache_bytes = 16u << 20;
	oo.workers = 2;
	oo.readahead = 1;
	assert_int_equal(ek_open(t->path, &oo, &t->img, &err), 0);
	assert_int_equal(ek_lookup(t->img, "/data", &nid, &err), 0);
	assert_int_equal(ek_inode_get(t->img, nid, &t->inode, &err), 0);
	/* Small extents, or the test would prove nothing. */
	assert_int_equal(ek_map(t->inode, 300 << 10, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_COMPRESSED);
	assert_true(e.length <= 16u << 10);
	unlink(file);
	rmdir(src);
}

static void close_small_clusters(struct small_clusters *t)
{
	ek_inode_put(t->inode);
	ek_close(t->img);
	unlink(t->path);
	rmdir(t->dir);
	free(t->bytes);
}

/* Whether every compressed extent of [from, to) is in the cache (some
 * extents are stored plain: they are never cached). */
static bool window_cached(struct small_clusters *t, uint64_t from, uint64_t to)
{
	uint64_t off;
	ek_extent e;

	for (off = from; off < to; off = e.logical + e.length) {
		assert_int_equal(ek_map(t->inode, off, &e, NULL), 0);
		if (e.kind == EK_EXTENT_COMPRESSED &&
		    !cache_contains(t->img->cache, t->inode->nid, e.logical))
			return false;
	}
	return true;
}

/* One random 4 KiB read of small clusters gets the rest of its aligned
 * 1 MiB window decoded in the background, with the right bytes. */
static void test_read_around(void **state)
{
	struct small_clusters t;
	uint8_t buf[4096], *window = malloc(1u << 20);
	uint64_t from = 0, to = 0, at = (1u << 20) + (300u << 10);
	ek_error err;
	int tries;

	(void)state;
	assert_non_null(window);
	open_small_clusters(&t);
	/* What the library says it will read around (the mount pushes it). */
	assert_int_equal(ek_read_around(t.inode, at + 5, &from, &to), 1);
	assert_int_equal(from, 1u << 20);
	assert_int_equal(to, 2u << 20);
	assert_int_equal(ek_read(t.inode, buf, sizeof(buf), at, &err), (ssize_t)sizeof(buf));
	assert_memory_equal(buf, t.bytes + at, sizeof(buf));
	for (tries = 0; tries < 500 && !window_cached(&t, 1u << 20, 2u << 20); tries++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	assert_true(window_cached(&t, 1u << 20, 2u << 20));
	/* The window [1 MiB, 2 MiB) reads back right, from the cache. */
	assert_int_equal(ek_read(t.inode, window, 1u << 20, 1u << 20, &err), 1 << 20);
	assert_memory_equal(window, t.bytes + (1u << 20), 1u << 20);
	close_small_clusters(&t);
	free(window);
}

/* An uncached handle (fsck's) on a copy of the image, the file's inode. */
static ek_image *open_uncached(const char *path, ek_inode **inode)
{
	ek_open_options oo;
	ek_image *img;
	ek_error err;
	ek_nid nid;

	ek_open_options_init(&oo);
	assert_int_equal(ek_open(path, &oo, &img, &err), 0);
	assert_null(img->cache);
	assert_int_equal(ek_lookup(img, "/data", &nid, &err), 0);
	assert_int_equal(ek_inode_get(img, nid, inode, &err), 0);
	return img;
}

/* Copy the image at `from` to `to` with `len` bytes of 0xff at `at`. */
static void copy_damaged(const char *from, const char *to, uint64_t at, size_t len)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	uint8_t chunk[65536];
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
		assert_int_equal(fwrite(chunk, 1, n, out), n);
	memset(chunk, 0xff, len);
	assert_int_equal(fseek(out, (long)at, SEEK_SET), 0);
	assert_int_equal(fwrite(chunk, 1, len, out), len);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* Without a cache, a read of many whole extents reads their pclusters
 * together: every byte right, at any offset and length; and a damaged
 * pcluster in the middle of such a run fails the read naming that extent,
 * while the extents before it still read. */
static void test_uncached_runs(void **state)
{
	struct small_clusters t;
	uint8_t *buf = malloc(1u << 20);
	char copy[128], where[64];
	ek_inode *inode;
	ek_image *img;
	ek_extent bad;
	ek_error err;
	ssize_t got;

	(void)state;
	assert_non_null(buf);
	open_small_clusters(&t);
	img = open_uncached(t.path, &inode);
	assert_int_equal(ek_read(inode, buf, 1u << 20, 0, &err), 1 << 20);
	assert_memory_equal(buf, t.bytes, 1u << 20);
	assert_int_equal(ek_read(inode, buf, 300000, 12345, &err), 300000);
	assert_memory_equal(buf, t.bytes + 12345, 300000);
	ek_inode_put(inode);
	ek_close(img);

	/* Damage the pcluster of the extent holding 500 KiB. */
	assert_int_equal(ek_map(t.inode, 500u << 10, &bad, &err), 0);
	assert_true(bad.logical > 0);
	snprintf(copy, sizeof(copy), "%s.bad", t.path);
	copy_damaged(t.path, copy, bad.physical, 512);
	img = open_uncached(copy, &inode);
	got = ek_read(inode, buf, 1u << 20, 0, &err);
	assert_true(got < 0);
	snprintf(where, sizeof(where), "extent at offset %llu ", (unsigned long long)bad.logical);
	assert_non_null(strstr(err.message, where));
	assert_int_equal(ek_read(inode, buf, (size_t)bad.logical, 0, &err), (ssize_t)bad.logical);
	assert_memory_equal(buf, t.bytes, (size_t)bad.logical);
	ek_inode_put(inode);
	ek_close(img);
	unlink(copy);
	close_small_clusters(&t);
	free(buf);
}

/* Sequential reading by several threads at once, each its own file
 * position, all through the same cache: every byte right. */
struct seq_reader {
	pthread_t tid;
	struct small_clusters *t;
	unsigned int chunk;
	int bad;
};

static void *read_all(void *arg)
{
	struct seq_reader *r = arg;
	uint8_t *buf = malloc(r->chunk);
	uint64_t off;

	for (off = 0; buf && off < (1u << 20); off += r->chunk) {
		ek_error err;
		size_t want = (1u << 20) - off < r->chunk ? (1u << 20) - off : r->chunk;

		if (ek_read(r->t->inode, buf, want, off, &err) != (ssize_t)want ||
		    memcmp(buf, r->t->bytes + off, want))
			r->bad++;
	}
	free(buf);
	return NULL;
}

static void test_concurrent_sequential(void **state)
{
	struct small_clusters t;
	struct seq_reader r[4];
	int i;

	(void)state;
	open_small_clusters(&t);
	for (i = 0; i < 4; i++) {
		r[i] = (struct seq_reader){ .t = &t, .chunk = 4096u << i };
		assert_int_equal(pthread_create(&r[i].tid, NULL, read_all, &r[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(r[i].tid, NULL);
		assert_int_equal(r[i].bad, 0);
	}
	close_small_clusters(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claim_then_publish),
		cmocka_unit_test(test_abandon),
		cmocka_unit_test(test_drop),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_one_decode_per_key),
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_batch_failure),
		cmocka_unit_test(test_read_around),
		cmocka_unit_test(test_uncached_runs),
		cmocka_unit_test(test_concurrent_sequential),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
