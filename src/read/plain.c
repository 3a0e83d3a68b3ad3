/* File data of the uncompressed layouts: flat plain, flat inline (tail
 * after the inode) and chunk based. */
#include <errno.h>
#include <string.h>

#include "read/blocks.h"
#include "read/internal.h"
#include "read/plain.h"
#include "util/error.h"

/* Longest run of null chunks one map returns: sparse files are walked
 * (SEEK_DATA, reads of holes) a run at a time, each map call bounded. */
#define HOLE_RUN_MAX 4096u
/* Index entries read at a time while joining a run. */
#define ENTRY_BATCH 64u

/* A chunk index entry: a hole, or the block its chunk starts at and the
 * device that block is on. */
static bool chunk_entry_decode(const ek_inode *inode, const uint8_t *ent,
			       uint64_t *blk, uint16_t *device)
{
	bool wide = inode->raw.u & EROFS_CHUNK_48BIT;

	*device = 0;
	if (inode->chunk_unit == 4) {
		*blk = get_le32(ent);
		return *blk == EROFS_NULL_ADDR;
	}
	*blk = get_le32(ent + 4);
	*device = get_le16(ent + 2);
	if (wide)
		*blk |= (uint64_t)get_le16(ent) << 32;
	return wide ? *blk == 0xFFFFFFFFFFFFull : *blk == EROFS_NULL_ADDR;
}

static int chunk_entries_read(ek_inode *inode, uint64_t first, unsigned int count,
			      uint8_t *ent, ek_error *err)
{
	int ret = meta_read(inode->img, inode->in_metabox,
			    inode->chunk_table_off + first * inode->chunk_unit, ent,
			    (size_t)count * inode->chunk_unit, err);

	if (ret)
		err_prefix(err, "inode %llu: chunk %llu index: ",
			   (unsigned long long)inode->nid, (unsigned long long)first);
	return ret;
}

/* Map a chunk: sets *hole or *phys (byte offset of the chunk's start). */
static int chunk_lookup(ek_inode *inode, uint64_t chunk, bool *hole,
			uint64_t *phys, ek_error *err)
{
	ek_image *img = inode->img;
	uint8_t ent[8];
	uint64_t blk, logical, bytes;
	uint16_t device;
	int ret = chunk_entries_read(inode, chunk, 1, ent, err);

	if (ret)
		return ret;
	*hole = chunk_entry_decode(inode, ent, &blk, &device);
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
	/* The chunk's bytes of the file must lie in the image (and the
	 * device): its map is believed by readers that stop at the map
	 * (ek_map). */
	logical = chunk << inode->chunkbits;
	bytes = inode->raw.size - logical < (1ull << inode->chunkbits) ?
		inode->raw.size - logical : 1ull << inode->chunkbits;
	if (device) {
		const struct device_slot *d;

		if (device > img->ndevices)
			return err_fail(err, -EUCLEAN,
				       "inode %llu: chunk %llu refers to missing device %u",
				       (unsigned long long)inode->nid,
				       (unsigned long long)chunk, device);
		d = &img->devices[device - 1];
		if (d->span && (blk > d->span >> img->blkszbits ||
				bytes > d->span - (blk << img->blkszbits)))
			return err_fail(err, -EUCLEAN,
					"inode %llu: chunk %llu at block %llu lies past the end of extra device %u (%llu bytes)",
					(unsigned long long)inode->nid, (unsigned long long)chunk,
					(unsigned long long)blk, device, (unsigned long long)d->span);
		blk += d->base;
		/* It must lie where img->io reads: in the image file (flat),
		 * or in the device's own file (routed, which span checked). */
		if (!d->base || blk > (img->size >> img->blkszbits) ||
		    bytes > img->size - (blk << img->blkszbits))
			return err_fail(err, -ENXIO,
					"inode %llu: chunk %llu lies on extra device %u%s%s%s, which the image file does not hold: its file must be given",
					(unsigned long long)inode->nid, (unsigned long long)chunk,
					device, d->tag[0] ? " ('" : "", d->tag, d->tag[0] ? "')" : "");
	}
	if (blk > (img->size >> img->blkszbits) ||
	    bytes > img->size - (blk << img->blkszbits))
		return err_fail(err, -EUCLEAN,
				"inode %llu: chunk %llu at block %llu lies past the end of the %llu-byte image",
				(unsigned long long)inode->nid, (unsigned long long)chunk,
				(unsigned long long)blk, (unsigned long long)img->size);
	*phys = blk << img->blkszbits;
	return 0;
}

/* How many null chunks follow `chunk` (itself one), up to max_run in all
 * and the file's last chunk. */
static int hole_run(ek_inode *inode, uint64_t chunk, uint64_t nchunks,
		    uint64_t max_run, uint64_t *run, ek_error *err)
{
	uint8_t ent[ENTRY_BATCH * 8];

	*run = 1;
	while (*run < max_run && chunk + *run < nchunks) {
		uint64_t left = nchunks - (chunk + *run);
		unsigned int count = left < ENTRY_BATCH ? (unsigned int)left : ENTRY_BATCH, i;
		int ret = chunk_entries_read(inode, chunk + *run, count, ent, err);

		if (ret)
			return ret;
		for (i = 0; i < count && *run < max_run; i++, (*run)++) {
			uint64_t blk;
			uint16_t device;

			if (!chunk_entry_decode(inode, ent + i * inode->chunk_unit, &blk, &device))
				return 0;
		}
	}
	return 0;
}

/* The extent of a chunk-based file at `offset`: one chunk of data, or the
 * run of null chunks from its chunk on, of at most max_run chunks. */
static int chunk_map(ek_inode *inode, uint64_t offset, uint64_t max_run,
		     ek_extent *out, ek_error *err)
{
	uint64_t size = inode->raw.size, chunk = offset >> inode->chunkbits;
	uint64_t nchunks = ((size - 1) >> inode->chunkbits) + 1, run = 1;
	uint64_t phys = 0;
	bool hole;
	int ret = chunk_lookup(inode, chunk, &hole, &phys, err);

	if (!ret && hole)
		ret = hole_run(inode, chunk, nchunks, max_run, &run, err);
	if (ret)
		return ret;
	out->logical = chunk << inode->chunkbits;
	out->length = run << inode->chunkbits;
	if (out->length > size - out->logical)
		out->length = size - out->logical;
	out->kind = hole ? EK_EXTENT_HOLE : EK_EXTENT_PLAIN;
	out->physical = phys;
	out->physical_length = out->length;
	return 0;
}

static int chunked_read(ek_inode *inode, uint8_t *buf, size_t len,
			uint64_t off, ek_error *err)
{
	while (len > 0) {
		/* A run of holes is joined only as far as the read goes. */
		uint64_t chunks = ((off + len - 1) >> inode->chunkbits) - (off >> inode->chunkbits) + 1;
		ek_extent e;
		size_t n = len;
		int ret = chunk_map(inode, off, chunks < HOLE_RUN_MAX ? chunks : HOLE_RUN_MAX, &e, err);

		if (ret)
			return ret;
		if (n > e.logical + e.length - off)
			n = (size_t)(e.logical + e.length - off);
		if (e.kind == EK_EXTENT_HOLE) {
			memset(buf, 0, n);
		} else {
			ret = image_read(inode->img, e.physical + (off - e.logical), buf, n, err);
			if (ret) {
				err_prefix(err, "inode %llu: chunk %llu: ",
						(unsigned long long)inode->nid,
						(unsigned long long)(off >> inode->chunkbits));
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
	case EROFS_LAYOUT_CHUNK_BASED:
		return chunk_map(inode, offset, HOLE_RUN_MAX, out, err);
	default:
		return err_fail(err, -EINVAL, "inode %llu: layout %u is not plain",
				(unsigned long long)inode->nid, inode->raw.layout);
	}
}
