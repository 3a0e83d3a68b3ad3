/* The block cache's files: made, matched to their image (or started
 * afresh), locked while in use; and the cache opened over its inner back
 * end. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/blockcache.h"
#include "util/fdio.h"
#include "util/error.h"
#include "util/path.h"

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

		keep = !fd_pread_full(c->map_fd, &have, sizeof(have), 0) &&
		       !memcmp(have.magic, want.magic, sizeof(want.magic)) &&
		       have.image_size == want.image_size && have.chunk_shift == CHUNK_SHIFT &&
		       !memcmp(have.identity, want.identity, sizeof(want.identity));
	}
	if (!keep) {
		if (ftruncate(c->map_fd, 0) || ftruncate(c->map_fd, (off_t)c->map_len) ||
		    ftruncate(c->data_fd, 0) || ftruncate(c->data_fd, (off_t)c->base.size) ||
		    fd_pwrite_full(c->map_fd, &want, sizeof(want), 0))
			ret = -errno;
	}
	flock(c->map_fd, LOCK_UN);
	return ret;
}

static int open_files(struct cache_io *c, const char *dir, const char *identity)
{
	struct stat st;
	uint8_t digest[DIGEST_SIZE];
	char hex[2 * DIGEST_SIZE + 1], path[PATH_MAX];
	int ret;

	digest_of(identity, strlen(identity), digest);
	digest_to_hex(digest, hex);
	ret = make_dirs(dir);
	if (ret)
		return ret;
	/* Blocks someone else could plant would be served as the image's
	 * (a chunk's hash is no signature): the directory must be ours. */
	if (stat(dir, &st))
		return -errno;
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
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
	c->data_fd = path_scratch_file(NULL);
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
	c->base = (struct io){ .ops = &bc_ops, .size = inner->size, .name = inner->name };
	c->nchunks = (inner->size + CHUNK - 1) >> CHUNK_SHIFT;
	c->max_chunks = max_bytes >> CHUNK_SHIFT;
	if (c->max_chunks < 16)
		c->max_chunks = 16;
	c->map_len = CACHE_HEADER_SIZE + c->nchunks * sizeof(struct map_entry);
	c->verified = calloc(c->nchunks ? c->nchunks : 1, 1);
	c->claimed = calloc(c->nchunks ? c->nchunks : 1, 1);
	if (!c->verified || !c->claimed) {
		c->inner = NULL;   /* still the caller's */
		bc_close(&c->base);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	/* A persistent cache needs to know the object it holds. */
	if (dir && *dir && identity && strlen(identity) < CACHE_IDENTITY_MAX)
		ret = open_files(c, dir, identity);
	else
		ret = open_private(c);
	if (ret) {
		c->inner = NULL;
		bc_close(&c->base);
		return err_fail(err, ret, "cache in %s: %s", dir && *dir ? dir : "$TMPDIR",
				ret == -EPERM ? "not a directory of this user's that only it may write"
					      : strerror(-ret));
	}
	c->complete = bc_check_whole;
	c->hdr = c->map;
	c->ent = (struct map_entry *)((uint8_t *)c->map + CACHE_HEADER_SIZE);
	recount(c);
	/* Without threads there is no prefetching, nothing worse. */
	if (pool_create(PREFETCH_THREADS, &c->pool))
		c->pool = NULL;
	if (prefetch_all && c->pool)
		bc_prefetch_all(c);
	/* Complete before this open (by a process that did not get to check
	 * it): checked now. */
	if (__atomic_load_n(&c->hdr->present, __ATOMIC_RELAXED) == c->nchunks &&
	    !(__atomic_load_n(&c->hdr->flags, __ATOMIC_RELAXED) & CACHE_WHOLE_CHECKED))
		bc_check_whole(c);
	*out = &c->base;
	return 0;
}
