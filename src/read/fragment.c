/*
 * The packed inode: fragments (file tails, whole small files) of many files
 * live in its data, so its extents are read again and again, by every
 * worker.  They go through a cache of decoded extents like any file's on a
 * mount: the image's when it has one, else a small one of its own (fsck,
 * extraction), in which each extent is decoded once, by one thread, while
 * other threads decode others.  (Decoding the whole packed inode up front
 * held all of it in memory and decoded it on one thread while the others
 * waited: on a root filesystem's image, extraction with two workers took
 * 17-41% longer and 65 MiB more.)
 */
#include <errno.h>
#include <sys/stat.h>

#include "read/cache.h"
#include "read/fragment.h"
#include "read/internal.h"
#include "read/plain.h"
#include "read/zdata.h"
#include "util/error.h"

/* Room for the extents a few workers are reading, at the biggest
 * clusters; a shard holds the biggest decoded extent worth keeping. */
#define PACKED_CACHE_BYTES (32u << 20)
#define PACKED_CACHE_SHARD (8u << 20)

int fragment_setup(ek_image *img, ek_error *err)
{
	ek_inode *p = img->packed;

	if (img->cache || !layout_is_compressed(p->raw.layout)) {
		p->cache = img->cache;
		return 0;
	}
	return cache_create(PACKED_CACHE_BYTES, PACKED_CACHE_SHARD, &p->cache, err);
}

void fragment_teardown(ek_image *img)
{
	if (img->packed && img->packed->cache != img->cache)
		cache_destroy(img->packed->cache);
}

int fragment_read(ek_image *img, uint64_t off, void *buf, size_t len,
		  ek_error *err)
{
	ek_inode *p = img->packed;
	size_t done;
	uint64_t size;
	int ret;

	if (!p)
		return err_fail(err, -EUCLEAN, "fragment without a packed inode");
	if (!S_ISREG(p->st.mode))
		return err_fail(err, -EUCLEAN, "packed inode %llu is not a regular file",
			       (unsigned long long)p->nid);
	size = p->st.size;
	if (off > size || len > size - off)
		return err_fail(err, -EUCLEAN,
			       "fragment at %llu (+%zu) lies past the end of the %llu-byte packed inode",
			       (unsigned long long)off, len, (unsigned long long)size);
	/* Its own bytes are its pclusters' (or plain blocks'): a fragment
	 * extent inside it would have it read itself. */
	if (!layout_is_compressed(p->raw.layout))
		return plain_read(p, buf, len, off, err);
	ret = zdata_read(p, buf, len, off, &done, err);
	if (!ret && done < len)
		ret = err_fail(err, -EUCLEAN, "packed inode %llu has a fragment of its own at %llu",
			       (unsigned long long)p->nid, (unsigned long long)(off + done));
	return ret;
}
