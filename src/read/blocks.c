/*
 * The bottom of the read path: raw bytes of the image, and metadata
 * (inodes, xattrs, directories, indexes) in the main address space or in
 * the metabox.  Every range is checked against the image before it is
 * read.
 */
#include <errno.h>
#include <string.h>

#include "read/blocks.h"
#include "read/cache.h"
#include "read/internal.h"

int image_read(ek_image *img, uint64_t off, void *buf, size_t len,
	       ek_error *err)
{
	int ret;

	if (off > img->size || len > img->size - off)
		return err_fail(err, -EUCLEAN,
			       "read of %zu bytes at offset %llu is past the end of the %llu-byte image",
			       len, (unsigned long long)off,
			       (unsigned long long)img->size);
	ret = img->io->ops->read(img->io, buf, len, off);
	if (ret)
		return err_fail(err, ret, "reading %zu bytes at image offset %llu: %s",
			       len, (unsigned long long)off, io_strerror(img->io, ret));
	return 0;
}

/*
 * Metadata (inodes, xattrs, directories, indexes) is read in many small
 * pieces, again and again: it goes through a cache of 4 KiB blocks, so that
 * a walk costs one read per block rather than one per field.
 */
#define META_BLOCK 4096u
#define META_KEY UINT64_MAX   /* cache key space apart from inodes */

static int cached_meta_read(ek_image *img, uint64_t off, uint8_t *buf,
			    size_t len, ek_error *err)
{
	if (off > img->size || len > img->size - off)
		return image_read(img, off, buf, len, err);   /* reports it */
	while (len > 0) {
		uint64_t blk = off / META_BLOCK, start = blk * META_BLOCK;
		size_t within = (size_t)(off - start);
		size_t n = len < META_BLOCK - within ? len : META_BLOCK - within;
		struct cache_entry *e = cache_get(img->metacache, META_KEY, blk);

		if (!e) {
			size_t avail = img->size - start < META_BLOCK ?
				       (size_t)(img->size - start) : META_BLOCK;
			int ret;

			e = cache_alloc(img->metacache, META_BLOCK);
			if (!e)
				return image_read(img, off, buf, len, err);
			ret = image_read(img, start, e->data, avail, err);
			if (ret) {
				cache_put(img->metacache, e);
				return ret;
			}
			memset(e->data + avail, 0, META_BLOCK - avail);
			cache_insert(img->metacache, e, META_KEY, blk);
		}
		memcpy(buf, e->data + within, n);
		cache_put(img->metacache, e);
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

int meta_read(ek_image *img, bool in_metabox, uint64_t off, void *buf,
	      size_t len, ek_error *err)
{
	if (!in_metabox)
		return img->metacache ? cached_meta_read(img, off, buf, len, err)
				      : image_read(img, off, buf, len, err);
	if (off > img->metabox_size || len > img->metabox_size - off)
		return err_fail(err, -EUCLEAN,
			       "metadata at offset %llu (+%zu) is past the end of the %llu-byte metabox",
			       (unsigned long long)off, len,
			       (unsigned long long)img->metabox_size);
	memcpy(buf, img->metabox + off, len);
	return 0;
}
