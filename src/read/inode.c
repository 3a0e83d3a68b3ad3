/* Loading inodes: locate the record, decode the core, prepare the layout. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "read/blocks.h"
#include "read/internal.h"
#include "read/zmap.h"

/* st_ino as the kernel reports it: the nid, with metabox nids folded. */
static uint64_t nid_to_ino(ek_nid nid)
{
	if (!(nid & EROFS_NID_METABOX))
		return nid;
	return ((nid << 1) & 0xFFFFFFFF00000000ull) | (nid & 0x7FFFFFFFull) |
	       (1ull << 31);
}

static int locate(ek_image *img, ek_nid nid, ek_inode *inode, ek_error *err)
{
	uint64_t slot = nid;

	if ((nid & EROFS_NID_METABOX) &&
	    (img->sb.feature_incompat & EROFS_INCOMPAT_METABOX)) {
		inode->in_metabox = true;
		slot = nid & ~EROFS_NID_METABOX;
		if (slot > (UINT64_MAX >> EROFS_SLOT_BITS))
			return err_fail(err, -EUCLEAN, "inode %llu: nid out of range",
				       (unsigned long long)nid);
		inode->iloc = slot << EROFS_SLOT_BITS;
		return 0;
	}
	if (slot > (img->size >> EROFS_SLOT_BITS))
		return err_fail(err, -EUCLEAN, "inode %llu: nid points past the end of the image",
			       (unsigned long long)nid);
	inode->iloc = ((uint64_t)img->sb.meta_blkaddr << img->blkszbits) +
		      (slot << EROFS_SLOT_BITS);
	return 0;
}

static int prepare_flat(ek_inode *inode, ek_error *err)
{
	ek_image *img = inode->img;
	uint64_t size = inode->raw.size;
	uint64_t nblocks = div_round_up_u64(size, img->blksz);

	if (inode->raw.layout == EROFS_LAYOUT_FLAT_INLINE && size) {
		uint64_t tail = size - (nblocks - 1) * img->blksz;

		if ((inode->data_off & (img->blksz - 1)) + tail > img->blksz)
			return err_fail(err, -EUCLEAN,
				       "inode %llu: inline data (%llu bytes at offset %llu) crosses a block boundary",
				       (unsigned long long)inode->nid,
				       (unsigned long long)tail,
				       (unsigned long long)inode->data_off);
		nblocks--;
	}
	/* Full blocks must lie inside the image. */
	if (nblocks && !inode->raw.startblk_null) {
		uint64_t first = inode->raw.startblk;

		if (first > (img->size >> img->blkszbits) ||
		    nblocks > (img->size >> img->blkszbits) - first)
			return err_fail(err, -EUCLEAN,
				       "inode %llu: data blocks %llu..%llu lie past the end of the image",
				       (unsigned long long)inode->nid,
				       (unsigned long long)first,
				       (unsigned long long)(first + nblocks - 1));
	}
	return 0;
}

static int prepare_chunked(ek_inode *inode, ek_error *err)
{
	ek_image *img = inode->img;
	uint32_t format = inode->raw.u & 0xFFFFu;

	if (!(img->sb.feature_incompat & EROFS_INCOMPAT_CHUNKED_FILE))
		return err_fail(err, -EUCLEAN,
			       "inode %llu: chunk-based layout without the chunked_file feature",
			       (unsigned long long)inode->nid);
	inode->chunkbits = img->blkszbits + (format & EROFS_CHUNK_BITS_MASK);
	inode->chunk_unit = (format & EROFS_CHUNK_INDEXES) ? 8 : 4;
	inode->chunk_table_off = round_up_u64(inode->data_off, inode->chunk_unit);
	return 0;
}

static void fill_stat(ek_inode *inode)
{
	const struct fmt_inode *r = &inode->raw;
	ek_image *img = inode->img;
	ek_stat *st = &inode->st;

	st->nid = inode->nid;
	st->ino = nid_to_ino(inode->nid);
	st->mode = r->mode;
	st->uid = r->uid;
	st->gid = r->gid;
	st->nlink = r->nlink;
	st->size = r->size;
	st->mtime = r->mtime;
	st->mtime_nsec = r->mtime_nsec;
	st->rdev_major = r->rdev_major;
	st->rdev_minor = r->rdev_minor;
	if (layout_is_compressed(r->layout)) {
		uint64_t blocks = r->u;

		if (r->extended || r->format_bit4)
			blocks |= (uint64_t)r->nb << 32;
		st->blocks = blocks << (img->blkszbits - 9);
	} else {
		st->blocks = round_up_u64(r->size, img->blksz) >> 9;
	}
}

int inode_load(ek_image *img, ek_nid nid, ek_inode **out, ek_error *err)
{
	uint8_t core[EROFS_INODE_EXTENDED_SIZE];
	ek_inode *inode;
	fmt_why why;
	int ret;

	inode = calloc(1, sizeof(*inode));
	if (!inode)
		return err_fail(err, -ENOMEM, "out of memory");
	inode->img = img;
	inode->cache = img->cache;
	inode->nid = nid;
	atomic_init(&inode->refs, 1);
	ret = locate(img, nid, inode, err);
	if (ret)
		goto fail;
	ret = meta_read(img, inode->in_metabox, inode->iloc, core,
			EROFS_INODE_COMPACT_SIZE, err);
	if (!ret && fmt_inode_core_size(get_le16(core)) > EROFS_INODE_COMPACT_SIZE)
		ret = meta_read(img, inode->in_metabox,
				inode->iloc + EROFS_INODE_COMPACT_SIZE,
				core + EROFS_INODE_COMPACT_SIZE,
				EROFS_INODE_EXTENDED_SIZE - EROFS_INODE_COMPACT_SIZE,
				err);
	if (ret) {
		err_prefix(err, "inode %llu: ", (unsigned long long)nid);
		goto fail;
	}
	ret = fmt_inode_decode(core, &img->sb, &inode->raw, &why);
	if (ret) {
		err_fail(err, ret, "inode %llu: %s", (unsigned long long)nid, why.text);
		goto fail;
	}
	inode->xattr_off = inode->iloc + inode->raw.core_size;
	inode->data_off = inode->xattr_off + inode->raw.xattr_size;
	fill_stat(inode);

	if (S_ISLNK(inode->raw.mode) &&
	    (inode->raw.size == 0 || inode->raw.size > 4095)) {
		ret = err_fail(err, -EUCLEAN, "inode %llu: symlink length %llu not in 1..4095",
			      (unsigned long long)nid,
			      (unsigned long long)inode->raw.size);
		goto fail;
	}
	if (!S_ISREG(inode->raw.mode) && !S_ISDIR(inode->raw.mode) &&
	    !S_ISLNK(inode->raw.mode) && inode->raw.size) {
		ret = err_fail(err, -EUCLEAN, "inode %llu: special file with size %llu",
			      (unsigned long long)nid,
			      (unsigned long long)inode->raw.size);
		goto fail;
	}
	switch (inode->raw.layout) {
	case EROFS_LAYOUT_FLAT_PLAIN:
	case EROFS_LAYOUT_FLAT_INLINE:
		ret = S_ISCHR(inode->raw.mode) || S_ISBLK(inode->raw.mode) ?
		      0 : prepare_flat(inode, err);
		break;
	case EROFS_LAYOUT_CHUNK_BASED:
		ret = prepare_chunked(inode, err);
		break;
	default:
		ret = zmap_init(inode, err);
		break;
	}
	if (ret)
		goto fail;
	*out = inode;
	return 0;
fail:
	ek_inode_put(inode);
	return ret;
}

int ek_inode_get(ek_image *img, ek_nid nid, ek_inode **out, ek_error *err)
{
	return inode_load(img, nid, out, err);
}

ek_inode *inode_ref(ek_inode *inode)
{
	atomic_fetch_add(&inode->refs, 1);
	return inode;
}

void ek_inode_put(ek_inode *inode)
{
	if (inode && atomic_fetch_sub(&inode->refs, 1) == 1) {
		zmap_fini(inode);
		free(inode);
	}
}

const ek_stat *ek_inode_stat(const ek_inode *inode)
{
	return &inode->st;
}

ek_image *ek_inode_image(const ek_inode *inode)
{
	return inode->img;
}

void ek_inode_get_detail(const ek_inode *inode, ek_inode_detail *out)
{
	uint64_t nblocks;

	memset(out, 0, sizeof(*out));
	out->extended = inode->raw.extended;
	out->layout = inode->raw.layout;
	out->inode_offset = inode->iloc;
	out->xattr_size = inode->raw.xattr_size;
	out->raw_u = inode->raw.u;
	out->on_disk_ino = inode->raw.ino;
	out->dot_omitted = S_ISDIR(inode->raw.mode) && inode->raw.format_bit4;
	if (inode->raw.layout == EROFS_LAYOUT_FLAT_INLINE && inode->raw.size) {
		nblocks = div_round_up_u64(inode->raw.size, inode->img->blksz);
		out->inline_offset = inode->data_off;
		out->inline_size = (uint32_t)(inode->raw.size -
					      (nblocks - 1) * inode->img->blksz);
	}
}

int ek_stat_nid(ek_image *img, ek_nid nid, ek_stat *out, ek_error *err)
{
	ek_inode *inode;
	int ret = inode_load(img, nid, &inode, err);

	if (ret)
		return ret;
	*out = inode->st;
	ek_inode_put(inode);
	return 0;
}
