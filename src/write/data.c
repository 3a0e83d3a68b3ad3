/*
 * File data: each regular file and long symlink in inode order, written to
 * consecutive blocks.  Layout per file:
 *   - a tail that fits beside its inode in one block is stored inline
 *     (FLAT_INLINE), everything else in whole blocks (FLAT_PLAIN);
 *   - a sparse file becomes chunk-based when that is smaller, so that its
 *     holes cost no space;
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

#define COPY_BUF (1u << 20)

static bool tail_fits_inline(const struct build *b, const struct tnode *n,
			     uint64_t tail)
{
	return tail && b->lay.inline_data &&
	       tnode_core_size(n) + n->xattr_size + tail <= b->blksz;
}

/* ------------------------------------------------------------ sparse */

struct extent {
	uint64_t start, end;
};

/* Data extents of a sparse file via SEEK_DATA/SEEK_HOLE, block aligned. */
static int data_extents(struct build *b, const struct tnode *n, int fd,
			struct extent **out, size_t *count)
{
	struct extent *ext = NULL;
	size_t cap = 0, cnt = 0;
	uint64_t pos = 0;

	while (pos < n->size) {
		off_t data = lseek(fd, (off_t)pos, SEEK_DATA), hole;

		if (data < 0) {
			if (errno == ENXIO)
				break;
			free(ext);
			return err_fail(b->err, -errno, "%s: SEEK_DATA: %s", n->src_path,
				       strerror(errno));
		}
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0) {
			free(ext);
			return err_fail(b->err, -errno, "%s: SEEK_HOLE: %s", n->src_path,
				       strerror(errno));
		}
		if ((uint64_t)hole > n->size)
			hole = (off_t)n->size;
		if (cnt == cap) {
			struct extent *g;

			cap = cap ? cap * 2 : 16;
			g = realloc(ext, cap * sizeof(*g));
			if (!g) {
				free(ext);
				return err_fail(b->err, -ENOMEM, "out of memory");
			}
			ext = g;
		}
		ext[cnt].start = (uint64_t)data / b->blksz * b->blksz;
		ext[cnt].end = round_up_u64((uint64_t)hole, b->blksz);
		cnt++;
		pos = (uint64_t)hole;
		if (hole <= data)
			break;
	}
	*out = ext;
	*count = cnt;
	return 0;
}

/* Bytes a chunk-based layout with 2^bits chunks would cost. */
static uint64_t chunk_cost(const struct extent *ext, size_t cnt, uint64_t size,
			   unsigned int bits, uint64_t *nchunks)
{
	uint64_t chunks = div_round_up_u64(size, 1ull << bits);
	uint64_t used = 0, last = UINT64_MAX;
	size_t i;

	for (i = 0; i < cnt; i++) {
		uint64_t c = ext[i].start >> bits, e = (ext[i].end - 1) >> bits;

		if (c == last)
			c++;
		if (c <= e)
			used += e - c + 1;
		last = e;
	}
	*nchunks = chunks;
	return chunks * 4 + used * (1ull << bits);
}

/* Decide whether a sparse file goes chunk-based, and with which chunk size. */
static int plan_chunks(struct build *b, struct tnode *n, int fd, bool *chosen);

int data_plan_sparse(struct build *b, struct tnode *n, bool *chunked)
{
	int fd, ret;

	*chunked = false;
	if (!S_ISREG(n->mode) || !n->has_holes || b->o.no_sparse_chunks || !n->size)
		return 0;
	ret = source_open(b, n, &fd);
	if (ret)
		return ret;
	ret = plan_chunks(b, n, fd, chunked);
	source_close(b, fd);
	return ret;
}

static int plan_chunks(struct build *b, struct tnode *n, int fd, bool *chosen)
{
	uint64_t flat = round_up_u64(n->size, b->blksz), best = UINT64_MAX;
	unsigned int bits, best_bits = 0;
	struct extent *ext = NULL;
	size_t cnt = 0, i;
	uint64_t nchunks = 0, best_chunks = 0;
	int ret = data_extents(b, n, fd, &ext, &cnt);

	*chosen = false;
	if (ret)
		return ret;
	/* Chunk sizes from one block to 2^31 blocks (5 format bits). */
	for (bits = b->blkszbits; bits <= b->blkszbits + 31 && bits < 48; bits++) {
		uint64_t cost = chunk_cost(ext, cnt, n->size, bits, &nchunks);

		if (cost < best) {
			best = cost;
			best_bits = bits;
			best_chunks = nchunks;
		}
		if ((1ull << bits) >= n->size)
			break;
	}
	/* Worth it only when it saves a tenth and at least a megabyte. */
	if (best + flat / 10 >= flat || flat - best < (1u << 20) ||
	    best_chunks > (UINT32_MAX / 4)) {
		free(ext);
		return 0;
	}
	n->chunks = calloc(1, sizeof(*n->chunks));
	if (n->chunks)
		n->chunks->blocks = malloc(best_chunks * sizeof(uint32_t));
	if (!n->chunks || !n->chunks->blocks) {
		free(ext);
		return err_fail(b->err, -ENOMEM, "out of memory");
	}
	n->chunks->chunkbits = best_bits;
	n->chunks->count = best_chunks;
	for (i = 0; i < best_chunks; i++)
		n->chunks->blocks[i] = EROFS_NULL_ADDR;
	for (i = 0; i < cnt; i++) {
		uint64_t c;

		for (c = ext[i].start >> best_bits; c <= (ext[i].end - 1) >> best_bits; c++)
			n->chunks->blocks[c] = 0;   /* has data; address later */
	}
	free(ext);
	*chosen = true;
	return 0;
}

/* ------------------------------------------------------------ copying */

/* Copy [off, off + len) of the source to the image at block *blk,
 * padding the last block with zeros. */
static int copy_range(struct build *b, struct tnode *n, int fd, uint8_t *buf,
		      uint64_t off, uint64_t len)
{
	uint64_t dst = b->data_blk << b->blkszbits;
	uint64_t done = 0;

	while (done < len) {
		size_t want = len - done < COPY_BUF ? (size_t)(len - done) : COPY_BUF;
		size_t padded = (size_t)round_up_u64(want, b->blksz);
		int ret = source_pread(b, n, fd, buf, want, off + done);

		if (ret)
			return ret;
		memset(buf + want, 0, padded - want);
		ret = writer_pwrite(b->w, dst + done, buf, padded, b->err);
		if (ret)
			return ret;
		done += want;
		build_progress(b, want);
	}
	b->data_blk += div_round_up_u64(len, b->blksz);
	return 0;
}

static int write_chunked(struct build *b, struct tnode *n, int fd, uint8_t *buf)
{
	uint64_t c, csize = 1ull << n->chunks->chunkbits;
	int ret = 0;

	n->layout = EROFS_LAYOUT_CHUNK_BASED;
	b->feature_incompat |= EROFS_INCOMPAT_CHUNKED_FILE;
	for (c = 0; c < n->chunks->count && !ret; c++) {
		uint64_t off = c * csize, len = n->size - off < csize ? n->size - off : csize;

		if (n->chunks->blocks[c] == EROFS_NULL_ADDR) {
			build_progress(b, len);
			continue;
		}
		if (b->data_blk > UINT32_MAX - div_round_up_u64(len, b->blksz))
			return err_fail(b->err, -EFBIG, "image too large for 32-bit block addresses");
		n->chunks->blocks[c] = (uint32_t)b->data_blk;
		ret = copy_range(b, n, fd, buf, off, len);
	}
	n->meta_extra = (uint32_t)(n->chunks->count * 4);
	return ret;
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
	} else if (n->chunks) {
		ret = write_chunked(b, n, fd, buf);
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
	uint8_t *buf;
	int ret;

	if (S_ISLNK(n->mode))
		return write_symlink(b, n);
	if (!S_ISREG(n->mode))
		return 0;
	buf = malloc(COPY_BUF);
	if (!buf)
		return err_fail(b->err, -ENOMEM, "out of memory");
	ret = write_regular(b, n, buf);
	free(buf);
	if (!ret && b->data_blk > UINT32_MAX)
		ret = err_fail(b->err, -EFBIG, "image exceeds 2^32 blocks of %u bytes", b->blksz);
	return ret;
}

int data_write_one(struct build *b, struct tnode *n)
{
	bool chunked;
	int ret = data_plan_sparse(b, n, &chunked);

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
