/*
 * Chunk-based files: a table of block addresses, one per chunk of 2^n
 * bytes, a hole where a chunk has no data (a 4-byte block map, or with
 * -Eforce-chunk-indexes 8-byte chunk indexes, 8-byte aligned).
 *   - A sparse file becomes chunk-based when that is smaller, at the chunk
 *     size that costs least, so that its holes cost no space.
 *   - With --chunksize, every file with a data block is, at that size:
 *     its chunks of zeros become holes, and (dedupe) a chunk stored before
 *     is pointed at again; a file where neither happens ends up flat.
 *   - With --blobdev, every chunk goes to the blob instead of the image
 *     (and no file ends up flat: the image holds no file data then).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write/internal.h"
#include "write/dedupe.h"
#include "write/source.h"
#include "write/tails.h"
#include "format/ondisk.h"
#include "util/digest.h"
#include "util/error.h"

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
		int64_t data = source_seek(b, n, fd, pos, SEEK_DATA), hole;

		if (data == -ENXIO)
			break;
		hole = data < 0 ? data : source_seek(b, n, fd, (uint64_t)data, SEEK_HOLE);
		if (hole < 0) {
			free(ext);
			return (int)hole;
		}
		if ((uint64_t)hole > n->size)
			hole = (int64_t)n->size;
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

int chunks_plan_sparse(struct build *b, struct tnode *n, bool *chunked)
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

/* n's table of chunks of 2^bits bytes, each a hole until marked. */
static int chunks_alloc(struct build *b, struct tnode *n, unsigned int bits)
{
	uint64_t i, count = div_round_up_u64(n->size, 1ull << bits);

	/* Up to eight bytes a chunk, counted in 32 bits with the inode's
	 * record. */
	if (count > UINT32_MAX / 8)
		return err_fail(b->err, -EFBIG,
				"%s: %llu chunks of %llu bytes are more than one inode indexes: "
				"take larger chunks", n->src_path, (unsigned long long)count,
				(unsigned long long)(1ull << bits));
	n->chunks = calloc(1, sizeof(*n->chunks));
	if (n->chunks)
		n->chunks->blocks = malloc(count * sizeof(uint32_t));
	if (!n->chunks || !n->chunks->blocks)
		return err_fail(b->err, -ENOMEM, "out of memory");
	n->chunks->chunkbits = bits;
	n->chunks->count = count;
	for (i = 0; i < count; i++)
		n->chunks->blocks[i] = EROFS_NULL_ADDR;
	return 0;
}

/* The chunks [start, end) of the file overlaps hold data. */
static void chunks_mark(struct tnode *n, uint64_t start, uint64_t end)
{
	uint64_t c;

	for (c = start >> n->chunks->chunkbits; c <= (end - 1) >> n->chunks->chunkbits; c++)
		n->chunks->blocks[c] = 0;   /* has data; address later */
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
	if (b->o.chunk_size) {
		/* The user's chunk size: the holes it can leave out. */
		best_bits = (unsigned int)__builtin_ctz(b->o.chunk_size);
	} else {
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
		    best_chunks > (UINT32_MAX / 8)) {
			free(ext);
			return 0;
		}
	}
	ret = chunks_alloc(b, n, best_bits);
	for (i = 0; i < cnt && !ret; i++)
		chunks_mark(n, ext[i].start, ext[i].end);
	free(ext);
	*chosen = !ret;
	return ret;
}

/* Where chunks are stored: the image's data blocks, or with --blobdev
 * the blob, the image's extra device, each from its own next block. */
struct chunk_dest {
	struct writer *w;
	uint64_t *blk;
};

static struct chunk_dest chunk_dest(struct build *b)
{
	if (b->blob)
		return (struct chunk_dest){ b->blob, &b->blob_blk };
	return (struct chunk_dest){ b->w, &b->data_blk };
}

/* A chunk's blocks from blk on, which a block map addresses in 32 bits. */
static int chunk_place(struct build *b, uint64_t blk, uint64_t len, uint32_t *addr)
{
	if (blk > UINT32_MAX - div_round_up_u64(len, b->blksz))
		return err_fail(b->err, -EFBIG, "image too large for 32-bit block addresses");
	*addr = (uint32_t)blk;
	return 0;
}

static bool all_zeros(const uint8_t *p, size_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

/* A chunk of zeros is a hole, and with dedupe one stored before is
 * pointed at: *addr set and counted, or false for a new chunk. */
static bool chunk_known(struct build *b, bool zeros, const uint8_t *digest, uint64_t len,
			uint32_t *addr)
{
	uint64_t found;

	if (zeros) {
		*addr = EROFS_NULL_ADDR;
		b->stats->zero_chunks++;
		return true;
	}
	if (b->dedupe && dedupe_chunk_find(b, digest, len, &found)) {
		*addr = (uint32_t)found;
		b->stats->dedupe_hits++;
		return true;
	}
	return false;
}

/*
 * Chunks under --chunksize, each looked at before it is stored: a chunk
 * of zeros becomes a hole, and with dedupe one equal to a chunk stored
 * before, of this file or an earlier one, points at that.  While every
 * chunk of a file is new, it is laid out as a flat file would be; if it
 * stays so, it becomes one, its tail beside its inode where that fits
 * (a chunk table would only cost it the index and a last block).
 */
struct chunk_pass {
	bool all_new;               /* every chunk so far stored, in order */
	bool tail_inline;           /* the last block left for the inode */
};

/* The chunk at p (len bytes, a window's): a hole, found, or (*stored)
 * moved down to buf + *out, padded, for the window's single write; its
 * digest in digest when dedupe is on.  *addr set. */
static int look_at_chunk(struct build *b, uint8_t *buf, size_t *out, const uint8_t *p,
			 size_t len, uint32_t *addr, uint8_t *digest, bool *stored)
{
	bool zeros = all_zeros(p, len);
	int ret;

	*stored = false;
	if (!zeros && b->dedupe)
		digest_of(p, len, digest);
	if (chunk_known(b, zeros, digest, len, addr))
		return 0;
	ret = chunk_place(b, *chunk_dest(b).blk + *out / b->blksz, len, addr);
	if (ret)
		return ret;
	memmove(buf + *out, p, len);
	memset(buf + *out + len, 0, (size_t)round_up_u64(len, b->blksz) - len);
	*out += (size_t)round_up_u64(len, b->blksz);
	*stored = true;
	return 0;
}

/*
 * Chunks [first, last), no more than the copy buffer holds, read with
 * one call and their new ones written with one (4 KiB chunks one by one,
 * a read and a write each, took 1.6 times as long on the tree of small
 * files).  A window of holes alone is not read.  The file's last chunk
 * is remembered only once its fate is known: its last block may yet go
 * to the inode.
 */
static int write_chunk_window(struct build *b, struct tnode *n, int fd, uint8_t *buf,
			      uint64_t first, uint64_t last, struct chunk_pass *pass)
{
	struct tchunks *t = n->chunks;
	uint64_t off = first << t->chunkbits, csize = 1ull << t->chunkbits;
	uint64_t end = last << t->chunkbits < n->size ? last << t->chunkbits : n->size;
	struct chunk_dest dest = chunk_dest(b);
	uint8_t digest[DIGEST_SIZE];
	bool stored = false;
	size_t out = 0, len = 0;
	uint64_t c;
	int ret = 0;

	for (c = first; c < last && t->blocks[c] == EROFS_NULL_ADDR; c++)
		;
	if (c < last)
		ret = source_pread(b, n, fd, buf, (size_t)(end - off), off);
	for (c = first; c < last && !ret; c++) {
		uint64_t at = (c - first) << t->chunkbits;

		len = (size_t)(end - off - at < csize ? end - off - at : csize);
		stored = false;
		if (t->blocks[c] == EROFS_NULL_ADDR)
			b->stats->zero_chunks++;
		else
			ret = look_at_chunk(b, buf, &out, buf + at, len, &t->blocks[c], digest,
					    &stored);
		pass->all_new = pass->all_new && stored;
		if (!ret && stored && b->dedupe && c + 1 < t->count)
			ret = dedupe_chunk_stored(b, digest, len, t->blocks[c]);
	}
	if (!ret && last == t->count) {
		pass->tail_inline = pass->all_new &&
				    tail_fits_inline(b, n, n->size % b->blksz) &&
				    !dedupe_tail_given_up(b, digest, len);
		if (pass->tail_inline) {
			out -= b->blksz;
			ret = dedupe_tail_giving_up(b, digest, len);
		} else if (stored && b->dedupe) {
			ret = dedupe_chunk_stored(b, digest, len, t->blocks[last - 1]);
		}
	}
	if (!ret && out)
		ret = writer_pwrite(dest.w, *dest.blk << b->blkszbits, buf, out, b->err);
	*dest.blk += out / b->blksz;
	build_progress(b, end - off);
	return ret;
}

/* Every chunk of n new, in order from its first block: a flat file. */
static int become_flat(struct build *b, struct tnode *n, int fd, bool tail_inline)
{
	uint64_t tail = tail_inline ? n->size % b->blksz : 0, body = n->size - tail;

	n->startblk = n->chunks->blocks[0];
	n->nblocks = div_round_up_u64(body, b->blksz);
	free(n->chunks->blocks);
	free(n->chunks);
	n->chunks = NULL;
	n->meta_extra = 0;
	if (!tail_inline) {
		n->layout = EROFS_LAYOUT_FLAT_PLAIN;
		return 0;
	}
	n->layout = EROFS_LAYOUT_FLAT_INLINE;
	n->inline_size = (uint32_t)tail;
	return tail_read(b, n, fd, body);
}

/* A chunk larger than the copy buffer: read once to look at it, and once
 * more to copy it if it is new. */
static int write_long_chunk(struct build *b, struct tnode *n, int fd, uint8_t *buf,
			    uint64_t off, uint64_t len, uint32_t *addr)
{
	struct chunk_dest dest = chunk_dest(b);
	struct digest_state *s = NULL;
	uint8_t digest[DIGEST_SIZE] = { 0 };
	uint64_t done;
	bool zeros = true;
	int ret = 0;

	if (b->dedupe && !(s = digest_begin()))
		return err_fail(b->err, -ENOMEM, "out of memory");
	for (done = 0; done < len && !ret; done += COPY_BUF) {
		size_t want = len - done < COPY_BUF ? (size_t)(len - done) : COPY_BUF;

		ret = source_pread(b, n, fd, buf, want, off + done);
		if (!ret && zeros)
			zeros = all_zeros(buf, want);
		if (!ret && s)
			digest_add(s, buf, want);
	}
	if (s)
		digest_end(s, digest);
	if (ret)
		return ret;
	if (chunk_known(b, zeros, digest, len, addr)) {
		build_progress(b, len);
		return 0;
	}
	ret = chunk_place(b, *dest.blk, len, addr);
	if (!ret)
		ret = copy_range_to(b, n, fd, buf, off, len, dest.w, dest.blk);
	if (!ret && s)
		ret = dedupe_chunk_stored(b, digest, len, *addr);
	return ret;
}

/* Chunks one at a time: a sparse file's planned ones (copied as they
 * are), or --chunksize's larger than the copy buffer. */
static int write_each_chunk(struct build *b, struct tnode *n, int fd, uint8_t *buf)
{
	struct chunk_dest dest = chunk_dest(b);
	struct tchunks *t = n->chunks;
	uint64_t c, csize = 1ull << t->chunkbits;
	int ret = 0;

	for (c = 0; c < t->count && !ret; c++) {
		uint64_t off = c * csize, len = n->size - off < csize ? n->size - off : csize;
		uint32_t *addr = &t->blocks[c];

		if (*addr == EROFS_NULL_ADDR) {
			b->stats->zero_chunks++;
			build_progress(b, len);
		} else if (b->o.chunk_size) {
			ret = write_long_chunk(b, n, fd, buf, off, len, addr);
		} else {
			ret = chunk_place(b, *dest.blk, len, addr);
			if (!ret)
				ret = copy_range_to(b, n, fd, buf, off, len, dest.w, dest.blk);
		}
	}
	return ret;
}

uint32_t chunks_index_pad(const struct build *b, const struct tnode *n)
{
	uint32_t end = tnode_core_size(n) + n->xattr_size;

	return b->o.chunk_indexes ? (8 - end % 8) % 8 : 0;
}

int chunks_write(struct build *b, struct tnode *n, int fd, uint8_t *buf)
{
	struct tchunks *t;
	uint64_t c, per;
	int ret = 0;

	if (!n->chunks) {
		ret = chunks_alloc(b, n, (unsigned int)__builtin_ctz(b->o.chunk_size));
		if (ret)
			return ret;
		chunks_mark(n, 0, n->size);
	}
	t = n->chunks;
	/* Chunks reach 2^43 bytes (4 KiB blocks): a 64-bit shift. */
	per = (uint64_t)COPY_BUF >> t->chunkbits;

	if (b->o.chunk_size && per) {
		/* In a blob, a file's chunks stay chunks: only they can
		 * name the device. */
		struct chunk_pass pass = { .all_new = !b->blob };

		for (c = 0; c < t->count && !ret; c += per)
			ret = write_chunk_window(b, n, fd, buf, c,
						 t->count - c < per ? t->count : c + per, &pass);
		if (!ret && pass.all_new)
			return become_flat(b, n, fd, pass.tail_inline);
	} else {
		ret = write_each_chunk(b, n, fd, buf);
	}
	n->layout = EROFS_LAYOUT_CHUNK_BASED;
	b->feature_incompat |= EROFS_INCOMPAT_CHUNKED_FILE;
	n->meta_extra = chunks_index_pad(b, n) +
			(uint32_t)(t->count * (b->o.chunk_indexes ? 8 : 4));
	b->stats->chunked_files++;
	return ret;
}
