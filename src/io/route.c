/*
 * An image whose extra devices (spec 8.3) are files of their own, read as
 * one address space: each range of it comes from the file that holds it,
 * the rest from the primary.  The read layer keeps addressing one image;
 * only this back end knows the files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "util/error.h"

struct routed_io {
	struct io base;
	struct io *primary;
	size_t nroutes;
	struct io_route routes[];
};

/* Why this thread's last read failed, when the routing refused it; NULL
 * when the back end it went to did (its why() then says). */
static _Thread_local char route_why[128];
static _Thread_local struct io *failed_in;

static int refuse(uint64_t off, size_t len, const char *what)
{
	/* A read that failed for this reason, not in a back end. */
	snprintf(route_why, sizeof(route_why), "bytes %llu-%llu %s",
		 (unsigned long long)off, (unsigned long long)(off + len), what);
	failed_in = NULL;
	return -EIO;
}

/* The back end that holds byte off, its offset there, and how many of
 * the len bytes from off it holds in a row (*run): up to the end of the
 * range, or of the device's file; the image's up to the next range.  The
 * ranges are sorted by start. */
static int locate(struct routed_io *r, uint64_t off, size_t len, struct io **io,
		  uint64_t *at, size_t *run)
{
	size_t lo = 0, hi = r->nroutes;
	uint64_t avail;

	/* lo: the first range that starts after off. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->routes[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && off - r->routes[lo - 1].start < r->routes[lo - 1].len) {
		const struct io_route *route = &r->routes[lo - 1];
		uint64_t in = off - route->start;

		if (in >= route->io->size)
			return refuse(off, len, "lie past the end of an extra device's file");
		avail = route->len - in < route->io->size - in ? route->len - in
							       : route->io->size - in;
		*io = route->io;
		*at = in;
	} else {
		if (off >= r->primary->size)
			return refuse(off, len, "lie past the end of the image and its devices");
		avail = r->primary->size - off;
		if (lo < r->nroutes && r->routes[lo].start - off < avail)
			avail = r->routes[lo].start - off;
		*io = r->primary;
		*at = off;
	}
	*run = len < avail ? len : (size_t)avail;
	return 0;
}

/* A read is the reads of its runs, each from the file that holds it:
 * the address space is one, as the kernel's unified addresses are. */
static int routed_read(struct io *io, void *buf, size_t len, uint64_t off)
{
	struct routed_io *r = (struct routed_io *)io;

	while (len) {
		struct io *to;
		uint64_t at;
		size_t run;
		int ret = locate(r, off, len, &to, &at, &run);

		if (ret)
			return ret;     /* refuse() said why */
		ret = to->ops->read(to, buf, run, at);
		if (ret) {
			failed_in = to;
			return ret;
		}
		buf = (uint8_t *)buf + run;
		off += run;
		len -= run;
	}
	return 0;
}

/* Runs of requests that each lie in one file, and the same file, go
 * down as one batch, their offsets made that file's for the call and
 * restored after; a request over several files is read on its own. */
static void routed_read_batch(struct io *io, struct io_req *reqs, size_t n)
{
	struct routed_io *r = (struct routed_io *)io;
	size_t i = 0;

	while (i < n) {
		struct io *to;
		uint64_t at, shift;
		size_t j, run;

		if (locate(r, reqs[i].offset, reqs[i].len, &to, &at, &run) ||
		    run < reqs[i].len) {
			reqs[i].result = routed_read(io, reqs[i].buf, reqs[i].len, reqs[i].offset);
			i++;
			continue;
		}
		shift = reqs[i].offset - at;
		for (j = i + 1; j < n; j++) {
			struct io *next;
			uint64_t next_at;

			if (locate(r, reqs[j].offset, reqs[j].len, &next, &next_at, &run) ||
			    next != to || run < reqs[j].len)
				break;
		}
		for (size_t k = i; k < j; k++)
			reqs[k].offset -= shift;
		to->ops->read_batch(to, reqs + i, j - i);
		for (size_t k = i; k < j; k++) {
			reqs[k].offset += shift;
			if (reqs[k].result)
				failed_in = to;
		}
		i = j;
	}
}

static void routed_prefetch(struct io *io, uint64_t off, uint64_t len)
{
	struct routed_io *r = (struct routed_io *)io;
	struct io *to;
	uint64_t at;
	size_t run;

	/* A hint: only its part in the first file is passed on. */
	if (len <= SIZE_MAX && !locate(r, off, (size_t)len, &to, &at, &run) && to->ops->prefetch)
		to->ops->prefetch(to, at, run);
}

static const char *routed_why(struct io *io)
{
	(void)io;
	if (failed_in)
		return failed_in->ops->why ? failed_in->ops->why(failed_in) : NULL;
	return route_why[0] ? route_why : NULL;
}

static int routed_verify(struct io *io, char *why, size_t size)
{
	struct io *primary = ((struct routed_io *)io)->primary;

	return primary->ops->verify ? primary->ops->verify(primary, why, size) : -ENODATA;
}

static bool routed_condemned(struct io *io)
{
	struct routed_io *r = (struct routed_io *)io;

	for (size_t i = 0; i < r->nroutes; i++)
		if (io_condemned(r->routes[i].io))
			return true;
	return io_condemned(r->primary);
}

static void routed_close(struct io *io)
{
	struct routed_io *r = (struct routed_io *)io;

	for (size_t i = 0; i < r->nroutes; i++)
		io_close(r->routes[i].io);
	io_close(r->primary);
	free(r);
}

static const struct io_ops routed_ops = {
	.read = routed_read,
	.read_batch = routed_read_batch,
	.prefetch = routed_prefetch,
	.why = routed_why,
	.verify = routed_verify,
	.condemned = routed_condemned,
	.close = routed_close,
};

static int by_start(const void *a, const void *b)
{
	const struct io_route *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int io_open_routed(struct io *primary, const struct io_route *routes, size_t n,
		   struct io **out, ek_error *err)
{
	struct routed_io *r;
	uint64_t size = primary->size;
	size_t i;

	r = calloc(1, sizeof(*r) + n * sizeof(r->routes[0]));
	if (!r)
		return err_fail(err, -ENOMEM, "out of memory");
	memcpy(r->routes, routes, n * sizeof(routes[0]));
	qsort(r->routes, n, sizeof(r->routes[0]), by_start);
	for (i = 0; i < n; i++) {
		const struct io_route *route = &r->routes[i];

		if (!route->len || route->len > UINT64_MAX - route->start ||
		    (i > 0 && route->start - r->routes[i - 1].start < r->routes[i - 1].len)) {
			free(r);
			return err_fail(err, -EUCLEAN,
					"extra devices: empty or overlapping ranges of the unified address space");
		}
		if (route->start + route->len > size)
			size = route->start + route->len;
	}
	r->primary = primary;
	r->nroutes = n;
	r->base.ops = &routed_ops;
	r->base.size = size;
	r->base.name = primary->name;
	r->base.identity = NULL;
	*out = &r->base;
	return 0;
}
