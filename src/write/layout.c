/*
 * Metadata layout.  The image is laid out as
 *
 *     [superblock block(s)] [file data] [metadata area] [directory blocks]
 *
 * File data comes first because it is written while compressing (so that
 * inline compressed tails are known before inodes are placed); meta_blkaddr
 * then points at the metadata area, so nids stay small.  The area starts
 * with the shared xattrs; inode records follow on 32-byte slots.  A record
 * that fits in a block never crosses a block boundary (inline tails must
 * not), and records fill earlier gaps first-fit to waste little space.
 * Directory data lives after the metadata because it holds nids.
 *
 * With a metabox (METABOX), every inode record but the packed inode's and
 * the metabox's own lies in the metabox's data, laid out by the same
 * rules from offset 0: [file data] [directory blocks] [metabox data]
 * [packed inode's data] [plain area].
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "write/internal.h"
#include "write/dirent.h"
#include "format/dir.h"
#include "format/ondisk.h"
#include "util/error.h"

#define OPEN_BLOCKS_MAX 32

struct placer {
	uint32_t blksz;
	uint64_t cursor;                   /* end of the used area */
	uint64_t open[OPEN_BLOCKS_MAX];    /* next free byte in earlier blocks */
	unsigned int nopen;
};

static void remember_gap(struct placer *p, uint64_t pos)
{
	uint64_t block_end = round_up_u64(pos + 1, p->blksz);

	if (block_end - pos < EROFS_SLOT_SIZE)
		return;
	if (p->nopen == OPEN_BLOCKS_MAX) {
		memmove(p->open, p->open + 1, (OPEN_BLOCKS_MAX - 1) * sizeof(p->open[0]));
		p->nopen--;
	}
	p->open[p->nopen++] = pos;
}

/* Returns the offset of a record of `size` bytes within the area. */
static uint64_t place(struct placer *p, uint32_t size)
{
	uint64_t slots = round_up_u64(size, EROFS_SLOT_SIZE), pos;
	unsigned int i;

	if (size <= p->blksz) {
		for (i = 0; i < p->nopen; i++) {
			uint64_t end = round_up_u64(p->open[i] + 1, p->blksz);

			if (p->open[i] + size > end)
				continue;
			pos = p->open[i];
			p->open[i] += slots;
			if (p->open[i] >= end || end - p->open[i] < EROFS_SLOT_SIZE) {
				memmove(p->open + i, p->open + i + 1,
					(p->nopen - i - 1) * sizeof(p->open[0]));
				p->nopen--;
			}
			return pos;
		}
		if ((p->cursor % p->blksz) + size > p->blksz) {
			remember_gap(p, p->cursor);
			p->cursor = round_up_u64(p->cursor, p->blksz);
		}
	}
	pos = p->cursor;
	p->cursor += slots;
	return pos;
}

static bool tail_fits_inline(const struct build *b, const struct tnode *n,
			     uint64_t tail)
{
	return tail && b->lay.inline_data &&
	       tnode_core_size(n) + n->xattr_size + tail <= b->blksz;
}

static int size_directory(struct build *b, struct tnode *n)
{
	struct fmt_dirent_in *ents;
	size_t count;
	uint64_t tail;
	int ret = dir_entries(b, n, &ents, &count);

	if (ret)
		return ret;
	n->dir_size = fmt_dir_size(ents, count, b->blksz);
	free(ents);
	n->size = n->dir_size;
	tail = n->dir_size % b->blksz;
	if (tail_fits_inline(b, n, tail)) {
		n->layout = EROFS_LAYOUT_FLAT_INLINE;
		n->inline_size = (uint32_t)tail;
		n->nblocks = n->dir_size / b->blksz;
	} else {
		n->layout = EROFS_LAYOUT_FLAT_PLAIN;
		n->nblocks = div_round_up_u64(n->dir_size, b->blksz);
	}
	return 0;
}

/* Place the records of one area's inodes, in list order. */
static int place_records(struct build *b, bool metabox, uint64_t *size)
{
	struct placer p = { .blksz = b->blksz };
	struct tnode *n;

	/* The plain area starts with the shared xattrs; no inode at its nid
	 * 0, which tools read as "none" (packed_nid 0, for one).  The
	 * metabox's nids carry bit 63 and are never 0. */
	if (!metabox)
		p.cursor = round_up_u64(b->shared_xattr_size ? b->shared_xattr_size : 1,
					EROFS_SLOT_SIZE);
	for (n = b->tree.first; n; n = n->next) {
		struct tnode *c;

		if (n->in_metabox != metabox || (metabox && n->is_copy))
			continue;
		/* Copies of a file right after it, in a metabox: compression
		 * then finds their inline tails within one cluster. */
		for (c = n; c; c = metabox ? c->copies : NULL) {
			uint64_t rec = tnode_core_size(c) + c->xattr_size;

			rec += c->layout == EROFS_LAYOUT_FLAT_INLINE ? c->inline_size : c->meta_extra;
			if (rec > UINT32_MAX)
				return err_fail(b->err, -EFBIG, "inode metadata too large");
			c->record_size = (uint32_t)rec;
			c->nid = place(&p, c->record_size) / EROFS_SLOT_SIZE;
		}
	}
	*size = p.cursor;
	return 0;
}

static int check_blocks(struct build *b, uint64_t blk)
{
	if (blk > UINT32_MAX)
		return err_fail(b->err, -EFBIG, "image exceeds 2^32 blocks of %u bytes",
			       b->blksz);
	return 0;
}

/*
 * Without a metabox: [metadata area][directory blocks] from b->data_blk.
 * With one, the directory blocks come first, then the metabox's data
 * (compressed once its records are: they hold the directories' block
 * addresses), then the packed inode's, then the plain area
 * (layout_plain_area).
 */
int layout_metadata(struct build *b)
{
	uint64_t blk, serial = 0;
	struct tnode *n;
	int ret;

	for (n = b->tree.first; n; n = n->next) {
		if (S_ISDIR(n->mode)) {
			ret = size_directory(b, n);
			if (ret)
				return ret;
		}
		/* The kernel reads the packed inode before the metabox. */
		n->in_metabox = b->lay.metabox && n != b->packed_inode;
		n->serial = (uint32_t)++serial;
	}
	ret = place_records(b, b->lay.metabox, b->lay.metabox ? &b->metabox_size : &b->meta_size);
	if (ret)
		return ret;
	if (!b->lay.metabox && b->tree.root->nid > 0xFFFF)
		return err_fail(b->err, -EFBIG, "root inode nid %llu does not fit 16 bits",
			       (unsigned long long)b->tree.root->nid);
	blk = b->data_blk;
	if (!b->lay.metabox) {
		b->meta_blkaddr = blk;
		blk += div_round_up_u64(b->meta_size, b->blksz);
	}
	for (n = b->tree.first; n; n = n->next) {
		if (!S_ISDIR(n->mode) || !n->nblocks)
			continue;
		n->startblk = blk;
		blk += n->nblocks;
	}
	ret = check_blocks(b, blk);
	if (b->lay.metabox)
		b->data_blk = blk;
	b->end_blk = blk;
	return ret;
}

int layout_plain_area(struct build *b)
{
	int ret = place_records(b, false, &b->meta_size);

	if (ret)
		return ret;
	b->meta_blkaddr = b->data_blk;
	b->end_blk = b->meta_blkaddr + div_round_up_u64(b->meta_size, b->blksz);
	return check_blocks(b, b->end_blk);
}
