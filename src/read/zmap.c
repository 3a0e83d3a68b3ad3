/* Compressed files: not readable yet (the compression issue adds them). */
#include <errno.h>

#include "read/internal.h"

int zmap_init(ek_inode *inode, ek_error *err)
{
	(void)inode;
	(void)err;
	return 0;
}

int zmap_map(ek_inode *inode, uint64_t offset, ek_extent *out, ek_error *err)
{
	(void)offset;
	(void)out;
	return ek_fail(err, -EOPNOTSUPP, "inode %llu: compressed files are not supported yet",
		       (unsigned long long)inode->nid);
}

int zdata_read(ek_inode *inode, void *buf, size_t len, uint64_t off,
	       ek_error *err)
{
	(void)buf;
	(void)len;
	(void)off;
	return ek_fail(err, -EOPNOTSUPP, "inode %llu: compressed files are not supported yet",
		       (unsigned long long)inode->nid);
}

int fragment_read(ek_image *img, uint64_t off, void *buf, size_t len,
		  ek_error *err)
{
	(void)img;
	(void)off;
	(void)buf;
	(void)len;
	return ek_fail(err, -EOPNOTSUPP, "fragments are not supported yet");
}

void fragment_cache_free(struct fragment_cache *fc)
{
	(void)fc;
}
