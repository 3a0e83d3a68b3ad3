/*
 * The ordered pipeline: the building thread walks the inodes in order,
 * reads each file segment by segment and queues one task per segment (one
 * per file that goes whole into the packed inode, one per uncompressed
 * file or long symlink); workers compress segments in any order; the
 * building thread commits tasks strictly in queue order, so block
 * addresses, fragment offsets and the image never depend on timing.  At
 * most a fixed window of tasks (and bytes) is in flight.  Last comes the
 * packed inode, the fragments gathered meanwhile, compressed like any
 * other file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/probe.h"
#include "util/digest.h"
#include "util/error.h"
#include "write/compress.h"
#include "write/fragments.h"
#include "write/source.h"
#include "write/zinternal.h"

/* What may be in flight, the same for any number of workers: where the
 * packed inode's segments fall among the files depends on it. */
#define WINDOW_BYTES (32ull << 20)   /* input bytes */
/* Small files are a task each, most of them cheap (a whole fragment is
 * only probed): at 256 tasks a run of them behind one large segment
 * filled the window, and one of two workers idled for 1.5 s of a 12 s
 * deflate build of the root filesystem.  Their input is bounded by
 * WINDOW_BYTES all the same. */
#define WINDOW_TASKS 4096u

static int queue_packed(struct zbuilder *zb, bool end);

/* A whole file for the packed inode: whether it belongs there at all
 * (incompressible data would only make its neighbours there harder to
 * compress: it stays as it is), and its digest for fragdedupe. */
static void look_at_fragment(struct zbuilder *zb, struct ztask *t)
{
	t->ran = true;
	t->compressible = probe_compressible(t->in, (size_t)t->len, zb->codec->entropy_coded);
	if (t->compressible && packed_dedupes(zb->b, true))
		digest_of(t->in, (size_t)t->len, t->digest);
}

static void run_job(struct pool_job *job, unsigned int worker)
{
	struct ztask *t = (struct ztask *)job;

	if (t->kind == ZT_FRAGMENT)
		look_at_fragment(t->zb, t);
	else
		zsegment_compress(t->zb, t, &t->zb->wk[worker]);
}

static void free_task(struct ztask *t)
{
	free(t->ext);
	free(t->data);
	free(t->in);
	free(t->tail_stream);
	free(t);
}

/* The file's source is read to its end: close it, making sure it did not
 * change meanwhile (the packed inode's is ours and stays open). */
static int close_source(struct build *b, struct zfile *f)
{
	int ret = 0;

	if (f->packed || f->fd < 0)
		return 0;
	ret = source_check_unchanged(b, f->n, f->fd);
	close(f->fd);
	f->fd = -1;
	return ret;
}

static int commit_fragment(struct zbuilder *zb, struct ztask *t)
{
	struct build *b = zb->b;
	uint64_t off;
	int ret;

	if (!t->ran)
		look_at_fragment(zb, t);
	if (!t->compressible)
		return data_write_uncompressed(b, t->n);
	ret = packed_append(b, t->in, (size_t)t->len, true,
			    packed_dedupes(b, true) ? t->digest : NULL, &off);
	build_progress(b, t->len);
	if (!ret)
		ret = zfile_whole_fragment(zb, t->file, off);
	if (!ret)
		ret = queue_packed(zb, false);
	return ret;
}

/* Commit the oldest queued task, waiting for its worker if needed. */
static int commit_head(struct zbuilder *zb)
{
	struct ztask *t = zb->head;
	int ret;

	zb->head = t->qnext;
	if (!zb->head)
		zb->tail = NULL;
	if (t->kind != ZT_RAW && zb->pool)
		pool_wait(zb->pool, &t->job);
	switch (t->kind) {
	case ZT_RAW:
		ret = data_write_uncompressed(zb->b, t->n);
		break;
	case ZT_FRAGMENT:
		ret = commit_fragment(zb, t);
		break;
	default:
		if (!t->ran)
			zsegment_compress(zb, t, &zb->wk[0]);
		ret = zfile_add_segment(zb, t->file, t);
		if (!ret && t->last)
			ret = zfile_finish(zb, t->file, t);
		/* Its tail may have made a segment of packed data whole. */
		if (!ret && t->last && !t->file->packed)
			ret = queue_packed(zb, false);
		break;
	}
	if (!ret && (t->kind != ZT_SEGMENT || (t->last && !t->file->packed)))
		build_file_done(zb->b, t->n);
	zb->inflight--;
	zb->inflight_bytes -= t->kind == ZT_RAW ? 0 : t->len;
	free_task(t);
	return ret;
}

static void drop_queue(struct zbuilder *zb)
{
	while (zb->head) {
		struct ztask *t = zb->head;

		zb->head = t->qnext;
		if (t->kind != ZT_RAW && zb->pool)
			pool_wait(zb->pool, &t->job);
		free_task(t);
	}
	zb->tail = NULL;
	zb->inflight = 0;
	zb->inflight_bytes = 0;
}

/* Make room in the window for a task of `len` input bytes. */
static int make_room(struct zbuilder *zb, uint64_t len)
{
	int ret = 0;

	while (!ret && zb->head && (zb->inflight >= WINDOW_TASKS ||
				    zb->inflight_bytes + len > WINDOW_BYTES))
		ret = commit_head(zb);
	return ret;
}

static void enqueue(struct zbuilder *zb, struct ztask *t)
{
	t->zb = zb;
	if (zb->tail)
		zb->tail->qnext = t;
	else
		zb->head = t;
	zb->tail = t;
	zb->inflight++;
	if (t->kind == ZT_RAW)
		return;
	zb->inflight_bytes += t->len;
	if (zb->pool) {
		t->job.run = run_job;
		pool_submit(zb->pool, &t->job);
	}
}

static struct zfile *new_file(struct zbuilder *zb, struct tnode *n, int fd)
{
	struct zfile *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->n = n;
	f->fd = fd;
	f->next_open = zb->open;   /* freed (and closed) at teardown */
	zb->open = f;
	return f;
}

static int queue_raw(struct zbuilder *zb, struct tnode *n)
{
	struct ztask *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return err_fail(zb->b->err, -ENOMEM, "out of memory");
	t->kind = ZT_RAW;
	t->n = n;
	ret = make_room(zb, 0);
	if (ret) {
		free(t);
		return ret;
	}
	enqueue(zb, t);
	return 0;
}

/* A task of [off, off + len) of f's data, read by this thread. */
static int read_task(struct zbuilder *zb, struct zfile *f, enum ztask_kind kind,
		     uint64_t off, uint64_t len, uint64_t size, struct ztask **out)
{
	struct ztask *t = calloc(1, sizeof(*t));

	if (!t || !(t->in = malloc(len ? (size_t)len : 1))) {
		free(t);
		return err_fail(zb->b->err, -ENOMEM, "out of memory");
	}
	t->kind = kind;
	t->n = f->n;
	t->file = f;
	t->off = off;
	t->len = len;
	t->size = size;
	t->last = off + len == size;
	*out = t;
	return len ? source_pread(zb->b, f->n, f->fd, t->in, (size_t)len, off) : 0;
}

/* Queue a file's data: read by this thread, a segment at a time, into
 * tasks that compress it (or, whole, hand it to the packed inode). */
static int queue_segments(struct zbuilder *zb, struct zfile *f, bool whole_fragment)
{
	struct build *b = zb->b;
	struct tnode *n = f->n;
	uint64_t off, step = whole_fragment ? n->size : zb->segment;
	unsigned int seg = 0;
	int ret = 0;

	zb->queueing_file = true;
	for (off = 0; off < n->size && !ret; off += step) {
		uint64_t len = n->size - off < step ? n->size - off : step;
		struct ztask *t = NULL;

		ret = make_room(zb, len);
		if (!ret)
			ret = read_task(zb, f, whole_fragment ? ZT_FRAGMENT : ZT_SEGMENT,
					off, len, n->size, &t);
		if (!ret && t->last)
			ret = close_source(b, f);
		if (ret) {
			if (t)
				free_task(t);
			break;
		}
		t->segment = seg++;
		enqueue(zb, t);
	}
	zb->queueing_file = false;
	/* What committed meanwhile may have made packed segments whole. */
	return ret ? ret : queue_packed(zb, false);
}

static int queue_file(struct zbuilder *zb, struct tnode *n, int fd, bool whole_fragment)
{
	struct zfile *f = new_file(zb, n, fd);

	if (!f) {
		close(fd);
		return err_fail(zb->b->err, -ENOMEM, "out of memory");
	}
	f->cluster = zb->pcluster;
	return queue_segments(zb, f, whole_fragment);
}

/*
 * The packed inode's segments.  Its data grows as fragments commit, and a
 * segment is queued as soon as it is whole, so that workers compress it
 * beside the files still coming (the queue's window is a constant, so
 * where each lands does not depend on the number of workers).  Its
 * pclusters thus lie in runs apart; the compact index can say so when
 * every jump falls at the start of an index pack: with no xattrs its
 * first 6 lclusters are in 4-byte packs and then packs of 16 follow, so
 * segments end at lcluster 6 + 16k.
 */
#define PACKED_FIRST_PACK 6u

/* What is left at the end goes in quarter segments, so that every worker
 * has a share of the last megabytes instead of one compressing them while
 * the others wait. */
static uint64_t packed_segment_len(const struct zbuilder *zb, unsigned int segment,
				   bool end)
{
	uint64_t len = zb->packed_segment, pack = 16ull * zb->b->blksz;

	if (end && len / 4 >= pack)
		len = len / 4 / pack * pack;
	return segment ? len : len + PACKED_FIRST_PACK * zb->b->blksz;
}

static int queue_packed(struct zbuilder *zb, bool end)
{
	struct build *b = zb->b;
	uint64_t have = b->packed ? packed_size(b) : 0;
	int ret = 0;

	if (zb->queueing_file && !end)
		return 0;   /* queue_file() calls again when done */
	while (!ret) {
		struct zfile *f = zb->packed;
		unsigned int seg = f ? f->queued_segments : 0;
		uint64_t left = have - zb->packed_queued, len = packed_segment_len(zb, seg, end);
		struct ztask *t = NULL;
		bool last = end && left <= len;

		if (!last && left < len)
			break;
		if (!f && !have)
			break;            /* no fragments at all */
		if (!f) {
			struct tnode *n;

			ret = packed_node(b, &n);
			f = n ? new_file(zb, n, packed_fd(b)) : NULL;
			if (ret || !f)
				return ret ? ret : err_fail(b->err, -ENOMEM, "out of memory");
			f->packed = true;
			f->cluster = zb->packed_pcluster;
			zb->packed = f;
		}
		if (last)
			f->n->size = have;
		ret = read_task(zb, f, ZT_SEGMENT, zb->packed_queued, last ? left : len,
				last ? have : UINT64_MAX, &t);
		if (ret) {
			if (t)
				free_task(t);
			break;
		}
		t->segment = f->queued_segments++;
		zb->packed_queued += t->len;
		/* Beyond the window, by a segment at most: it is queued from a
		 * commit, which a window already full may be waiting on. */
		enqueue(zb, t);
		if (last)
			break;
	}
	return ret;
}

/* What a regular file's data becomes: compressed segments, one whole
 * fragment, or (too small to save a block, or sparse) uncompressed. */
enum plan { PLAN_RAW, PLAN_SEGMENTS, PLAN_FRAGMENT };

static int plan_file(struct zbuilder *zb, struct tnode *n, enum plan *plan)
{
	struct build *b = zb->b;
	bool chunked = false;
	int ret;

	*plan = PLAN_RAW;
	if (!S_ISREG(n->mode) || !n->size)
		return 0;
	ret = data_plan_sparse(b, n, &chunked);
	if (ret || chunked)
		return ret;
	switch (b->lay.fragments) {
	case EK_FRAGMENTS_ALL:
		*plan = PLAN_FRAGMENT;
		return 0;
	case EK_FRAGMENTS_TAILS:
		/* Its data would only ever partly fill one cluster. */
		if (n->size <= zb->pcluster && n->size > b->lay.inline_max) {
			*plan = PLAN_FRAGMENT;
			return 0;
		}
		break;
	default:
		break;
	}
	if (n->size > b->blksz)
		*plan = PLAN_SEGMENTS;
	return 0;
}

static int drain(struct zbuilder *zb)
{
	int ret = 0;

	while (!ret && zb->head)
		ret = commit_head(zb);
	return ret;
}

int zbuild_add(struct build *b, struct tnode *n)
{
	struct zbuilder *zb = b->z;
	enum plan plan;
	int fd, ret;

	/* The packed inode joins the list while it is walked. */
	if ((!S_ISREG(n->mode) && !S_ISLNK(n->mode)) || n == b->packed_inode)
		return 0;
	ret = plan_file(zb, n, &plan);
	if (ret)
		return ret;
	if (plan == PLAN_RAW)
		return queue_raw(zb, n);
	ret = source_open(b, n, &fd);
	return ret ? ret : queue_file(zb, n, fd, plan == PLAN_FRAGMENT);
}

int zbuild_finish(struct build *b, int ret)
{
	struct zbuilder *zb = b->z;

	/* Every fragment is in once every file has committed. */
	if (!ret)
		ret = drain(zb);
	if (!ret)
		ret = queue_packed(zb, true);
	if (!ret)
		ret = drain(zb);
	drop_queue(zb);
	return ret;
}

int zbuild_metabox(struct build *b, struct tnode *n, int fd)
{
	struct zbuilder *zb = b->z;
	struct zfile *f = new_file(zb, n, fd);
	int ret;

	if (!f)
		return err_fail(b->err, -ENOMEM, "out of memory");
	/* Treated as the packed inode is: compressed whatever it saves, no
	 * tail of its own elsewhere, its source ours (the caller closes it). */
	f->packed = true;
	f->cluster = zb->metabox_pcluster;
	ret = queue_segments(zb, f, false);
	if (!ret)
		ret = drain(zb);
	drop_queue(zb);
	return ret;
}

int zbuild_write_all(struct build *b)
{
	struct tnode *n;
	int ret = 0;

	b->data_blk = b->first_data_blk;
	for (n = b->tree.first; n && !ret; n = n->next)
		ret = zbuild_add(b, n);
	return zbuild_finish(b, ret);
}
