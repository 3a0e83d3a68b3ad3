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
 * not); slots.c packs them.
 * Directory data lives after the metadata because it holds nids.
 *
 * With a metabox (METABOX), every inode record but the packed inode's and
 * the metabox's own lies in the metabox's data, laid out by the same
 * rules from offset 0: [file data] [directory blocks] [metabox data]
 * [packed inode's data] [plain area].
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "write/internal.h"
#include "write/dirent.h"
#include "write/slots.h"
#include "write/tails.h"
#include "format/dir.h"
#include "format/ondisk.h"
#include "util/error.h"

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

/* The inodes of one area in list order; with a metabox, each file's
 * copies right after it (compression then finds their inline tails
 * within one cluster).  Counts them when seq is NULL. */
static size_t area_sequence(struct build *b, bool metabox, struct tnode **seq)
{
	struct tnode *n, *c;
	size_t count = 0;

	for (n = b->tree.first; n; n = n->next) {
		if (n->in_metabox != metabox || (metabox && n->is_copy))
			continue;
		for (c = n; c; c = metabox ? c->copies : NULL) {
			if (seq)
				seq[count] = c;
			count++;
		}
	}
	return count;
}

/* Place the records of one area's inodes (slots.c). */
static int place_records(struct build *b, bool metabox, uint64_t *size)
{
	size_t i, count = area_sequence(b, metabox, NULL);
	struct tnode **seq = malloc((count ? count : 1) * sizeof(*seq));
	uint32_t *sizes = calloc(count ? count : 1, sizeof(*sizes));
	uint64_t *offsets = malloc((count ? count : 1) * sizeof(*offsets));
	/* The plain area starts with the shared xattrs; no inode at its nid
	 * 0, which tools read as "none" (packed_nid 0, for one).  The
	 * metabox's nids carry bit 63 and are never 0. */
	uint64_t start = metabox ? 0 : round_up_u64(b->shared_xattr_size ? b->shared_xattr_size : 1,
						    EROFS_SLOT_SIZE);
	int ret = 0;

	if (!seq || !sizes || !offsets) {
		ret = err_fail(b->err, -ENOMEM, "out of memory");
		goto out;
	}
	area_sequence(b, metabox, seq);
	for (i = 0; i < count; i++) {
		struct tnode *c = seq[i];
		uint64_t rec = tnode_core_size(c) + c->xattr_size;

		rec += c->layout == EROFS_LAYOUT_FLAT_INLINE ? c->inline_size : c->meta_extra;
		if (rec > UINT32_MAX) {
			ret = err_fail(b->err, -EFBIG, "inode metadata too large");
			goto out;
		}
		c->record_size = sizes[i] = (uint32_t)rec;
	}
	if (slots_place(sizes, count, b->blksz, start, metabox, offsets, size)) {
		ret = err_fail(b->err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < count; i++)
		seq[i]->nid = offsets[i] / EROFS_SLOT_SIZE;
out:
	free(seq);
	free(sizes);
	free(offsets);
	return ret;
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
