/*
 * The ordered pipeline: the building thread walks the inodes in order and
 * queues one task per segment of each compressed file (and one per
 * uncompressed file or long symlink); workers compress segments in any
 * order; the building thread commits tasks strictly in queue order, so
 * block addresses, and the image, never depend on timing.  At most a fixed
 * window of tasks (and bytes) is in flight.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write/compress.h"
#include "write/source.h"
#include "write/zinternal.h"
#include "util/error.h"

#define WINDOW_BYTES (64ull << 20)   /* input bytes in flight */
#define WINDOW_TASKS_PER_WORKER 32

static void run_job(struct pool_job *job, unsigned int worker)
{
	struct ztask *t = (struct ztask *)job;

	zsegment_compress(t->zb, t, &t->zb->wk[worker]);
}

static void free_task(struct ztask *t)
{
	free(t->ext);
	free(t->data);
	free(t);
}

/* Write a committed segment's pclusters and record its extents. */
static int commit_segment(struct zbuilder *zb, struct ztask *t)
{
	struct build *b = zb->b;
	struct zfile *f = t->file;
	uint64_t blk = b->data_blk, seg_blocks = 0;
	bool last = t->segment + 1 == f->segments;
	size_t i;
	int ret;

	if (!t->ran)
		zsegment_compress(zb, t, &zb->wk[0]);
	if (t->error) {
		if (b->err)
			*b->err = t->err;
		return t->error;
	}
	if (t->segment == 0)
		f->first_blk = b->data_blk;
	for (i = 0; i < t->next; i++)
		seg_blocks += t->ext[i].blocks;
	build_progress(b, t->len);
	if (last && !zfile_worthwhile(zb, f, seg_blocks))
		return zfile_finish(zb, f, true);
	if (f->next + t->next > f->cap) {
		size_t cap = f->cap ? f->cap : 64;
		struct fmt_zextent *g;

		while (cap < f->next + t->next)
			cap *= 2;
		g = realloc(f->ext, cap * sizeof(*g));
		if (!g)
			return err_fail(b->err, -ENOMEM, "out of memory");
		f->ext = g;
		f->cap = cap;
	}
	for (i = 0; i < t->next; i++) {
		f->ext[f->next++] = (struct fmt_zextent){
			.la = t->ext[i].la,
			.blkaddr = blk,
			.blocks = t->ext[i].blocks,
			.plain = t->ext[i].plain,
		};
		blk += t->ext[i].blocks;
		f->blocks += t->ext[i].blocks;
		if (t->ext[i].blocks > zb->max_blocks)
			zb->max_blocks = t->ext[i].blocks;
	}
	if (blk > UINT32_MAX)
		return err_fail(b->err, -EFBIG, "image exceeds 2^32 blocks of %u bytes", b->blksz);
	ret = writer_pwrite(b->w, b->data_blk << b->blkszbits, t->data, t->data_len, b->err);
	b->data_blk = blk;
	if (!ret && last)
		ret = zfile_finish(zb, f, false);
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
	if (t->kind == ZT_COMPRESS && zb->pool)
		pool_wait(zb->pool, &t->job);
	if (t->kind == ZT_RAW)
		ret = data_write_uncompressed(zb->b, t->n);
	else
		ret = commit_segment(zb, t);
	zb->inflight--;
	zb->inflight_bytes -= t->kind == ZT_COMPRESS ? t->len : 0;
	free_task(t);
	return ret;
}

static void drop_queue(struct zbuilder *zb)
{
	while (zb->head) {
		struct ztask *t = zb->head;

		zb->head = t->qnext;
		if (t->kind == ZT_COMPRESS && zb->pool)
			pool_wait(zb->pool, &t->job);
		free_task(t);
	}
	zb->tail = NULL;
	zb->inflight = 0;
	zb->inflight_bytes = 0;
}

static int enqueue(struct zbuilder *zb, struct ztask *t)
{
	unsigned int window = zb->workers * WINDOW_TASKS_PER_WORKER;
	int ret = 0;

	/* Keep the window bounded: commit the oldest before adding more. */
	while (!ret && zb->head && (zb->inflight >= window ||
				    zb->inflight_bytes + t->len > WINDOW_BYTES))
		ret = commit_head(zb);
	if (ret) {
		free_task(t);
		return ret;
	}
	t->zb = zb;
	if (zb->tail)
		zb->tail->qnext = t;
	else
		zb->head = t;
	zb->tail = t;
	zb->inflight++;
	if (t->kind == ZT_COMPRESS) {
		zb->inflight_bytes += t->len;
		if (zb->pool) {
			t->job.run = run_job;
			pool_submit(zb->pool, &t->job);
		}
	}
	return 0;
}

/* Whether a regular file goes through the compressor: it must be larger
 * than a block to save one, and not better served as sparse chunks. */
static int wants_compression(struct build *b, struct tnode *n, bool *yes)
{
	bool chunked = false;
	int ret;

	*yes = false;
	if (!S_ISREG(n->mode) || n->size <= b->blksz)
		return 0;
	ret = data_plan_sparse(b, n, &chunked);
	if (!ret)
		*yes = !chunked;
	return ret;
}

static int queue_file(struct zbuilder *zb, struct tnode *n)
{
	struct build *b = zb->b;
	struct zfile *f = calloc(1, sizeof(*f));
	uint64_t off;
	unsigned int seg = 0;
	int ret;

	if (!f)
		return err_fail(b->err, -ENOMEM, "out of memory");
	ret = source_open(b, n, &f->fd);
	if (ret) {
		free(f);
		return ret;
	}
	f->n = n;
	f->segments = (unsigned int)div_round_up_u64(n->size, zb->segment);
	f->next_open = zb->open;   /* freed (and closed) at teardown */
	zb->open = f;
	for (off = 0; off < n->size; off += zb->segment) {
		struct ztask *t = calloc(1, sizeof(*t));

		if (!t)
			return err_fail(b->err, -ENOMEM, "out of memory");
		t->kind = ZT_COMPRESS;
		t->n = n;
		t->file = f;
		t->off = off;
		t->len = n->size - off < zb->segment ? n->size - off : zb->segment;
		t->segment = seg++;
		ret = enqueue(zb, t);
		if (ret)
			return ret;
	}
	return 0;
}

int zbuild_write_all(struct build *b)
{
	struct zbuilder *zb = b->z;
	struct tnode *n;
	int ret = 0;

	b->data_blk = b->first_data_blk;
	for (n = b->tree.first; n && !ret; n = n->next) {
		bool compress;

		if (!S_ISREG(n->mode) && !S_ISLNK(n->mode))
			continue;
		ret = wants_compression(b, n, &compress);
		if (ret)
			break;
		if (compress) {
			ret = queue_file(zb, n);
		} else {
			struct ztask *t = calloc(1, sizeof(*t));

			if (!t)
				return err_fail(b->err, -ENOMEM, "out of memory");
			t->kind = ZT_RAW;
			t->n = n;
			ret = enqueue(zb, t);
		}
	}
	while (!ret && zb->head)
		ret = commit_head(zb);
	drop_queue(zb);
	return ret;
}
