/* Serializing the metadata area, directory blocks and the superblock. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "write/internal.h"
#include "write/tails.h"
#include "write/compress.h"
#include "write/dirent.h"
#include "format/dir.h"
#include "format/inode.h"
#include "format/super.h"
#include "util/error.h"

static uint32_t inode_u(const struct build *b, const struct tnode *n)
{
	switch (n->mode & S_IFMT) {
	case S_IFCHR:
	case S_IFBLK:
		return fmt_encode_rdev(n->rdev_major, n->rdev_minor);
	case S_IFIFO:
	case S_IFSOCK:
		return 0;
	}
	switch (n->layout) {
	case EROFS_LAYOUT_FLAT_INLINE:
		/* Entirely inline: no block, written as NULL like mkfs. */
		return n->nblocks ? (uint32_t)n->startblk : EROFS_NULL_ADDR;
	case EROFS_LAYOUT_CHUNK_BASED:
		return (n->chunks->chunkbits - b->blkszbits) |
		       (b->o.chunk_indexes ? EROFS_CHUNK_INDEXES : 0);
	case EROFS_LAYOUT_COMPRESSED_FULL:
	case EROFS_LAYOUT_COMPRESSED_COMPACT:
		return (uint32_t)n->nblocks;
	default:
		return n->nblocks ? (uint32_t)n->startblk : 0;
	}
}

static void encode_core(const struct build *b, const struct tnode *n,
			uint8_t *out)
{
	struct fmt_inode in = {
		.extended = n->extended,
		.layout = n->layout,
		.format_bit4 = S_ISDIR(n->mode) && b->o.dot_omitted,
		.xattr_icount = n->xattr_icount,
		.mode = (uint16_t)n->mode,
		.nlink = n->nlink,
		.size = S_ISDIR(n->mode) ? n->dir_size : n->size,
		.mtime = n->mtime,
		.mtime_nsec = n->mtime_nsec,
		.u = inode_u(b, n),
		.ino = n->serial,
		.uid = n->uid,
		.gid = n->gid,
	};

	fmt_inode_encode(&in, b->epoch, out);
}

/* Directory content: full blocks to the image, the tail inline. */
static int write_directory(struct build *b, struct tnode *n, uint8_t *inline_out)
{
	struct fmt_dirent_in *ents;
	size_t count;
	uint8_t *data;
	uint64_t full;
	int ret = dir_entries(b, n, &ents, &count);

	if (ret)
		return ret;
	data = calloc(1, round_up_u64(n->dir_size, b->blksz));
	if (!data) {
		free(ents);
		return err_fail(b->err, -ENOMEM, "out of memory");
	}
	fmt_dir_encode(ents, count, b->blksz, data);
	free(ents);
	full = n->layout == EROFS_LAYOUT_FLAT_INLINE ? n->dir_size - n->inline_size
						     : round_up_u64(n->dir_size, b->blksz);
	if (full)
		ret = writer_pwrite(b->w, n->startblk << b->blkszbits, data, full, b->err);
	if (!ret && n->layout == EROFS_LAYOUT_FLAT_INLINE)
		memcpy(inline_out, data + full, n->inline_size);
	free(data);
	return ret;
}

/* A block map (le32 start blocks), or chunk indexes: 8 bytes each,
 * (startblk_hi, device_id) zero, le32 start block, after the padding
 * that aligns them to 8 bytes.  Holes stay all-ones in either. */
static void encode_chunk_table(const struct build *b, const struct tnode *n, uint8_t *tail)
{
	uint64_t i;

	if (!b->o.chunk_indexes) {
		for (i = 0; i < n->chunks->count; i++)
			put_le32(tail + 4 * i, n->chunks->blocks[i]);
		return;
	}
	tail += chunks_index_pad(b, n);
	for (i = 0; i < n->chunks->count; i++) {
		/* With --blobdev every chunk lies on the blob, device 1. */
		if (b->blob && n->chunks->blocks[i] != EROFS_NULL_ADDR)
			put_le16(tail + 8 * i + 2, 1);
		put_le32(tail + 8 * i + 4, n->chunks->blocks[i]);
	}
}

/* n's record into rec[n->record_size], zeroed. */
static int encode_inode(struct build *b, struct tnode *n, uint8_t *rec)
{
	uint8_t *tail = rec + tnode_core_size(n) + n->xattr_size;

	encode_core(b, n, rec);
	if (n->xattr_size)
		encode_xattr_body(b, n, rec + tnode_core_size(n));
	if (S_ISDIR(n->mode))
		return write_directory(b, n, tail);
	if (n->layout == EROFS_LAYOUT_FLAT_INLINE && S_ISLNK(n->mode))
		memcpy(tail, n->symlink, n->inline_size);
	else if (n->layout == EROFS_LAYOUT_FLAT_INLINE)
		return tail_copy(b, n, tail);
	else if (n->layout == EROFS_LAYOUT_CHUNK_BASED)
		encode_chunk_table(b, n, tail);
	else if (n->z)
		zbuild_encode_index(b, n, rec);
	return 0;
}

static int write_superblock(struct build *b)
{
	size_t head = (size_t)(b->first_data_blk << b->blkszbits);
	size_t span = fmt_super_checksum_span(b->blksz);
	struct fmt_super sb = { 0 };
	uint8_t *block;
	int ret;

	block = calloc(1, head > EROFS_SUPER_OFFSET + span ? head : EROFS_SUPER_OFFSET + span);
	if (!block)
		return err_fail(b->err, -ENOMEM, "out of memory");
	sb.feature_compat = b->feature_compat;
	sb.feature_incompat = b->feature_incompat;
	sb.blkszbits = (uint8_t)b->blkszbits;
	sb.root_nid_16 = (uint16_t)b->tree.root->nid;
	if (b->metabox_inode) {
		/* 48bit: the root's full nid at 112, bits 32..47 of the
		 * block count where the 16-bit root nid was. */
		sb.sb_extslots = 1;
		sb.metabox_nid = b->metabox_inode->nid;
		sb.rootnid_8b = tnode_nid_ref(b->tree.root);
		sb.root_nid_16 = (uint16_t)(b->end_blk >> 32);
	}
	sb.inos = b->tree.ninodes;
	sb.epoch = b->epoch;
	sb.fixed_nsec = b->fixed_nsec;
	sb.blocks_lo = (uint32_t)b->end_blk;
	sb.meta_blkaddr = (uint32_t)b->meta_blkaddr;
	sb.xattr_blkaddr = b->shared_xattr_size ? (uint32_t)b->meta_blkaddr : 0;
	if (b->o.uuid_set) {
		memcpy(sb.uuid, b->o.uuid, 16);
	} else if (b->o.uuid_random) {
		if (getrandom(sb.uuid, 16, 0) != 16) {
			free(block);
			return err_fail(b->err, -EIO, "cannot get random bytes for the UUID");
		}
		sb.uuid[6] = (uint8_t)((sb.uuid[6] & 0x0F) | 0x40);
		sb.uuid[8] = (uint8_t)((sb.uuid[8] & 0x3F) | 0x80);
	} else {
		/* Derived from the content: reproducible, yet distinct for
		 * distinct images (an RFC 9562 version 8 UUID), and for
		 * distinct blobs beside them. */
		writer_digest(b->w, sb.uuid);
		if (b->blob) {
			uint8_t blob[16];

			writer_digest(b->blob, blob);
			for (int i = 0; i < 16; i++)
				sb.uuid[i] ^= blob[i];
		}
		sb.uuid[6] = (uint8_t)((sb.uuid[6] & 0x0F) | 0x80);
		sb.uuid[8] = (uint8_t)((sb.uuid[8] & 0x3F) | 0x80);
	}
	memcpy(sb.volume_name, b->o.label, strnlen(b->o.label, 15));
	sb.u1 = b->z ? zbuild_sb_u1(b) : 0;
	if (b->packed_inode)
		sb.packed_nid = b->packed_inode->nid;
	if (b->devt_off) {
		/* The extra device's slot: its size, and the image's end as
		 * its unified address, where the blob or the tar follows
		 * when the two are one file; given apart (device=), it
		 * serves that range.  Its tag stays empty, as mkfs.erofs
		 * leaves it: the kernel reads it only through fscache. */
		uint8_t *slot = block + b->devt_off;

		sb.extra_devices = 1;
		sb.devt_slotoff = (uint16_t)(b->devt_off / EROFS_DEVICE_SLOT_SIZE);
		sb.feature_incompat |= EROFS_INCOMPAT_DEVICE_TABLE;
		put_le32(slot + 64, (uint32_t)(b->blob ? b->blob_blk : b->index_blocks));
		put_le32(slot + 68, (uint32_t)b->end_blk);
	}
	sb.xattr_prefix_count = (uint8_t)b->nprefixes;
	sb.xattr_prefix_start = b->prefix_off / 4;
	if (b->prefix_off)
		memcpy(block + b->prefix_off, b->prefix_table, b->prefix_table_size);
	fmt_super_encode(&sb, block + EROFS_SUPER_OFFSET);
	memcpy(block + EROFS_SUPER_OFFSET + build_super_size(b), b->sb_tail, b->sb_tail_size);
	if (b->feature_compat & EROFS_COMPAT_SB_CHKSUM)
		put_le32(block + EROFS_SUPER_OFFSET + 4,
			 fmt_super_checksum(block + EROFS_SUPER_OFFSET, span));
	ret = writer_pwrite_unhashed(b->w, 0, block, head, b->err);
	free(block);
	return ret;
}

/*
 * Where an area's records are encoded: a window of it, written to the
 * image as the records move past (the plain area), or all of it, kept
 * (the metabox's, compressed afterwards).  The plain area holds every
 * inode, and inline tails of up to a block each: whole in memory, a
 * tar of 24,000 small files took 58 MB for it.
 */
#define AREA_WINDOW (1u << 20)

struct area_window {
	uint8_t *buf;            /* zeroed past what records wrote */
	size_t cap;
	uint64_t start;          /* the area offset of buf[0] */
	uint64_t image_off;      /* the area's place in the image */
	bool keep;               /* the whole area, nothing written */
};

/* Write [start, upto) out (zeros past the buffer); the window then
 * starts at upto. */
static int window_flush(struct build *b, struct area_window *w, uint64_t upto)
{
	while (w->start < upto) {
		size_t len = upto - w->start < w->cap ? (size_t)(upto - w->start) : w->cap;
		int ret = writer_pwrite(b->w, w->image_off + w->start, w->buf, len, b->err);

		if (ret)
			return ret;
		memset(w->buf, 0, len);
		w->start += len;
	}
	return 0;
}

/* The bytes at area offset off, len of them, in the window.  Records come
 * in ascending order, so all before off are final when it does not fit. */
static int window_at(struct build *b, struct area_window *w, uint64_t off, size_t len,
		     uint8_t **out)
{
	int ret;

	if (off + len > w->start + w->cap) {
		if (!w->keep) {
			ret = window_flush(b, w, off);
			if (ret)
				return ret;
		}
		if (off + len > w->start + w->cap) {
			size_t cap = (size_t)(off + len - w->start);
			uint8_t *g = realloc(w->buf, cap);

			if (!g)
				return err_fail(b->err, -ENOMEM,
						"out of memory for %zu bytes of metadata", cap);
			memset(g + w->cap, 0, cap - w->cap);
			w->buf = g;
			w->cap = cap;
		}
	}
	*out = w->buf + (off - w->start);
	return 0;
}

static int by_nid(const void *pa, const void *pb)
{
	const struct tnode *a = *(struct tnode *const *)pa, *c = *(struct tnode *const *)pb;

	return a->nid < c->nid ? -1 : a->nid > c->nid;
}

/* One area's inodes, in nid order (records fill earlier gaps, so list
 * order is not offset order). */
static int area_inodes(struct build *b, bool metabox, struct tnode ***out, size_t *count)
{
	struct tnode *n, **v;
	size_t k = 0;

	for (n = b->tree.first; n; n = n->next)
		k += n->in_metabox == metabox;
	v = malloc((k ? k : 1) * sizeof(*v));
	if (!v)
		return err_fail(b->err, -ENOMEM, "out of memory");
	k = 0;
	for (n = b->tree.first; n; n = n->next)
		if (n->in_metabox == metabox)
			v[k++] = n;
	qsort(v, k, sizeof(*v), by_nid);
	*out = v;
	*count = k;
	return 0;
}

/* One area's records (the metabox's, or the plain one's with the shared
 * xattrs) into w; directories write their blocks on the way, between the
 * window's writes: the image hash behind the default UUID needs only a
 * fixed order, which this is. */
static int encode_area(struct build *b, bool metabox, uint64_t size, struct area_window *w)
{
	uint64_t area = round_up_u64(size, b->blksz);
	struct tnode **order = NULL;
	uint8_t *at;
	size_t count = 0, i;
	int ret;

	w->cap = w->keep ? (size_t)area : AREA_WINDOW;
	if (w->cap < b->blksz)
		w->cap = b->blksz;
	w->buf = calloc(1, w->cap);
	w->start = 0;
	if (!w->buf)
		return err_fail(b->err, -ENOMEM, "out of memory for %zu bytes of metadata",
				w->cap);
	ret = area_inodes(b, metabox, &order, &count);
	if (!ret && !metabox && b->shared_xattr_size) {
		ret = window_at(b, w, 0, b->shared_xattr_size, &at);
		if (!ret)
			encode_shared_xattrs(b, at);
	}
	for (i = 0; i < count && !ret; i++) {
		ret = window_at(b, w, order[i]->nid * EROFS_SLOT_SIZE, order[i]->record_size, &at);
		if (!ret)
			ret = encode_inode(b, order[i], at);
	}
	/* Kept, the buffer spans the area already; written, the flush pads
	 * the last block with zeros. */
	if (!ret && !w->keep)
		ret = window_flush(b, w, area);
	free(order);
	if (ret || !w->keep) {
		free(w->buf);
		w->buf = NULL;
	}
	return ret;
}

int write_metadata(struct build *b)
{
	int ret = 0;

	if (b->lay.metabox) {
		struct area_window whole = { .keep = true };

		ret = encode_area(b, true, b->metabox_size, &whole);
		if (!ret) {
			ret = metabox_write(b, whole.buf, b->metabox_size);
			free(whole.buf);
		}
		if (!ret)
			ret = layout_plain_area(b);
		if (ret)
			return ret;
	}
	ret = encode_area(b, false, b->meta_size,
			  &(struct area_window){ .image_off = b->meta_blkaddr << b->blkszbits });
	if (!ret)
		ret = write_superblock(b);
	return ret;
}
