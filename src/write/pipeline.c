/*
 * The ordered pipeline: the building thread walks the inodes in order,
 * reads each file segment by segment and queues one task per segment (one
 * per file that goes whole into the packed inode, one per uncompressed
 * file or long symlink); workers compress segments in any order; the
 * building thread commits tasks strictly in queue order, so block
 * addresses, fragment offsets and the image never depend on timing.  At
 * most a fixed window of tasks (and bytes) is in flight.  The packed
 * inode's data, the fragments as they commit, is compressed meanwhile in
 * segments of its own, which no commit waits for; their pclusters go
 * last, after every file's (and the metabox's).
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
#include "util/fdio.h"
#include "write/compress.h"
#include "write/fragments.h"
#include "write/hints.h"
#include "write/order.h"
#include "write/source.h"
#include "write/zinternal.h"

/* What may be in flight, read and not yet committed: it bounds memory.
 * The image does not depend on it (tasks commit in order, whenever they
 * do, and the packed inode's segments are cut by its length alone). */
#define WINDOW_BYTES (32ull << 20)   /* input bytes */
/* Small files are a task each, most of them cheap (a whole fragment is
 * only probed): at 256 tasks a run of them behind one large segment
 * filled the window, and one of two workers idled for 1.5 s of a 12 s
 * deflate build of the root filesystem.  Their input is bounded by
 * WINDOW_BYTES all the same. */
#define WINDOW_TASKS 4096u
/* The queue's ring starts at 1 MiB and grows to the window and a segment
 * when the input first needs more (util/fifobuf.h). */
#define RING_FIRST ((size_t)1 << 20)

static int queue_packed(struct zbuilder *zb, bool end);

/* A whole file for the packed inode: whether it belongs there at all
 * (incompressible data would only make its neighbours there harder to
 * compress: it stays as it is), and its digest for fragdedupe. */
static void look_at_fragment(struct zbuilder *zb, struct ztask *t)
{
	t->ran = true;
	t->compressible = probe_compressible(t->in, (size_t)t->len,
					      zbuilder_packed_codec(zb)->entropy_coded);
	if (t->compressible && packed_dedupes(zb->b, true, t->len))
		digest_of(t->in, (size_t)t->len, t->digest);
}

static void release_input(struct ztask *t)
{
	switch (t->in_from) {
	case ZIN_CACHE:
		bufcache_put(&t->zb->packed_bufs, t->in);
		break;
	case ZIN_RING:
		fifobuf_give(&t->zb->queued_bufs, t->in, (size_t)t->len);
		break;
	case ZIN_MALLOC:
		free(t->in);
		break;
	}
	t->in = NULL;
	t->in_from = ZIN_MALLOC;
}

/* A place among the packed segments compressing at once, taken before
 * the next one is read, so that its buffer is not held while it waits;
 * given back as the segment spills (or if it cannot be read). */
static void take_packed_place(struct zbuilder *zb)
{
	pthread_mutex_lock(&zb->lock);
	while (zb->packed_compressing >= zb->packed_compressing_max)
		pthread_cond_wait(&zb->spilled, &zb->lock);
	zb->packed_compressing++;
	pthread_mutex_unlock(&zb->lock);
}

static void give_packed_place(struct zbuilder *zb)
{
	pthread_mutex_lock(&zb->lock);
	zb->packed_compressing--;
	pthread_cond_signal(&zb->spilled);
	pthread_mutex_unlock(&zb->lock);
}

/* A packed segment's pclusters, out of memory until they are placed at
 * the end: wherever the spill file has room (the order of the image is
 * that of the segments, whatever the order they finish in). */
static void spill(struct zbuilder *zb, struct ztask *t)
{
	int ret;

	pthread_mutex_lock(&zb->lock);
	t->spill_off = zb->spill_end;
	zb->spill_end += t->data_len;
	pthread_mutex_unlock(&zb->lock);
	if (!t->error && t->data_len) {
		ret = fd_pwrite_full(packed_compressed_fd(zb->b), t->data, t->data_len,
				     t->spill_off);
		if (ret)
			t->error = err_fail(&t->err, ret, "writing the packed inode's compressed data: %s",
					    strerror(-ret));
	}
	free(t->data);
	t->data = NULL;
	t->data_cap = 0;
	release_input(t);
	give_packed_place(zb);
}

static void run_job(struct pool_job *job, unsigned int worker)
{
	struct ztask *t = (struct ztask *)job;

	if (t->kind == ZT_FRAGMENT) {
		look_at_fragment(t->zb, t);
		return;
	}
	zsegment_compress(t->zb, t, &t->zb->wk[worker]);
	/* (The file says so: zb->packed is set while workers run.) */
	if (t->file->spills)            /* placed only at the end */
		spill(t->zb, t);
}

static void free_task(struct ztask *t)
{
	free(t->ext);
	free(t->data);
	release_input(t);
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
	source_close(b, f->fd);
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
			    packed_dedupes(b, true, t->len) ? t->digest : NULL, &off);
	build_progress(b, t->len);
	if (!ret)
		ret = zfile_whole_fragment(zb, t->file, off);
	if (!ret)
		ret = queue_packed(zb, false);
	return ret;
}

/* A whole fragment too long to hold, in pieces: each segment of the
 * packed data is queued as soon as it is due. */
static int commit_streamed(struct zbuilder *zb, struct tnode *n)
{
	struct fragstream s;
	int ret = fragstream_begin(zb, n, &s);

	while (!ret && fragstream_pending(&s)) {
		ret = fragstream_piece(zb, &s);
		if (!ret)
			ret = queue_packed(zb, false);
	}
	return fragstream_end(zb, &s, ret);
}

/* Whether t, committed, was the last of its file's tasks.  The packed
 * inode and the metabox (both `packed`) keep theirs to zbuild_teardown. */
static bool ends_file(const struct ztask *t)
{
	return t->kind == ZT_FRAGMENT ||
	       (t->kind == ZT_SEGMENT && t->last && !t->file->packed);
}

/* Commit the oldest queued task, waiting for its worker if needed. */
static int commit_head(struct zbuilder *zb)
{
	struct ztask *t = zb->head;
	int ret;

	zb->head = t->qnext;
	if (!zb->head)
		zb->tail = NULL;
	if (ztask_on_worker(t->kind) && zb->pool)
		pool_wait(zb->pool, &t->job);
	switch (t->kind) {
	case ZT_RAW:
		ret = data_write_uncompressed(zb->b, t->n);
		break;
	case ZT_STREAMED:
		ret = commit_streamed(zb, t->n);
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
	/* Not kept to the end: a tar of many small files would hold one
	 * per entry (112 bytes and its digests each). */
	if (!ret && ends_file(t))
		zfile_release(zb, t->file);
	zb->inflight--;
	zb->inflight_bytes -= ztask_on_worker(t->kind) ? t->len : 0;
	free_task(t);
	return ret;
}

static void drop_list(struct zbuilder *zb, struct ztask **head, struct ztask **tail)
{
	while (*head) {
		struct ztask *t = *head;

		*head = t->qnext;
		if (ztask_on_worker(t->kind) && zb->pool)
			pool_wait(zb->pool, &t->job);
		free_task(t);
	}
	*tail = NULL;
}

void zbuild_drop_queued(struct zbuilder *zb)
{
	drop_list(zb, &zb->head, &zb->tail);
	drop_list(zb, &zb->packed_head, &zb->packed_tail);
	zb->inflight = 0;
	zb->inflight_bytes = 0;
}

/* Whether the oldest task can commit without waiting. */
static bool head_ready(struct zbuilder *zb)
{
	struct ztask *t = zb->head;

	return !ztask_on_worker(t->kind) || (zb->pool && pool_done(zb->pool, &t->job));
}

/*
 * Make room in the window for a task of `len` input bytes, and commit
 * what the workers have finished anyway.  Whole fragments reach the
 * packed data only when they commit: committed only to make room, the
 * first 4,096 small files (a full window) had to be read before the
 * packed inode's first segment could start, and the workers idled
 * meanwhile.
 */
static int make_room(struct zbuilder *zb, uint64_t len)
{
	int ret = 0;

	while (!ret && zb->head && (zb->inflight >= WINDOW_TASKS ||
				    zb->inflight_bytes + len > WINDOW_BYTES || head_ready(zb)))
		ret = commit_head(zb);
	return ret;
}

static void append(struct ztask **head, struct ztask **tail, struct ztask *t)
{
	if (*tail)
		(*tail)->qnext = t;
	else
		*head = t;
	*tail = t;
}

static void enqueue(struct zbuilder *zb, struct ztask *t)
{
	t->zb = zb;
	append(&zb->head, &zb->tail, t);
	zb->inflight++;
	if (!ztask_on_worker(t->kind))
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
	f->next_open = zb->open;
	if (zb->open)
		zb->open->prev_open = f;
	zb->open = f;
	return f;
}

void zfile_release(struct zbuilder *zb, struct zfile *f)
{
	if (f->prev_open)
		f->prev_open->next_open = f->next_open;
	else
		zb->open = f->next_open;
	if (f->next_open)
		f->next_open->prev_open = f->prev_open;
	if (f->fd >= 0 && !f->packed)
		source_close(zb->b, f->fd);
	digtab_free(&f->fresh);
	free(f->ext);
	free(f);
}

/* A file whose data this thread handles as it commits. */
static int queue_at_commit(struct zbuilder *zb, struct tnode *n, enum ztask_kind kind)
{
	struct ztask *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return err_fail(zb->b->err, -ENOMEM, "out of memory");
	t->kind = kind;
	t->n = n;
	ret = make_room(zb, 0);
	if (ret) {
		free(t);
		return ret;
	}
	enqueue(zb, t);
	return 0;
}

/* Memory for a task's len bytes of f: the ordered queue's from its ring,
 * the packed inode's largest segments from their cache, the rest (a
 * task larger than the ring's room, a short packed segment) from
 * malloc. */
static uint8_t *task_input(struct zbuilder *zb, struct ztask *t, const struct zfile *f,
			   uint64_t len)
{
	struct bufcache *c = &zb->packed_bufs;
	uint8_t *in = NULL;

	if (f != zb->packed && len <= SIZE_MAX) {
		in = fifobuf_take(&zb->queued_bufs, (size_t)len);
		t->in_from = in ? ZIN_RING : ZIN_MALLOC;
	} else if (f == zb->packed && len <= c->size && len > c->size / 2) {
		in = bufcache_get(c);
		t->in_from = in ? ZIN_CACHE : ZIN_MALLOC;
	}
	return in ? in : malloc(len ? (size_t)len : 1);
}

/* A task of [off, off + len) of f's data, read by this thread. */
static int read_task(struct zbuilder *zb, struct zfile *f, enum ztask_kind kind,
		     uint64_t off, uint64_t len, uint64_t size, struct ztask **out)
{
	struct ztask *t = calloc(1, sizeof(*t));

	if (t) {
		t->zb = zb;
		t->in = task_input(zb, t, f, len);
	}
	if (!t || !t->in) {
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
	if (!len)
		return 0;
	if (f == zb->packed)
		return packed_take(zb->b, off, (size_t)len, t->in);
	return source_pread(zb->b, f->n, f->fd, t->in, (size_t)len, off);
}

/* Queue a file's data: read by this thread, `step` bytes at a time, into
 * tasks that compress it (or, whole, hand it to the packed inode).  Its
 * segments follow each other in the queue, so that its blocks form one
 * run (a file that falls back to being stored uncompressed rewinds over
 * them). */
static int queue_segments(struct zbuilder *zb, struct zfile *f, bool whole_fragment,
			  uint64_t step)
{
	struct build *b = zb->b;
	struct tnode *n = f->n;
	uint64_t off;
	unsigned int seg = 0;
	int ret = 0;

	if (whole_fragment)
		step = n->size;
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
	return ret;
}

/* A file's cluster: its --compress-hints rule's, else -C's (and its
 * algorithm, below: the rule's, else the first). */
static uint32_t file_cluster(const struct zbuilder *zb, const struct tnode *n)
{
	return n->hint ? hints_cluster(zb->b->hints, n->hint) : zb->pcluster;
}

static int queue_file(struct zbuilder *zb, struct tnode *n, int fd, bool whole_fragment)
{
	struct zfile *f = new_file(zb, n, fd);

	if (!f) {
		source_close(zb->b, fd);
		return err_fail(zb->b->err, -ENOMEM, "out of memory");
	}
	f->cluster = file_cluster(zb, n);
	f->codec = n->hint ? (uint8_t)hints_algorithm(zb->b->hints, n->hint) : 0;
	return queue_segments(zb, f, whole_fragment, zb->segment);
}

/*
 * The packed inode's segments.  Its data grows as fragments commit, and a
 * segment goes to the workers as soon as it is whole, to be compressed
 * beside the files still coming.  No commit waits for it: behind a slow
 * one in the queue, the fragments that make the next segment could not
 * commit, and the other workers had nothing to do (3.2 s of a 14 s lz4hc
 * build of the small-files tree).  So its pclusters are placed only at
 * the end, after every file's, in the segments' order; meanwhile they
 * wait in a spill file.  Its first 6 lclusters are in 4-byte packs of
 * the compact index and then packs of 16 follow: segments end at lcluster
 * 6 + 16k, where a jump (a pcluster found stored already) would be
 * easiest to index.
 */
#define PACKED_FIRST_PACK 6u

/*
 * The end of the packed data goes in shrinking segments, each half of
 * what is left (never under a pcluster's worth of input), so that the
 * workers run out of work together: in whole segments, one of two
 * workers idled for the last 0.5 s of an 8 s deflate build of the root
 * filesystem while the other compressed the last one.  For that, the
 * last whole segment's worth waits for the end.  Only the data decides
 * the split, never the number of workers.  Halves rather than quarters:
 * as well balanced on 2 cores, and no larger image (each segment ends a
 * pcluster early); quarters made it 12-45 KB larger.
 */
#define PACKED_RESERVE 1u
#define PACKED_FINISH_SHARES 2u
/*
 * The start is the other way round: the first segments are a sixteenth,
 * an eighth, a quarter and a half of a whole one.  Until the first is
 * there the workers have nothing to do but look at small files, while
 * this thread reads them (some 100 us a file); with all fragments and 8
 * MiB segments, that was 0.35 s of an 8.5 s build of the small-files
 * tree.  The first is 1 MiB at 1 MiB clusters.
 */
#define PACKED_RAMP 4u

static uint64_t packed_pack(const struct zbuilder *zb)
{
	return 16ull * zb->b->blksz;
}

/* The smallest segment: a pcluster's worth of input. */
static uint64_t packed_floor(const struct zbuilder *zb)
{
	uint64_t pack = packed_pack(zb), floor = zb->packed_pcluster;

	return floor < pack ? pack : floor / pack * pack;
}

/* A segment length cut to whole packs, and not under the floor. */
static uint64_t packed_cut(const struct zbuilder *zb, uint64_t len)
{
	uint64_t cut = len / packed_pack(zb) * packed_pack(zb);

	return cut < packed_floor(zb) ? packed_floor(zb) : cut;
}

/* The next segment's length: left is what is there to queue. */
static uint64_t packed_segment_len(const struct zbuilder *zb, unsigned int segment,
				   bool end, uint64_t left)
{
	uint64_t len = zb->packed_segment;

	if (segment < PACKED_RAMP)
		len = packed_cut(zb, len >> (PACKED_RAMP - segment));
	if (end) {
		uint64_t share = packed_cut(zb, left / PACKED_FINISH_SHARES);

		if (share < len)
			len = share;
	}
	return segment ? len : len + PACKED_FIRST_PACK * zb->b->blksz;
}

/* To the workers; with no workers, compressed here and now. */
static void submit_packed(struct zbuilder *zb, struct ztask *t)
{
	t->zb = zb;
	append(&zb->packed_head, &zb->packed_tail, t);
	t->job.run = run_job;
	if (zb->pool)
		pool_submit(zb->pool, &t->job);
	else
		run_job(&t->job, 0);
}

/* The packed inode's pclusters, after every file's, in order. */
static int place_packed(struct zbuilder *zb)
{
	int ret = 0;

	while (!ret && zb->packed_head) {
		struct ztask *t = zb->packed_head;

		zb->packed_head = t->qnext;
		if (zb->pool)
			pool_wait(zb->pool, &t->job);
		if (!t->error && t->data_len) {
			t->data = malloc(t->data_len);
			ret = t->data ? fd_pread_full(packed_compressed_fd(zb->b), t->data,
						      t->data_len, t->spill_off) : -ENOMEM;
			if (ret)
				ret = err_fail(zb->b->err, ret,
					       "reading the packed inode's compressed data back: %s",
					       strerror(-ret));
		}
		if (!ret)
			ret = zfile_add_segment(zb, t->file, t);
		if (!ret && t->last)
			ret = zfile_finish(zb, t->file, t);
		free_task(t);
	}
	if (!zb->packed_head)
		zb->packed_tail = NULL;
	return ret;
}

/* The packed inode's file, made when its first segment is due, or at the
 * end if there are fragments at all (none: f is NULL). */
static int packed_file(struct zbuilder *zb, struct zfile **out)
{
	struct build *b = zb->b;
	struct tnode *n;
	struct zfile *f;
	int ret;

	*out = zb->packed;
	if (zb->packed || !b->packed || !packed_size(b))
		return 0;
	ret = packed_node(b, &n);
	f = n ? new_file(zb, n, -1) : NULL;   /* its data: packed_take() */
	if (ret || !f)
		return ret ? ret : err_fail(b->err, -ENOMEM, "out of memory");
	f->packed = true;
	f->spills = true;
	f->cluster = zb->packed_pcluster;
	zb->packed = *out = f;
	return 0;
}

static int queue_packed(struct zbuilder *zb, bool end)
{
	struct build *b = zb->b;
	uint64_t have = b->packed ? packed_size(b) : 0;
	int ret = 0;

	while (!ret) {
		struct zfile *f = zb->packed;
		unsigned int seg = f ? f->queued_segments : 0;
		uint64_t left = have - zb->packed_queued;
		uint64_t len = packed_segment_len(zb, seg, end, left);
		struct ztask *t = NULL;
		/* No short segment after the last: it would end a pcluster early. */
		bool last = end && left < len + packed_floor(zb);

		if (!end && left < len + (seg < PACKED_RAMP ? 0 : PACKED_RESERVE * zb->packed_segment))
			break;
		ret = packed_file(zb, &f);
		if (ret || !f)
			break;            /* no fragments at all */
		if (last)
			f->n->size = have;
		take_packed_place(zb);
		ret = read_task(zb, f, ZT_SEGMENT, zb->packed_queued, last ? left : len,
				last ? have : UINT64_MAX, &t);
		if (ret) {
			give_packed_place(zb);
			if (t)
				free_task(t);
			break;
		}
		t->segment = f->queued_segments++;
		zb->packed_queued += t->len;
		submit_packed(zb, t);
		if (last)
			break;
	}
	return ret;
}

/*
 * The ordered queue's ring: the window's worth and a segment more (room
 * lost where a piece does not fit before the ring's end).  The packed
 * inode's whole segments: as many as compress at once (the first, a few
 * blocks longer, comes from malloc: a buffer a little over 16 MiB would
 * take 18 MiB of huge pages).
 */
int zbuild_buffers_init(struct zbuilder *zb)
{
	/* A tail, or a whole fragment, of up to a pcluster is read whole;
	 * a longer whole fragment streams a piece at a time. */
	zb->fragment_room = FRAGSTREAM_PIECE;
	if (zb->fragment_room < zb->pcluster)
		zb->fragment_room = zb->pcluster;
	if (zb->fragment_room < hints_largest(zb->b->hints))
		zb->fragment_room = hints_largest(zb->b->hints);
	if (zb->fragment_room < zb->packed_pcluster)
		zb->fragment_room = zb->packed_pcluster;
	/* A segment is cut once the reserve is there behind it (see
	 * queue_packed): with a fragment just appended, no more
	 * waits. */
	zb->b->packed_waiting_max = zb->packed_segment + PACKED_FIRST_PACK * zb->b->blksz +
				    PACKED_RESERVE * zb->packed_segment + zb->fragment_room;
	if (fifobuf_init(&zb->queued_bufs, RING_FIRST, (size_t)(WINDOW_BYTES + zb->segment)))
		return -ENOMEM;
	return bufcache_init(&zb->packed_bufs, (size_t)zb->packed_segment,
			     zb->packed_compressing_max);
}

void zbuild_buffers_fini(struct zbuilder *zb)
{
	fifobuf_fini(&zb->queued_bufs);
	bufcache_fini(&zb->packed_bufs);
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
	ret = chunks_plan_sparse(b, n, &chunked);
	if (ret || chunked)
		return ret;
	switch (b->lay.fragments) {
	case EK_FRAGMENTS_ALL:
		*plan = PLAN_FRAGMENT;
		return 0;
	case EK_FRAGMENTS_TAILS:
		/* Its data would only ever partly fill one cluster. */
		if (n->size <= file_cluster(zb, n) && n->size > b->lay.inline_max) {
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

static int add_planned(struct zbuilder *zb, struct tnode *n, enum plan plan)
{
	int fd, ret;

	if (plan == PLAN_RAW)
		return queue_at_commit(zb, n, ZT_RAW);
	if (plan == PLAN_FRAGMENT && n->size > zb->fragment_room)
		return queue_at_commit(zb, n, ZT_STREAMED);
	ret = source_open(zb->b, n, &fd);
	return ret ? ret : queue_file(zb, n, fd, plan == PLAN_FRAGMENT);
}

/* Whether n's data goes through the pipeline at all: the packed inode
 * joins the list while it is walked. */
static bool has_data(const struct build *b, const struct tnode *n)
{
	return (S_ISREG(n->mode) || S_ISLNK(n->mode)) && n != b->packed_inode;
}

/*
 * Files that go whole into the packed inode are held back and queued
 * together, ordered by likeness (order.c), after the data of the other
 * files: namesakes side by side compress better (rootfs, smallest
 * setting, lz4hc: -1.8%).  From a tar their data waits in the spool
 * meanwhile, so once HELD_SPOOLED_MAX of it waits, the files held so far
 * go as one batch.
 */
#define HELD_SPOOLED_MAX (256ull << 20)

static int queue_held(struct zbuilder *zb)
{
	size_t i;
	int ret = 0;

	if (order_by_likeness(zb->held, zb->held_count))
		return err_fail(zb->b->err, -ENOMEM, "out of memory");
	for (i = 0; i < zb->held_count && !ret; i++)
		ret = add_planned(zb, zb->held[i], PLAN_FRAGMENT);
	zb->held_count = 0;
	zb->held_spooled = 0;
	return ret;
}

static int hold(struct zbuilder *zb, struct tnode *n)
{
	if (zb->held_count == zb->held_cap) {
		size_t more = zb->held_cap ? zb->held_cap * 2 : 256;
		struct tnode **grown = realloc(zb->held, more * sizeof(*grown));

		if (!grown)
			return err_fail(zb->b->err, -ENOMEM, "out of memory");
		zb->held = grown;
		zb->held_cap = more;
	}
	zb->held[zb->held_count++] = n;
	if (n->spooled)
		zb->held_spooled += n->size;
	return zb->held_spooled >= HELD_SPOOLED_MAX ? queue_held(zb) : 0;
}

int zbuild_add(struct build *b, struct tnode *n)
{
	enum plan plan;
	int ret;

	if (!has_data(b, n))
		return 0;
	ret = plan_file(b->z, n, &plan);
	if (ret)
		return ret;
	return plan == PLAN_FRAGMENT ? hold(b->z, n) : add_planned(b->z, n, plan);
}

int zbuild_finish(struct build *b, int ret)
{
	struct zbuilder *zb = b->z;

	/* Every fragment is in once every file has committed. */
	if (!ret)
		ret = queue_held(zb);
	if (!ret)
		ret = drain(zb);
	/* Every file's input has been let go: the ring's memory goes back
	 * before the metadata is laid out, when the build's heap is at its
	 * largest (a metabox's tasks take theirs from malloc). */
	if (!ret)
		fifobuf_fini(&zb->queued_bufs);
	/* The packed inode joined the inode list when the first fragment
	 * committed: from a tar, whose entries become inodes as they are
	 * read, that moment depends on how far the workers had got, and the
	 * nids after it with it.  Last, its place is the same whatever the
	 * workers did. */
	if (!ret && b->packed_inode)
		tree_move_last(&b->tree, b->packed_inode);
	/* With a metabox, the packed inode's last segments wait for it (see
	 * zbuild_metabox), but the inode is there for the layout. */
	if (!ret && b->lay.metabox) {
		struct zfile *f;

		return packed_file(zb, &f);
	}
	if (!ret)
		ret = queue_packed(zb, true);
	if (!ret)
		ret = place_packed(zb);
	zbuild_drop_queued(zb);
	bufcache_fini(&zb->packed_bufs);   /* no packed segment is left */
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
	/*
	 * Its segments go to the workers before the packed inode's last ones,
	 * whose shrinking sizes then even out the end, and its pclusters go
	 * before theirs: compressed after them, alone, it left one of two
	 * workers idle for 0.2 s at the end of a 7.9 s lz4hc build of the
	 * small-files tree.
	 */
	ret = queue_segments(zb, f, false, zb->metabox_segment);
	if (!ret)
		ret = queue_packed(zb, true);
	if (!ret)
		ret = drain(zb);
	if (!ret)
		ret = place_packed(zb);
	zbuild_drop_queued(zb);
	bufcache_fini(&zb->packed_bufs);   /* no packed segment is left */
	return ret;
}

/* Every file of the tree; those that go whole into the packed inode
 * last, in likeness order (order.c), the others in the tree's. */
int zbuild_write_all(struct build *b)
{
	struct tnode *n;
	int ret = 0;

	b->data_blk = b->first_data_blk;
	for (n = b->tree.first; n && !ret; n = n->next)
		ret = zbuild_add(b, n);
	return zbuild_finish(b, ret);
}
