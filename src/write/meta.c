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
		return n->chunks->chunkbits - b->blkszbits;
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

static int encode_inode(struct build *b, struct tnode *n, uint8_t *meta)
{
	uint8_t *rec = meta + n->nid * EROFS_SLOT_SIZE;
	uint8_t *tail = rec + tnode_core_size(n) + n->xattr_size;
	uint64_t i;

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
		for (i = 0; i < n->chunks->count; i++)
			put_le32(tail + 4 * i, n->chunks->blocks[i]);
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
		 * distinct images (an RFC 9562 version 8 UUID). */
		writer_digest(b->w, sb.uuid);
		sb.uuid[6] = (uint8_t)((sb.uuid[6] & 0x0F) | 0x80);
		sb.uuid[8] = (uint8_t)((sb.uuid[8] & 0x3F) | 0x80);
	}
	memcpy(sb.volume_name, b->o.label, strnlen(b->o.label, 15));
	sb.u1 = b->z ? zbuild_sb_u1(b) : 0;
	if (b->packed_inode)
		sb.packed_nid = b->packed_inode->nid;
	fmt_super_encode(&sb, block + EROFS_SUPER_OFFSET);
	memcpy(block + EROFS_SUPER_OFFSET + build_super_size(b), b->sb_tail, b->sb_tail_size);
	put_le32(block + EROFS_SUPER_OFFSET + 4,
		 fmt_super_checksum(block + EROFS_SUPER_OFFSET, span));
	ret = writer_pwrite_unhashed(b->w, 0, block, head, b->err);
	free(block);
	return ret;
}

/* One area's records (the metabox's, or the plain one's with the shared
 * xattrs) into a zeroed buffer of whole blocks; directories write their
 * blocks on the way. */
static int encode_area(struct build *b, bool metabox, uint64_t size, uint8_t **out)
{
	uint64_t area = round_up_u64(size, b->blksz);
	uint8_t *buf = calloc(1, area ? area : 1);
	struct tnode *n;
	int ret = 0;

	if (!buf)
		return err_fail(b->err, -ENOMEM, "out of memory for %llu bytes of metadata",
			       (unsigned long long)area);
	if (!metabox && b->shared_xattr_size)
		encode_shared_xattrs(b, buf);
	for (n = b->tree.first; n && !ret; n = n->next)
		if (n->in_metabox == metabox)
			ret = encode_inode(b, n, buf);
	if (ret)
		free(buf);
	else
		*out = buf;
	return ret;
}

int write_metadata(struct build *b)
{
	uint8_t *meta;
	int ret = 0;

	if (b->lay.metabox) {
		ret = encode_area(b, true, b->metabox_size, &meta);
		if (!ret) {
			ret = metabox_write(b, meta, b->metabox_size);
			free(meta);
		}
		if (!ret)
			ret = layout_plain_area(b);
		if (ret)
			return ret;
	}
	/* Metadata is written before the directory blocks in hash order:
	 * encode_inode wrote directory blocks already, but the hash only
	 * needs a fixed order, which this is. */
	ret = encode_area(b, false, b->meta_size, &meta);
	if (ret)
		return ret;
	ret = writer_pwrite(b->w, b->meta_blkaddr << b->blkszbits, meta,
			    round_up_u64(b->meta_size, b->blksz), b->err);
	free(meta);
	if (!ret)
		ret = write_superblock(b);
	return ret;
}
