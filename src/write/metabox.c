/*
 * The metabox (METABOX, Linux 6.17+): the inode records of an image, with
 * their xattrs, indexes and inline data, as the data of one more inode,
 * compressed like a file.  On the tree of 13,924 small files (with
 * -Eall-fragments) that data is 5.1 MB: some 3.5 MB inline tails of files
 * that were compressed already (.gz), the rest records, padding and
 * names, which compress well; lz4hc stores the whole in 61%.  A reader
 * decompresses a cluster of it to reach an inode, so its cluster size
 * (-m) trades space against the cost of a cold lookup.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write/internal.h"
#include "write/compress.h"
#include "format/ondisk.h"
#include "util/error.h"
#include "util/fdio.h"
#include "util/path.h"

int metabox_write(struct build *b, const uint8_t *records, uint64_t size)
{
	struct tnode *n = tree_new_inode(&b->tree);
	int fd, ret;

	if (!n)
		return err_fail(b->err, -ENOMEM, "out of memory");
	/* A regular file no directory names, like the packed inode. */
	n->mode = S_IFREG | 0644;
	n->nlink = 1;
	n->size = size;
	n->mtime = b->epoch;
	n->mtime_nsec = b->fixed_nsec;
	n->serial = (uint32_t)b->tree.ninodes;
	n->src_path = strdup("the metabox's data");
	if (!n->src_path)
		return err_fail(b->err, -ENOMEM, "out of memory");
	b->metabox_inode = n;
	b->stats->files++;
	fd = path_scratch_file(NULL);
	if (fd < 0)
		return err_fail(b->err, -errno, "cannot create a temporary file for the metabox: %s",
			       strerror(errno));
	ret = fd_pwrite_full(fd, records, (size_t)size, 0);
	if (ret)
		err_fail(b->err, ret, "writing the metabox's data to a temporary file: %s",
			 strerror(-ret));
	else
		ret = zbuild_metabox(b, n, fd);
	close(fd);
	if (!ret)
		b->feature_incompat |= EROFS_INCOMPAT_METABOX;
	return ret;
}
