/*
 * io_uring back end with O_DIRECT: a batch of reads goes out in one
 * submission (queue depth > 1) and bypasses the page cache, so compressed
 * blocks are not cached twice (once compressed by the kernel, once
 * decoded by us).  Unaligned requests go through an aligned bounce
 * buffer.  Where O_DIRECT is refused (tmpfs, some FUSE/overlay files) the
 * file is opened buffered; where io_uring is missing, pread takes over.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/ctxpool.h"
#include "io/io.h"
#include "util/error.h"

#define DEPTH 64u
#define ALIGN 4096u

struct uring_io {
	struct io base;
	int fd;
	bool direct;
	struct ctxpool rings;    /* one ring per concurrent caller */
};

static void *ring_new(void)
{
	struct io_uring *r = malloc(sizeof(*r));

	if (r && io_uring_queue_init(DEPTH, r, 0) < 0) {
		free(r);
		r = NULL;
	}
	return r;
}

static void ring_free(void *p)
{
	if (p) {
		io_uring_queue_exit(p);
		free(p);
	}
}

struct slot {
	struct io_req *req;
	uint8_t *bounce;         /* aligned buffer when the request is not */
	uint64_t start;          /* offset actually read */
	size_t len;              /* bytes actually read */
	size_t done;
};

static bool aligned(const struct io_req *r)
{
	return !((uintptr_t)r->buf % ALIGN) && !(r->offset % ALIGN) && !(r->len % ALIGN);
}

static int prepare(struct uring_io *u, struct slot *s, struct io_req *r)
{
	s->req = r;
	s->done = 0;
	s->bounce = NULL;
	if (!u->direct || aligned(r)) {
		s->start = r->offset;
		s->len = r->len;
		return 0;
	}
	s->start = r->offset / ALIGN * ALIGN;
	s->len = (size_t)((r->offset + r->len + ALIGN - 1) / ALIGN * ALIGN - s->start);
	if (posix_memalign((void **)&s->bounce, ALIGN, s->len))
		return -ENOMEM;
	return 0;
}

static void queue_read(struct io_uring *ring, int fd, struct slot *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	uint8_t *dst = s->bounce ? s->bounce : s->req->buf;

	io_uring_prep_read(sqe, fd, dst + s->done, (unsigned int)(s->len - s->done),
			   s->start + s->done);
	io_uring_sqe_set_data(sqe, s);
}

/* Run up to DEPTH reads to completion, resubmitting short ones. */
static void run_group(struct uring_io *u, struct io_uring *ring,
		      struct io_req *reqs, size_t n)
{
	struct slot slots[DEPTH];
	size_t i, inflight = 0;

	for (i = 0; i < n; i++) {
		reqs[i].result = prepare(u, &slots[i], &reqs[i]);
		if (reqs[i].result)
			continue;
		queue_read(ring, u->fd, &slots[i]);
		inflight++;
	}
	io_uring_submit(ring);
	while (inflight) {
		struct io_uring_cqe *cqe;
		struct slot *s;
		int res;

		if (io_uring_wait_cqe(ring, &cqe) < 0)
			break;
		s = io_uring_cqe_get_data(cqe);
		res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
		if (res < 0 || res == 0) {
			/* End of file inside an aligned read is fine once the
			 * caller's own bytes are in. */
			uint64_t need = s->req->offset + s->req->len - s->start;

			s->req->result = (res == 0 && s->done >= need) ? 0 : (res ? res : -EIO);
			inflight--;
			continue;
		}
		s->done += (size_t)res;
		if (s->done < s->len) {
			queue_read(ring, u->fd, s);
			io_uring_submit(ring);
			continue;
		}
		s->req->result = 0;
		inflight--;
	}
	for (i = 0; i < n; i++) {
		struct slot *s = &slots[i];

		if (!reqs[i].result && s->bounce)
			memcpy(reqs[i].buf, s->bounce + (reqs[i].offset - s->start),
			       reqs[i].len);
		free(s->bounce);
	}
}

static void uring_read_batch(struct io *io, struct io_req *reqs, size_t n)
{
	struct uring_io *u = (struct uring_io *)io;
	struct io_uring *ring = ctxpool_get(&u->rings);
	size_t i;

	if (!ring) {
		for (i = 0; i < n; i++)
			reqs[i].result = -ENOMEM;
		return;
	}
	for (i = 0; i < n; i += DEPTH)
		run_group(u, ring, reqs + i, n - i < DEPTH ? n - i : DEPTH);
	ctxpool_put(&u->rings, ring);
}

static int uring_read(struct io *io, void *buf, size_t len, uint64_t off)
{
	struct io_req r = { .buf = buf, .len = len, .offset = off };

	uring_read_batch(io, &r, 1);
	return r.result;
}

static void uring_close(struct io *io)
{
	struct uring_io *u = (struct uring_io *)io;

	ctxpool_fini(&u->rings);
	close(u->fd);
	free(u);
}

static const struct io_ops uring_ops = {
	.read = uring_read,
	.read_batch = uring_read_batch,
	.close = uring_close,
};

int io_open_uring(const char *path, struct io **out, ek_error *err)
{
	struct uring_io *u;
	struct stat st;
	void *probe;
	int fd;

	/* No io_uring here (old kernel, seccomp): buffered pread. */
	probe = ring_new();
	if (!probe)
		return io_open_pread(path, out, err);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	if (fd < 0 && errno == EINVAL)
		fd = open(path, O_RDONLY | O_CLOEXEC);   /* O_DIRECT refused */
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		ring_free(probe);
		return err_fail(err, -e, "%s: %s", path, strerror(e));
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		close(fd);
		ring_free(probe);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	u->fd = fd;
	u->direct = (fcntl(fd, F_GETFL) & O_DIRECT) != 0;
	ctxpool_init(&u->rings, ring_new, ring_free);
	ctxpool_put(&u->rings, probe);
	u->base.ops = &uring_ops;
	u->base.name = u->direct ? "io_uring+O_DIRECT" : "io_uring";
	u->base.size = S_ISBLK(st.st_mode) ? (uint64_t)lseek(fd, 0, SEEK_END)
					   : (uint64_t)st.st_size;
	*out = &u->base;
	return 0;
}
