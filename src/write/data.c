/*
 * File data: each regular file and long symlink in inode order, written to
 * consecutive blocks.  Layout per file:
 *   - a tail that fits beside its inode in one block is stored inline
 *     (FLAT_INLINE), everything else in whole blocks (FLAT_PLAIN);
 *   - a sparse file, and with --chunksize every file with a data block,
 *     is chunk-based (chunks.c);
 *   - with a compressor, files go through compress.c.
 * Every source file is checked for changes while it is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write/internal.h"
#include "write/dedupe.h"
#include "write/source.h"
#include "write/tails.h"
#include "format/ondisk.h"
#include "util/error.h"

/* --chunksize: every file with a data block is chunk-based; one whose
 * data all sits beside its inode stays there (no block to share). */
static bool chunks_wanted(const struct build *b, const struct tnode *n)
{
	return b->o.chunk_size &&
	       !(n->size < b->blksz && tail_fits_inline(b, n, n->size));
}

static int write_flat(struct build *b, struct tnode *n, int fd, uint8_t *buf)
{
	uint64_t tail = n->size % b->blksz;
	uint64_t body = n->size;
	int ret;

	n->layout = EROFS_LAYOUT_FLAT_PLAIN;
	if (tail_fits_inline(b, n, tail)) {
		n->layout = EROFS_LAYOUT_FLAT_INLINE;
		body -= tail;
		n->inline_size = (uint32_t)tail;
	}
	n->startblk = body ? b->data_blk : 0;
	n->nblocks = body / b->blksz + (body % b->blksz ? 1 : 0);
	ret = copy_range(b, n, fd, buf, 0, body);
	if (!ret && n->inline_size) {
		ret = tail_read(b, n, fd, body);
		build_progress(b, n->inline_size);
	}
	return ret;
}

static int write_regular(struct build *b, struct tnode *n, uint8_t *buf)
{
	int fd, ret;

	/* Even an empty file is opened: it must still be readable and
	 * still be empty (a file that only looks empty, as in /proc, is not). */
	ret = source_open(b, n, &fd);
	if (ret)
		return ret;
	if (n->size == 0) {
		n->layout = EROFS_LAYOUT_FLAT_PLAIN;
	} else if (n->chunks || chunks_wanted(b, n)) {
		ret = chunks_write(b, n, fd, buf);
	} else {
		bool copy = false;

		ret = dedupe_flat(b, n, fd, buf, &copy);
		if (!ret && !copy) {
			ret = write_flat(b, n, fd, buf);
			if (!ret)
				ret = dedupe_flat_written(b, n);
		}
	}
	if (!ret)
		ret = source_check_unchanged(b, n, fd);
	source_close(b, fd);
	return ret;
}

static int write_symlink(struct build *b, struct tnode *n)
{
	uint8_t *blk;
	int ret;

	if (tail_fits_inline(b, n, n->size)) {
		n->layout = EROFS_LAYOUT_FLAT_INLINE;
		n->inline_size = (uint32_t)n->size;
		return 0;
	}
	/* Too long to sit beside its inode: data blocks of its own. */
	n->layout = EROFS_LAYOUT_FLAT_PLAIN;
	n->startblk = b->data_blk;
	n->nblocks = div_round_up_u64(n->size, b->blksz);
	blk = calloc(1, n->nblocks * b->blksz);
	if (!blk)
		return err_fail(b->err, -ENOMEM, "out of memory");
	memcpy(blk, n->symlink, n->size);
	ret = writer_pwrite(b->w, b->data_blk << b->blkszbits, blk,
			    n->nblocks * b->blksz, b->err);
	free(blk);
	b->data_blk += n->nblocks;
	return ret;
}

int data_write_uncompressed(struct build *b, struct tnode *n)
{
	int ret;

	if (S_ISLNK(n->mode))
		return write_symlink(b, n);
	if (!S_ISREG(n->mode))
		return 0;
	if (!b->copy_buf && !(b->copy_buf = malloc(COPY_BUF)))
		return err_fail(b->err, -ENOMEM, "out of memory");
	ret = write_regular(b, n, b->copy_buf);
	if (!ret && b->data_blk > UINT32_MAX)
		ret = err_fail(b->err, -EFBIG, "image exceeds 2^32 blocks of %u bytes", b->blksz);
	return ret;
}

int data_write_one(struct build *b, struct tnode *n)
{
	bool chunked;
	int ret = chunks_plan_sparse(b, n, &chunked);

	if (!ret)
		ret = data_write_uncompressed(b, n);
	if (!ret)
		build_file_done(b, n);
	return ret;
}

int write_data(struct build *b)
{
	struct tnode *n;
	int ret = 0;

	b->data_blk = b->first_data_blk;
	for (n = b->tree.first; n && !ret; n = n->next)
		ret = data_write_one(b, n);
	return ret;
}
