/*
 * Image I/O back ends.  The read layer sees only this interface: buffered
 * pread, an in-memory image (for fuzzing and tests), and io_uring with
 * O_DIRECT.  All calls are thread-safe.
 */
#ifndef EK_IO_IO_H
#define EK_IO_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

struct io;

/* One read of a batch. */
struct io_req {
	void *buf;
	size_t len;
	uint64_t offset;
	int result;        /* filled in: 0 or negative errno */
};

struct io_ops {
	/* Read exactly len bytes at offset; -EIO on failure.  The caller
	 * has checked that [offset, offset + len) lies inside the image. */
	int (*read)(struct io *io, void *buf, size_t len, uint64_t offset);
	/* Read a batch; back ends without queues loop over read(). */
	void (*read_batch)(struct io *io, struct io_req *reqs, size_t n);
	/* Optional: [offset, offset + len) will be read soon; start fetching
	 * it without waiting.  A hint, clipped by the back end. */
	void (*prefetch)(struct io *io, uint64_t offset, uint64_t len);
	/* Optional: why the calling thread's last read failed, in words
	 * more exact than its errno (an HTTP status, a changed object);
	 * NULL when there is nothing to add. */
	const char *(*why)(struct io *io);
	/* Optional: check the whole object against the digest it was
	 * opened with; 0, -EUCLEAN (why filled) or -ENODATA (no digest). */
	int (*verify)(struct io *io, char *why, size_t size);
	/* Optional: the object was found not to be what it was opened as
	 * (its digest); why() says so.  Reads above must then fail even where
	 * they have the bytes decoded already. */
	bool (*condemned)(struct io *io);
	void (*close)(struct io *io);
};

struct io {
	const struct io_ops *ops;
	uint64_t size;        /* bytes in the image */
	const char *name;     /* back end name for reports */
	/* What the bytes are, for a cache to key them on (a URL with its
	 * object's validator and size); NULL when it cannot be told. */
	const char *identity;
};

int io_open_pread(const char *path, struct io **out, ek_error *err);
/* With O_DIRECT where the file allows it, its readahead stage (stage.h)
 * growing by up to *borrow bytes of the caller's memory budget: *borrow
 * is set to what it took (0 on the buffered and pread paths). */
int io_open_uring(const char *path, uint64_t *borrow, struct io **out, ek_error *err);
/* http:// and https:// URLs (http.c); io_is_url tells them apart from
 * file names. */
bool io_is_url(const char *name);
/* What a caller knows of the object beyond its URL: an authorization
 * header, an identity for the cache (a digest), the size it must have. */
struct io_http_extra {
	const char *auth;
	const char *identity;
	uint64_t size;
	/* Optional: auth expires (a registry's token).  On a 401, renew()
	 * answers the challenge with a new "Authorization: ..." line into
	 * out, or returns -errno with out saying why.  The back end owns ctx
	 * (release() at close, or at once when the open fails). */
	int (*renew)(void *ctx, const char *challenge, char *out, size_t size);
	void (*release)(void *ctx);
	void *ctx;
};
int io_open_http(const char *url, const ek_http_options *o,
		 const struct io_http_extra *x, struct io **out, ek_error *err);
/* A persistent cache of inner's bytes in dir (blockcache.c), bounded by
 * max_bytes; dir NULL or "": a private unnamed file instead; prefetch_all:
 * all of inner fetched in the background.  Takes inner on success; on
 * failure it stays the caller's.  io_cache_default_dir: $XDG_CACHE_HOME/erofskit
 * or ~/.cache/erofskit, -errno when neither can be named. */
int io_open_cache(struct io *inner, const char *dir, uint64_t max_bytes,
		  bool prefetch_all, const char *digest, struct io **out, ek_error *err);
int io_cache_default_dir(char *out, size_t size);
int io_open_memory(const void *data, size_t size, struct io **out,
		      ek_error *err);

/* An image and its extra devices' files as one address space (route.c):
 * bytes [start, start + len) are read from io at offset - start, the rest
 * from primary; a read over several is read from each, and one that
 * reaches bytes no file holds fails.  Ranges must not be empty nor
 * overlap.  Takes primary and every route's io on success; on failure
 * they stay the caller's.  Named as primary. */
struct io_route {
	uint64_t start, len;
	struct io *io;
};
int io_open_routed(struct io *primary, const struct io_route *routes, size_t n,
		   struct io **out, ek_error *err);

/* The bytes of inner from start on, as an image of their own
 * (window.c); -EINVAL when start is at or past inner's end.  Takes inner
 * on success; on failure it stays the caller's. */
int io_open_window(struct io *inner, uint64_t start, struct io **out, ek_error *err);

/* read_batch for back ends that have no queue of their own. */
void io_read_batch_serial(struct io *io, struct io_req *reqs,
			     size_t n);

static inline void io_close(struct io *io)
{
	if (io)
		io->ops->close(io);
}

static inline bool io_condemned(struct io *io)
{
	return io->ops->condemned && io->ops->condemned(io);
}

/* The words for a failed read: the back end's own, else the errno's. */
static inline const char *io_strerror(struct io *io, int code)
{
	const char *why = io->ops->why ? io->ops->why(io) : NULL;

	return why ? why : ek_strerror(code);
}

#endif
