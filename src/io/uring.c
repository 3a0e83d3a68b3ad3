/*
 * io_uring back end with O_DIRECT: compressed blocks bypass the page
 * cache, so they are not cached twice (once compressed by the kernel, once
 * decoded by us).
 *
 * The direct path has none of the kernel's readahead help, so it asks in
 * the shape devices serve best: a batch's requests are sorted and merged
 * into large aligned spans (neighbours, and gaps up to MERGE_GAP between
 * them, read once), several spans in flight, into a per-ring arena, then
 * copied out (buffered reads go straight into the requests).
 * prefetch() hands ranges the read layer will want soon to a stage (a
 * pool of aligned chunks read asynchronously, stage.c), whose chunks
 * later reads copy from; the pool holds what the page cache would.
 *
 * Where O_DIRECT is refused (a compressed EROFS file, some network or FUSE
 * files) the file is opened buffered and the kernel's readahead does the
 * work; ek_image_io() names which.  Where io_uring is missing, pread.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io.h"
#include "io/stage.h"
#include "util/ctxpool.h"
#include "util/error.h"

#define DEPTH 64u
#define ALIGN 4096u
#define ARENA ((size_t)4 << 20)     /* per ring: bytes of spans in flight */
#define SPAN_MAX ((size_t)1 << 20)  /* one read */
#define MERGE_GAP ((uint64_t)16 << 10)  /* read over a hole this small */

struct uring_io {
	struct io base;
	int fd;
	bool direct;
	struct ctxpool rings;    /* one ring per concurrent caller */
	struct stage *stage;     /* readahead chunks, direct only; may be NULL */
};

/* Per concurrent caller.  Its arena is not registered with the kernel:
 * that would pin all of it for every ring, where most batches touch its
 * first pages only (the stage's chunks, always in use, are registered). */
struct ring {
	struct io_uring ring;
	uint8_t *arena;          /* ARENA bytes, ALIGN-aligned */
};

static void *ring_new(void)
{
	struct ring *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (io_uring_queue_init(DEPTH, &r->ring, 0) < 0) {
		free(r);
		return NULL;
	}
	if (posix_memalign((void **)&r->arena, ALIGN, ARENA)) {
		io_uring_queue_exit(&r->ring);
		free(r);
		return NULL;
	}
	return r;
}

static void ring_free(void *p)
{
	struct ring *r = p;

	if (r) {
		io_uring_queue_exit(&r->ring);
		free(r->arena);
		free(r);
	}
}

/* ------------------------------------------------------------ spans */

/* One read of the file serving one or more requests (reqs[first..last]
 * of the sorted order). */
struct span {
	uint64_t start;
	size_t len, done;
	uint8_t *dst;
	size_t first, last;      /* into the sorted order */
	int error;
};

static uint64_t align_down(uint64_t v)
{
	return v / ALIGN * ALIGN;
}

static uint64_t align_up(uint64_t v)
{
	return (v + ALIGN - 1) / ALIGN * ALIGN;
}

static int cmp_req_offset(const void *a, const void *b)
{
	const struct io_req *x = *(struct io_req *const *)a, *y = *(struct io_req *const *)b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static void queue_span(struct ring *r, int fd, struct span *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

	io_uring_prep_read(sqe, fd, s->dst + s->done, (unsigned int)(s->len - s->done),
			   s->start + s->done);
	io_uring_sqe_set_data(sqe, s);
}

/* Read every span to its end (or the file's), resubmitting short ones. */
static void run_spans(struct uring_io *u, struct ring *r, struct span *spans, size_t n)
{
	size_t i, inflight = 0;

	for (i = 0; i < n; i++) {
		queue_span(r, u->fd, &spans[i]);
		inflight++;
	}
	io_uring_submit(&r->ring);
	while (inflight) {
		struct io_uring_cqe *cqe;
		struct span *s;
		int res;

		int ret = io_uring_wait_cqe(&r->ring, &cqe);

		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			/* Nothing more will come: fail what is left. */
			for (i = 0; i < n; i++)
				if (spans[i].done < spans[i].len && !spans[i].error)
					spans[i].error = -EIO;
			return;
		}
		s = io_uring_cqe_get_data(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&r->ring, cqe);
		if (res <= 0) {
			/* 0: the end of the file inside the aligned tail, which
			 * the copy checks against each request. */
			s->error = res;
			inflight--;
			continue;
		}
		s->done += (size_t)res;
		if (s->done < s->len) {
			queue_span(r, u->fd, s);
			io_uring_submit(&r->ring);
			continue;
		}
		inflight--;
	}
}

/* Each request of the span gets its bytes, or its error. */
static void finish_span(const struct span *s, struct io_req **sorted)
{
	size_t k;

	for (k = s->first; k <= s->last; k++) {
		struct io_req *q = sorted[k];
		uint64_t need = q->offset + q->len - s->start;

		if (s->done < need) {
			q->result = s->error < 0 ? s->error : -EIO;
			continue;
		}
		if (s->dst + (q->offset - s->start) != q->buf)
			memcpy(q->buf, s->dst + (q->offset - s->start), q->len);
		q->result = 0;
	}
}

/*
 * The sorted requests from *next on, as spans that fit the arena (and
 * DEPTH); a request too large for it gets a span of its own, into its own
 * buffer when aligned, else a bounce buffer (*bounce, freed by the
 * caller); buffered reads are one span each, into the request.  Returns
 * the number of spans.
 */
static size_t plan_spans(struct uring_io *u, struct ring *r, struct io_req **sorted,
			 size_t n, size_t *next, struct span *spans, uint8_t **bounce)
{
	size_t used = 0, count = 0;

	while (*next < n && count < DEPTH) {
		struct io_req *q = sorted[*next];
		struct span *s = &spans[count];
		uint64_t start = align_down(q->offset), end = align_up(q->offset + q->len);

		/* Buffered reads need no alignment: straight into the request. */
		if (!u->direct) {
			*s = (struct span){ .start = q->offset, .len = q->len, .dst = q->buf,
					    .first = *next, .last = *next };
			count++;
			(*next)++;
			continue;
		}
		if (end - start > ARENA) {
			if (count)
				break;          /* next round, alone */
			*s = (struct span){ .start = start, .len = (size_t)(end - start),
					    .first = *next, .last = *next };
			if (start == q->offset && !((uintptr_t)q->buf % ALIGN) && !(q->len % ALIGN))
				s->dst = q->buf;
			else if (posix_memalign((void **)bounce, ALIGN, s->len))
				*bounce = NULL;
			else
				s->dst = *bounce;
			if (!s->dst) {
				q->result = -ENOMEM;
				(*next)++;
				return 0;
			}
			(*next)++;
			return 1;
		}
		if (count) {
			struct span *prev = &spans[count - 1];
			uint64_t prev_end = prev->start + prev->len;

			/* Joins the span before when near and the span stays
			 * within SPAN_MAX and the arena. */
			if (start <= prev_end + MERGE_GAP && end - prev->start <= SPAN_MAX &&
			    used - prev->len + (end > prev_end ? end : prev_end) - prev->start <= ARENA) {
				if (end > prev_end) {
					used += (size_t)(end - prev_end);
					prev->len = (size_t)(end - prev->start);
				}
				prev->last = (*next)++;
				continue;
			}
		}
		if (used + (end - start) > ARENA)
			break;
		*s = (struct span){ .start = start, .len = (size_t)(end - start), .dst = r->arena + used,
				    .first = *next, .last = *next };
		used += s->len;
		count++;
		(*next)++;
	}
	return count;
}

static void uring_read_batch(struct io *io, struct io_req *reqs, size_t n)
{
	struct uring_io *u = (struct uring_io *)io;
	struct io_req *one[1], **sorted = n > 1 ? malloc(n * sizeof(*sorted)) : one;
	struct ring *r = ctxpool_get(&u->rings);
	struct span spans[DEPTH];
	size_t i, next = 0;

	if (!r || !sorted) {
		for (i = 0; i < n; i++)
			reqs[i].result = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		sorted[i] = &reqs[i];
		reqs[i].result = -EIO;
	}
	/* What the stage holds already (or is reading) is copied from it. */
	if (u->stage) {
		size_t kept = 0;

		/* All of the batch's chunk reads start before any is waited for. */
		for (i = 0; i < n; i++)
			stage_prepare(u->stage, reqs[i].offset, reqs[i].len);
		for (i = 0; i < n; i++)
			if (stage_copy(u->stage, reqs[i].buf, reqs[i].len, reqs[i].offset) == 0)
				reqs[i].result = 0;
			else
				sorted[kept++] = &reqs[i];
		n = kept;
	}
	qsort(sorted, n, sizeof(*sorted), cmp_req_offset);
	while (next < n) {
		uint8_t *bounce = NULL;
		size_t count = plan_spans(u, r, sorted, n, &next, spans, &bounce);

		run_spans(u, r, spans, count);
		for (i = 0; i < count; i++)
			finish_span(&spans[i], sorted);
		free(bounce);
	}
out:
	if (r)
		ctxpool_put(&u->rings, r);
	if (sorted != one)
		free(sorted);
}

static int uring_read(struct io *io, void *buf, size_t len, uint64_t off)
{
	struct io_req r = { .buf = buf, .len = len, .offset = off };

	uring_read_batch(io, &r, 1);
	return r.result;
}

static void uring_prefetch(struct io *io, uint64_t offset, uint64_t len)
{
	struct uring_io *u = (struct uring_io *)io;

	if (u->stage)
		stage_fetch(u->stage, offset, len);
	else if (!u->direct)    /* buffered: the kernel's readahead */
		(void)posix_fadvise(u->fd, (off_t)offset, (off_t)len, POSIX_FADV_WILLNEED);
}

static void uring_close(struct io *io)
{
	struct uring_io *u = (struct uring_io *)io;

	stage_destroy(u->stage);
	ctxpool_fini(&u->rings);
	close(u->fd);
	free(u);
}

static const struct io_ops uring_ops = {
	.read = uring_read,
	.read_batch = uring_read_batch,
	.prefetch = uring_prefetch,
	.close = uring_close,
};

int io_open_uring(const char *path, uint64_t *borrow, struct io **out, ek_error *err)
{
	uint64_t lend = *borrow;
	struct uring_io *u;
	struct stat st;
	void *probe;
	int fd;

	*borrow = 0;
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
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		close(fd);
		ring_free(probe);
		return err_fail(err, -EINVAL, "%s: not a regular file or block device", path);
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
	/* Without its stage the direct path still works, reading on demand. */
	if (u->direct && u->base.size)
		u->stage = stage_create(fd, u->base.size, lend, borrow);
	*out = &u->base;
	return 0;
}
