/*
 * An image that starts partway into its file (mkfs.erofs --offset, the
 * kernel's fsoffset=): an archive that carries it after a header of its
 * own, say.  Byte 0 of the image is byte `start` of the file; the read
 * layer never learns of the shift.
 */
#include <errno.h>
#include <stdlib.h>

#include "io/io.h"
#include "util/error.h"

struct window_io {
	struct io base;
	struct io *inner;
	uint64_t start;
};

static struct window_io *window_of(struct io *io)
{
	return (struct window_io *)io;
}

static int window_read(struct io *io, void *buf, size_t len, uint64_t off)
{
	struct window_io *w = window_of(io);

	return w->inner->ops->read(w->inner, buf, len, off + w->start);
}

static void window_read_batch(struct io *io, struct io_req *reqs, size_t n)
{
	struct window_io *w = window_of(io);
	size_t i;

	for (i = 0; i < n; i++)
		reqs[i].offset += w->start;
	w->inner->ops->read_batch(w->inner, reqs, n);
	for (i = 0; i < n; i++)
		reqs[i].offset -= w->start;
}

static void window_prefetch(struct io *io, uint64_t off, uint64_t len)
{
	struct window_io *w = window_of(io);

	if (w->inner->ops->prefetch)
		w->inner->ops->prefetch(w->inner, off + w->start, len);
}

static const char *window_why(struct io *io)
{
	struct window_io *w = window_of(io);

	return w->inner->ops->why ? w->inner->ops->why(w->inner) : NULL;
}

/* The digest an object was opened with is the whole file's. */
static int window_verify(struct io *io, char *why, size_t size)
{
	struct window_io *w = window_of(io);

	return w->inner->ops->verify ? w->inner->ops->verify(w->inner, why, size) : -ENODATA;
}

static bool window_condemned(struct io *io)
{
	return io_condemned(window_of(io)->inner);
}

static void window_close(struct io *io)
{
	struct window_io *w = window_of(io);

	io_close(w->inner);
	free(w);
}

static const struct io_ops window_ops = {
	.read = window_read,
	.read_batch = window_read_batch,
	.prefetch = window_prefetch,
	.why = window_why,
	.verify = window_verify,
	.condemned = window_condemned,
	.close = window_close,
};

int io_open_window(struct io *inner, uint64_t start, struct io **out, ek_error *err)
{
	struct window_io *w;

	if (start >= inner->size)
		return err_fail(err, -EINVAL, "offset %llu: the file holds %llu bytes",
				(unsigned long long)start, (unsigned long long)inner->size);
	w = calloc(1, sizeof(*w));
	if (!w)
		return err_fail(err, -ENOMEM, "out of memory");
	w->base.ops = &window_ops;
	w->base.size = inner->size - start;
	w->base.name = inner->name;
	w->inner = inner;
	w->start = start;
	*out = &w->base;
	return 0;
}
