/*
 * Regular files: read every byte (decompressing), and when extracting write
 * it with positional writes, then the file's metadata.
 *
 * Work is measured in bytes, not files or clusters: small files are
 * gathered into batches of about CHECK_BATCH_BYTES; a big file is cut into
 * ranges of that size, each a job, sharing one output descriptor.  A
 * compressed extent belongs to the range holding its first byte, so no
 * extent is decoded twice; uncompressed data is simply cut.  The last range
 * to finish completes the file.  Jobs never wait for each other.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/checker.h"
#include "util/error.h"

#define PLAIN_STEP (4u << 20)   /* uncompressed data is read in these */
#define GATHER_BYTES (256u << 10) /* compressed extents read and written together */
#define NO_FAILURE UINT64_MAX

/* A file being processed, possibly by several range jobs. */
struct file_state {
	struct checker *c;
	ek_inode *inode;
	char *path;                 /* "/a/b" */
	struct xattr_list xl;
	int fd;                     /* output, -1 when checking only */
	bool budgeted;              /* holds one of c->fd_budget */
	_Atomic uint64_t data_end;  /* end of the last byte written */
	atomic_uint pending;        /* range jobs not finished */
	_Atomic uint64_t fail_at;   /* offset of the first problem, or NO_FAILURE */
	pthread_mutex_t lock;       /* that problem's message */
	int code;
	char message[EK_ERROR_MESSAGE_MAX];
	struct data_where where;    /* of that problem */
};

struct range_job {
	struct pool_job job;
	struct file_state *f;
	uint64_t start, end;
};

struct file_batch {
	struct pool_job job;
	struct checker *c;
	struct file_state **files;
	size_t n, cap;
	uint64_t bytes;
};

static void check_progress(struct checker *c, uint64_t bytes)
{
	uint64_t done = atomic_fetch_add(&c->bytes_done, bytes) + bytes;

	if (c->o->progress)
		c->o->progress(c->o->progress_ctx, done, atomic_load(&c->bytes_total));
}

/* The image byte behind file offset `at` of extent x, and its decoder. */
static struct data_where where_in(const ek_extent *x, uint64_t at)
{
	struct data_where w = { at, EK_NO_OFFSET, NULL };

	if (!x)
		return w;
	switch (x->kind) {
	case EK_EXTENT_COMPRESSED:
		w.image_offset = x->physical;   /* the pcluster's start */
		w.decoder = ek_algorithm_name(x->algorithm);
		break;
	case EK_EXTENT_PLAIN:
		if (at >= x->logical && !x->interlaced)
			w.image_offset = x->physical + (at - x->logical);
		else
			w.image_offset = x->physical;
		break;
	default:        /* holes and fragments have no image byte of their own */
		break;
	}
	return w;
}

/*
 * A damaged file is reported, and extracted, as one worker meets it: the
 * problem at the lowest offset wins, whichever range found it first, and
 * ranges keep going only below it.  The extracted file is then cut there
 * (finish_file), so its bytes do not depend on the number of workers.
 */
static void file_problem(struct file_state *f, uint64_t at, const ek_extent *x,
			 int code, const char *msg)
{
	pthread_mutex_lock(&f->lock);
	if (at < atomic_load(&f->fail_at)) {
		f->code = code;
		snprintf(f->message, sizeof(f->message), "%s", msg);
		f->where = where_in(x, at);
		atomic_store(&f->fail_at, at);
	}
	pthread_mutex_unlock(&f->lock);
}

static uint8_t *worker_buffer(struct checker *c, unsigned int worker, size_t need)
{
	struct worker_buf *b = &c->bufs[worker];

	if (need > b->cap) {
		uint8_t *p = realloc(b->data, need);

		if (!p)
			return NULL;
		b->data = p;
		b->cap = need;
	}
	return b->data;
}

/*
 * A reader may start anywhere in an extent: from every logical cluster
 * after its head, the index must lead back to that same extent (the
 * kernel follows look-back distances from there).  Costs one map per
 * cluster, far less than decoding it.
 */
static int check_lookbacks(struct file_state *f, const ek_extent *x, ek_error *e)
{
	uint64_t lcs = f->c->block_size, l;

	for (l = (x->logical / lcs + 1) * lcs; l < x->logical + x->length; l += lcs) {
		ek_extent y;
		int ret = ek_map(f->inode, l, &y, e);

		if (ret)
			return ret;
		if (y.logical != x->logical || y.length != x->length)
			return err_fail(e, -EUCLEAN,
				       "index of offset %llu leads to extent %llu+%llu, not %llu+%llu",
				       (unsigned long long)l, (unsigned long long)y.logical,
				       (unsigned long long)y.length,
				       (unsigned long long)x->logical,
				       (unsigned long long)x->length);
	}
	return 0;
}

/*
 * The whole compressed extents that follow [off, upto) and start in this
 * range are read and written together with it, up to GATHER_BYTES: one
 * read and one write instead of one per extent (at 4 KiB clusters that is
 * most of the system calls), and the library reads their pclusters, which
 * lie back to back, with one I/O.  An extent that does not qualify, or
 * whose index is bad, ends the run: it is met again on its own, where any
 * problem is reported.
 */
static uint64_t gather_extents(struct file_state *f, uint64_t off, uint64_t upto,
			       uint64_t end, uint64_t size)
{
	ek_extent y;
	ek_error e;

	while (upto < end && upto < size) {
		if (ek_map(f->inode, upto, &y, &e) || y.kind != EK_EXTENT_COMPRESSED ||
		    y.logical != upto || !y.length || y.length > size - upto ||
		    upto + y.length - off > GATHER_BYTES || check_lookbacks(f, &y, &e))
			break;
		upto += y.length;
	}
	return upto;
}

/* Check (and write) the extents whose data this range owns. */
static void process_range(struct file_state *f, unsigned int worker,
			  uint64_t start, uint64_t end)
{
	struct checker *c = f->c;
	uint64_t size = ek_inode_stat(f->inode)->size, off = start;
	uint64_t singly_until = 0;   /* a failed run is read again extent by extent */
	ek_error e;

	while (off < end && !atomic_load(&c->stop) && off < atomic_load(&f->fail_at)) {
		ek_extent x;
		uint64_t xend, upto;
		uint8_t *buf;
		ssize_t got;
		int ret = ek_map(f->inode, off, &x, &e);

		if (ret) {
			file_problem(f, off, NULL, ret, e.message);
			return;
		}
		xend = x.logical + x.length;
		if (xend <= off || xend > size) {
			file_problem(f, off, NULL, -EUCLEAN, "extent map does not cover the file");
			return;
		}
		if (x.kind == EK_EXTENT_COMPRESSED) {
			if (x.logical < start) {   /* the previous range's */
				off = xend;
				continue;
			}
			upto = xend;               /* ours entirely */
			if (check_lookbacks(f, &x, &e)) {
				file_problem(f, off, NULL, e.code, e.message);
				return;
			}
			if (off >= singly_until)
				upto = gather_extents(f, off, upto, end, size);
		} else {
			upto = xend < end ? xend : end;
		}
		if (x.kind == EK_EXTENT_HOLE) {    /* skipped in one step */
			check_progress(c, upto - off);
			off = upto;
			continue;
		}
		if (x.kind != EK_EXTENT_COMPRESSED && upto - off > PLAIN_STEP)
			upto = off + PLAIN_STEP;
		buf = worker_buffer(c, worker, (size_t)(upto - off));
		if (!buf) {
			file_problem(f, off, NULL, -ENOMEM, "out of memory");
			return;
		}
		got = ek_read(f->inode, buf, (size_t)(upto - off), off, &e);
		if (got < 0 && upto > xend) {
			/* Which extent of the run is bad, and the good ones
			 * before it, are found as one worker (whose runs are
			 * cut elsewhere) would find them. */
			singly_until = upto;
			continue;
		}
		if (got < 0 || (uint64_t)got != upto - off) {
			file_problem(f, off, &x, got < 0 ? (int)got : -EUCLEAN,
				     got < 0 ? e.message : "short read");
			return;
		}
		if (f->fd >= 0) {
			uint64_t written = 0, seen;

			if (extract_write(f->fd, buf, (size_t)got, off, &written, &e)) {
				check_io_failure(c, f->path, &e);
				return;
			}
			seen = atomic_load(&f->data_end);
			while (written > seen &&
			       !atomic_compare_exchange_weak(&f->data_end, &seen, written))
				;
		}
		check_progress(c, (uint64_t)got);
		off = upto;
	}
}

/* The file's last range is done: size, metadata, report. */
static void finish_file(struct file_state *f)
{
	struct checker *c = f->c;
	const ek_stat *st = ek_inode_stat(f->inode);
	uint64_t fail_at = atomic_load(&f->fail_at);   /* all ranges are done */
	bool failed = fail_at != NO_FAILURE;
	ek_error e;

	if (failed)
		check_problem_data(c, f->path, st->nid, f->code, f->message, &f->where);
	if (f->fd >= 0 && failed) {
		/* A damaged file keeps what could be read before its first
		 * problem, and ends there: its claimed size and metadata are
		 * not to be trusted. */
		if (ftruncate(f->fd, (off_t)fail_at) < 0) {
			err_fail(&e, -errno, "cannot set size: %s", strerror(errno));
			check_io_failure(c, f->path, &e);
		}
		close(f->fd);
	} else if (f->fd >= 0) {
		/* Size, then owner, mode, xattrs and times, all through the
		 * descriptor: no path is looked up again. */
		if (atomic_load(&f->data_end) != st->size &&
		    ftruncate(f->fd, (off_t)st->size) < 0) {
			err_fail(&e, -errno, "cannot set size: %s", strerror(errno));
			check_io_failure(c, f->path, &e);
		} else if (!atomic_load(&c->stop) &&
			   extract_set_meta_fd(&c->x, f->fd, f->path, st, &f->xl, &e)) {
			check_io_failure(c, f->path, &e);
		}
		close(f->fd);
	}
	if (f->budgeted)
		check_give_descriptor(c);
	xattr_list_free(&f->xl);
	ek_inode_put(f->inode);
	pthread_mutex_destroy(&f->lock);
	free(f->path);
	free(f);
}

static void range_done(struct file_state *f)
{
	if (atomic_fetch_sub(&f->pending, 1) == 1)
		finish_file(f);
}

static void run_range(struct pool_job *job, unsigned int worker)
{
	struct range_job *r = (struct range_job *)job;

	process_range(r->f, worker, r->start, r->end);
	range_done(r->f);
	free(r);
}

/* Create the output file in dirfd (when extracting) and the shared state. */
static struct file_state *file_open(struct checker *c, int dirfd, ek_inode *inode,
				    const char *path, struct xattr_list *xl)
{
	struct file_state *f = calloc(1, sizeof(*f));
	const char *name = strrchr(path, '/') + 1;
	ek_error e;

	if (!f || !(f->path = strdup(path))) {
		free(f);
		check_problem_entry(c, path, ek_inode_stat(inode)->nid, -ENOMEM, "out of memory");
		ek_inode_put(inode);
		xattr_list_free(xl);
		return NULL;
	}
	f->c = c;
	f->inode = inode;
	f->xl = *xl;
	memset(xl, 0, sizeof(*xl));
	f->fd = -1;
	atomic_store(&f->fail_at, NO_FAILURE);
	pthread_mutex_init(&f->lock, NULL);
	if (dirfd >= 0 && extract_create(&c->x, dirfd, name, ek_inode_stat(inode)->mode, &f->fd, &e))
		check_io_failure(c, path, &e);
	return f;
}

/* A file that is one job: all of it, then its completion. */
static void run_whole_file(struct file_state *f, unsigned int worker)
{
	if (!atomic_load(&f->c->stop))
		process_range(f, worker, 0, ek_inode_stat(f->inode)->size);
	range_done(f);
}

static void run_batch(struct pool_job *job, unsigned int worker)
{
	struct file_batch *b = (struct file_batch *)job;
	size_t i;

	for (i = 0; i < b->n; i++)
		run_whole_file(b->files[i], worker);
	free(b->files);
	free(b);
}

static struct file_batch *check_batch_new(void)
{
	struct file_batch *b = calloc(1, sizeof(*b));

	if (b) {
		b->job.run = run_batch;
		b->job.detached = true;
	}
	return b;
}

void check_flush_batch(struct checker *c, unsigned int worker,
		       struct file_batch **batch)
{
	struct file_batch *b = *batch;

	*batch = NULL;
	if (!b)
		return;
	/* A little work is done here; more goes to whoever is free. */
	if (!c->pool || b->bytes < CHECK_SMALL_FILE ||
	    pool_pending(c->pool) > CHECK_QUEUE_LIMIT)
		run_batch(&b->job, worker);
	else
		check_submit(c, &b->job, worker);
}

/* Queued work holds all the descriptors it may: this file is written now,
 * after the batch this walker was gathering (which holds some). */
static void add_file_now(struct checker *c, unsigned int worker, int dirfd,
			 struct file_batch **batch, ek_inode *inode,
			 const char *path, struct xattr_list *xl)
{
	struct file_state *f;
	struct file_batch *b = *batch;

	*batch = NULL;
	if (b)
		run_batch(&b->job, worker);
	f = file_open(c, dirfd, inode, path, xl);
	if (!f)
		return;
	atomic_store(&f->pending, 1);
	run_whole_file(f, worker);
}

void check_add_file(struct checker *c, unsigned int worker, int dirfd,
		    struct file_batch **batch, ek_inode *inode, const char *path,
		    struct xattr_list *xl)
{
	uint64_t size = ek_inode_stat(inode)->size, off;
	bool extracting = dirfd >= 0;   /* the file will hold a descriptor */
	struct file_state *f;

	atomic_fetch_add(&c->bytes_total, size);
	if (extracting && !check_take_descriptor(c)) {
		add_file_now(c, worker, dirfd, batch, inode, path, xl);
		return;
	}
	f = file_open(c, dirfd, inode, path, xl);
	if (!f) {
		if (extracting)
			check_give_descriptor(c);
		return;
	}
	f->budgeted = extracting;
	if (size > CHECK_BATCH_BYTES && c->pool) {
		/* Ranges of a big file, each its own job; never more than
		 * CHECK_RANGES_MAX of them, whatever size the inode claims. */
		uint64_t step = CHECK_BATCH_BYTES, n;

		if (size / step >= CHECK_RANGES_MAX)
			step = (size / CHECK_RANGES_MAX + CHECK_BATCH_BYTES) /
			       CHECK_BATCH_BYTES * CHECK_BATCH_BYTES;
		n = (size + step - 1) / step;
		atomic_store(&f->pending, (unsigned int)n);
		for (off = 0; off < size; off += step) {
			struct range_job *r = calloc(1, sizeof(*r));

			if (!r) {
				file_problem(f, off, NULL, -ENOMEM, "out of memory");
				range_done(f);
				continue;
			}
			r->f = f;
			r->start = off;
			r->end = size - off < step ? size : off + step;
			r->job.run = run_range;
			r->job.detached = true;
			check_submit(c, &r->job, worker);
		}
		return;
	}
	atomic_store(&f->pending, 1);
	if (!*batch)
		*batch = check_batch_new();
	if (!*batch) {
		file_problem(f, 0, NULL, -ENOMEM, "out of memory");
		range_done(f);
		return;
	}
	if ((*batch)->n == (*batch)->cap) {
		size_t cap = (*batch)->cap ? (*batch)->cap * 2 : 16;
		struct file_state **g = realloc((*batch)->files, cap * sizeof(*g));

		if (!g) {
			file_problem(f, 0, NULL, -ENOMEM, "out of memory");
			range_done(f);
			return;
		}
		(*batch)->files = g;
		(*batch)->cap = cap;
	}
	(*batch)->files[(*batch)->n++] = f;
	(*batch)->c = c;
	(*batch)->bytes += size;
	if ((*batch)->bytes >= CHECK_BATCH_BYTES)
		check_flush_batch(c, worker, batch);
}
