/* File data of the uncompressed layouts: flat plain, flat inline (tail
 * after the inode) and chunk based. */
#include <errno.h>
#include <string.h>

#include "read/blocks.h"
#include "read/internal.h"
#include "read/plain.h"
#include "util/error.h"

/* Map a chunk: sets *hole or *phys (byte offset of the chunk's start). */
static int chunk_lookup(ek_inode *inode, uint64_t chunk, bool *hole,
			uint64_t *phys, ek_error *err)
{
	ek_image *img = inode->img;
	uint8_t ent[8];
	uint64_t blk;
	uint16_t device = 0;
	int ret;

	ret = meta_read(img, inode->in_metabox,
			inode->chunk_table_off + chunk * inode->chunk_unit, ent,
			inode->chunk_unit, err);
	if (ret) {
		err_prefix(err, "inode %llu: chunk %llu index: ",
				(unsigned long long)inode->nid,
				(unsigned long long)chunk);
		return ret;
	}
	if (inode->chunk_unit == 4) {
		blk = get_le32(ent);
		*hole = blk == EROFS_NULL_ADDR;
	} else {
		bool wide = inode->raw.u & EROFS_CHUNK_48BIT;

		blk = get_le32(ent + 4);
		device = get_le16(ent + 2);
		if (wide)
			blk |= (uint64_t)get_le16(ent) << 32;
		*hole = wide ? blk == 0xFFFFFFFFFFFFull : blk == EROFS_NULL_ADDR;
	}
	if (*hole)
		return 0;
	{
		/* Readers mask the id with the next power of two of the device
		 * count minus one (so with no extra devices, id 0 always). */
		unsigned int mask = 1;

		while (mask < img->ndevices + 1u)
			mask <<= 1;
		device &= (uint16_t)(mask - 1);
	}
	if (device) {
		if (device > img->ndevices)
			return err_fail(err, -EUCLEAN,
				       "inode %llu: chunk %llu refers to missing device %u",
				       (unsigned long long)inode->nid,
				       (unsigned long long)chunk, device);
		/* Flat mode: extra devices are concatenated at uniaddr. */
		blk += img->devices[device - 1].uniaddr;
	}
	{
		/* The chunk's bytes of the file must lie in the image: its map
		 * is believed by readers that stop at the map (ek_map). */
		uint64_t logical = chunk << inode->chunkbits;
		uint64_t bytes = inode->raw.size - logical < (1ull << inode->chunkbits) ?
				 inode->raw.size - logical : 1ull << inode->chunkbits;

		if (blk > (img->size >> img->blkszbits) ||
		    bytes > img->size - (blk << img->blkszbits))
			return err_fail(err, -EUCLEAN,
					"inode %llu: chunk %llu at block %llu lies past the end of the %llu-byte image",
					(unsigned long long)inode->nid, (unsigned long long)chunk,
					(unsigned long long)blk, (unsigned long long)img->size);
	}
	*phys = blk << img->blkszbits;
	return 0;
}

static int chunked_read(ek_inode *inode, uint8_t *buf, size_t len,
			uint64_t off, ek_error *err)
{
	uint64_t chunksize = 1ull << inode->chunkbits;

	while (len > 0) {
		uint64_t chunk = off >> inode->chunkbits;
		uint64_t inchunk = off & (chunksize - 1);
		size_t n = len;
		uint64_t phys = 0;
		bool hole;
		int ret;

		if (n > chunksize - inchunk)
			n = (size_t)(chunksize - inchunk);
		ret = chunk_lookup(inode, chunk, &hole, &phys, err);
		if (ret)
			return ret;
		if (hole) {
			memset(buf, 0, n);
		} else {
			ret = image_read(inode->img, phys + inchunk, buf, n, err);
			if (ret) {
				err_prefix(err, "inode %llu: chunk %llu: ",
						(unsigned long long)inode->nid,
						(unsigned long long)chunk);
				return ret;
			}
		}
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

static int flat_read(ek_inode *inode, uint8_t *buf, size_t len, uint64_t off,
		     ek_error *err)
{
	ek_image *img = inode->img;
	uint64_t size = inode->raw.size;
	uint64_t inline_start = size; /* first byte served from metadata */
	int ret;

	if (inode->raw.layout == EROFS_LAYOUT_FLAT_INLINE && size)
		inline_start = (div_round_up_u64(size, img->blksz) - 1) * img->blksz;
	if (off < inline_start) {
		size_t n = len;

		if (n > inline_start - off)
			n = (size_t)(inline_start - off);
		if (inode->raw.startblk_null) {
			memset(buf, 0, n);
		} else {
			ret = image_read(img, (inode->raw.startblk << img->blkszbits) + off,
					 buf, n, err);
			if (ret) {
				err_prefix(err, "inode %llu: ",
						(unsigned long long)inode->nid);
				return ret;
			}
		}
		buf += n;
		off += n;
		len -= n;
	}
	if (len > 0) {
		ret = meta_read(img, inode->in_metabox,
				inode->data_off + (off - inline_start), buf, len, err);
		if (ret) {
			err_prefix(err, "inode %llu: inline data: ",
					(unsigned long long)inode->nid);
			return ret;
		}
	}
	return 0;
}

int plain_read(ek_inode *inode, void *buf, size_t len, uint64_t off,
	       ek_error *err)
{
	if (inode->raw.layout == EROFS_LAYOUT_CHUNK_BASED)
		return chunked_read(inode, buf, len, off, err);
	return flat_read(inode, buf, len, off, err);
}

int plain_map(ek_inode *inode, uint64_t offset, ek_extent *out, ek_error *err)
{
	ek_image *img = inode->img;
	uint64_t size = inode->raw.size;

	switch (inode->raw.layout) {
	case EROFS_LAYOUT_FLAT_PLAIN:
	case EROFS_LAYOUT_FLAT_INLINE: {
		uint64_t inline_start = size;

		if (inode->raw.layout == EROFS_LAYOUT_FLAT_INLINE)
			inline_start = (div_round_up_u64(size, img->blksz) - 1) * img->blksz;
		if (offset >= inline_start) {
			out->logical = inline_start;
			out->length = size - inline_start;
			out->kind = EK_EXTENT_PLAIN;
			out->in_metadata = 1;
			out->physical = inode->data_off;
			out->physical_length = out->length;
			return 0;
		}
		out->logical = 0;
		out->length = inline_start;
		out->kind = inode->raw.startblk_null ? EK_EXTENT_HOLE : EK_EXTENT_PLAIN;
		out->physical = inode->raw.startblk << img->blkszbits;
		out->physical_length = inline_start;
		return 0;
	}
	case EROFS_LAYOUT_CHUNK_BASED: {
		uint64_t chunk = offset >> inode->chunkbits;
		uint64_t phys = 0;
		bool hole;
		int ret = chunk_lookup(inode, chunk, &hole, &phys, err);

		if (ret)
			return ret;
		out->logical = chunk << inode->chunkbits;
		out->length = 1ull << inode->chunkbits;
		if (out->length > size - out->logical)
			out->length = size - out->logical;
		out->kind = hole ? EK_EXTENT_HOLE : EK_EXTENT_PLAIN;
		out->physical = phys;
		out->physical_length = out->length;
		return 0;
	}
	default:
		return err_fail(err, -EINVAL, "inode %llu: layout %u is not plain",
				(unsigned long long)inode->nid, inode->raw.layout);
	}
}
