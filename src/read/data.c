/* File data of every layout: the public read entry points, and where a
 * read goes by layout (plain.c, zdata.c, fragment.c). */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/data.h"
#include "read/fragment.h"
#include "read/internal.h"
#include "read/plain.h"
#include "read/zdata.h"
#include "read/zmap.h"
#include "util/error.h"

/* Compressed files: zdata.c reads what is stored in the file's own
 * pclusters and stops at what lives in the packed inode. */
static int compressed_read(ek_inode *inode, uint8_t *buf, size_t len,
			   uint64_t off, ek_error *err)
{
	while (len > 0) {
		ek_extent e;
		size_t done, n;
		int ret = zdata_read(inode, buf, len, off, &done, err);

		if (ret)
			return ret;
		buf += done;
		off += done;
		len -= done;
		if (!len)
			break;
		ret = zmap_map(inode, off, &e, err);
		if (ret)
			return ret;
		if (e.kind != EK_EXTENT_FRAGMENT || off < e.logical ||
		    off - e.logical >= e.length)
			return err_fail(err, -EUCLEAN, "inode %llu: extent map moved at %llu",
					(unsigned long long)inode->nid, (unsigned long long)off);
		n = e.logical + e.length - off < len ? (size_t)(e.logical + e.length - off) : len;
		ret = fragment_read(inode->img, e.physical + (off - e.logical), buf, n, err);
		if (ret) {
			err_prefix(err, "inode %llu: fragment: ", (unsigned long long)inode->nid);
			return ret;
		}
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

int data_read(ek_inode *inode, void *buf, size_t len, uint64_t off,
	      ek_error *err)
{
	if (!len)
		return 0;
	if (off > inode->raw.size || len > inode->raw.size - off)
		return err_fail(err, -EINVAL, "inode %llu: read past end of file",
			       (unsigned long long)inode->nid);
	/* Bytes of an image found to be another than it was opened as are
	 * not served, not even from the caches of decoded data. */
	if (io_condemned(inode->img->io))
		return err_fail(err, -EIO, "inode %llu: %s", (unsigned long long)inode->nid,
				io_strerror(inode->img->io, -EIO));
	switch (inode->raw.layout) {
	case EROFS_LAYOUT_FLAT_PLAIN:
	case EROFS_LAYOUT_FLAT_INLINE:
	case EROFS_LAYOUT_CHUNK_BASED:
		return plain_read(inode, buf, len, off, err);
	default:
		return compressed_read(inode, buf, len, off, err);
	}
}

ssize_t ek_read(ek_inode *inode, void *buf, size_t len, uint64_t offset,
		ek_error *err)
{
	int ret;

	if (S_ISDIR(inode->raw.mode))
		return err_fail(err, -EISDIR, "inode %llu is a directory",
			       (unsigned long long)inode->nid);
	if (offset >= inode->raw.size)
		return 0;
	if (len > inode->raw.size - offset)
		len = (size_t)(inode->raw.size - offset);
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	ret = data_read(inode, buf, len, offset, err);
	return ret ? ret : (ssize_t)len;
}

ssize_t ek_readlink(ek_inode *inode, char *buf, size_t size, ek_error *err)
{
	size_t len = (size_t)inode->raw.size;
	int ret;

	if (!S_ISLNK(inode->raw.mode))
		return err_fail(err, -EINVAL, "inode %llu is not a symlink",
			       (unsigned long long)inode->nid);
	if (size < len + 1)
		return err_fail(err, -ERANGE, "inode %llu: symlink target needs %zu bytes",
			       (unsigned long long)inode->nid, len + 1);
	ret = data_read(inode, buf, len, 0, err);
	if (ret)
		return ret;
	buf[len] = '\0';
	if (memchr(buf, '\0', len))
		return err_fail(err, -EUCLEAN, "inode %llu: symlink target contains NUL",
			       (unsigned long long)inode->nid);
	return (ssize_t)len;
}

int ek_map(ek_inode *inode, uint64_t offset, ek_extent *out, ek_error *err)
{
	uint64_t size = inode->raw.size;
	int ret;

	memset(out, 0, sizeof(*out));
	if (offset >= size)
		return err_fail(err, -EINVAL, "inode %llu: offset %llu beyond size %llu",
			       (unsigned long long)inode->nid,
			       (unsigned long long)offset, (unsigned long long)size);
	switch (inode->raw.layout) {
	case EROFS_LAYOUT_FLAT_PLAIN:
	case EROFS_LAYOUT_FLAT_INLINE:
	case EROFS_LAYOUT_CHUNK_BASED:
		ret = plain_map(inode, offset, out, err);
		break;
	default:
		ret = zmap_map(inode, offset, out, err);
		break;
	}
	/* Callers walk a file extent by extent: a map that does not hold
	 * the offset (a damaged index) would have them loop forever. */
	if (!ret && (out->length == 0 || offset < out->logical ||
		     offset - out->logical >= out->length))
		return err_fail(err, -EUCLEAN,
				"inode %llu: the extent map at %llu gives [%llu, +%llu)",
				(unsigned long long)inode->nid, (unsigned long long)offset,
				(unsigned long long)out->logical,
				(unsigned long long)out->length);
	return ret;
}

int64_t ek_seek(ek_inode *inode, uint64_t offset, int whence, ek_error *err)
{
	uint64_t size = inode->raw.size;
	bool want_hole = whence == SEEK_HOLE;

	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return err_fail(err, -EINVAL, "inode %llu: seek: whence %d is neither "
				"SEEK_DATA nor SEEK_HOLE", (unsigned long long)inode->nid, whence);
	if (offset >= size)
		return err_fail(err, -ENXIO, "inode %llu: seek from %llu, at or past the end",
				(unsigned long long)inode->nid, (unsigned long long)offset);
	/* ek_map moves on at every step (it refuses a map that would not). */
	while (offset < size) {
		ek_extent e;
		int ret = ek_map(inode, offset, &e, err);

		if (ret)
			return ret;
		if ((e.kind == EK_EXTENT_HOLE) == want_hole)
			return (int64_t)offset;
		offset = e.logical + e.length;
	}
	if (want_hole)
		return (int64_t)size;
	return err_fail(err, -ENXIO, "inode %llu: no data after the offset",
			(unsigned long long)inode->nid);
}
