/*
 * What every decode of a pcluster needs, whoever runs it (zdata.c reading
 * a file, zcache.c filling the cache): scratch buffers, where the stream
 * starts, and how a failure is reported.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "read/zdecode.h"

void *zbuf_new(void)
{
	return calloc(1, sizeof(struct zbuf));
}

void zbuf_free(void *p)
{
	struct zbuf *b = p;

	if (b) {
		free(b->in);
		free(b->out);
		free(b);
	}
}

int zbuf_grow(uint8_t **buf, size_t *cap, size_t need)
{
	/* Every caller fills the buffer after it grows, so the old bytes
	 * are not copied (realloc would).  At least doubled: reading an
	 * extent uncached a piece at a time (a packed inode's fragments,
	 * small reads of a big extent) wants a little more each time, and
	 * a fresh mapping per piece is faulted in again (under ASan, one
	 * fuzz input's 60 fragments of a 4.6 MiB extent: 4.3 s -> 0.8 s). */
	size_t grown = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;

	if (need <= *cap)
		return 0;
	if (grown < need)
		grown = need;
	free(*buf);
	*cap = 0;
	*buf = malloc(grown);
	if (!*buf)
		return -ENOMEM;
	*cap = grown;
	return 0;
}

/* Where the stream starts in a pcluster read into `in`: after the zero
 * padding, which is shorter than a block (0padding); legacy LZ4 images
 * without it start at once and decode as a prefix. */
int zdecode_stream_start(ek_inode *inode, const ek_extent *e, const uint8_t *in,
			size_t *skip, bool *legacy, ek_error *err)
{
	ek_image *img = inode->img;
	size_t scan;

	*skip = 0;
	*legacy = e->algorithm == EROFS_ALG_LZ4 &&
		  !(img->sb.feature_incompat & EROFS_INCOMPAT_ZERO_PADDING);
	if (*legacy)
		return 0;
	scan = e->physical_length < img->blksz ? (size_t)e->physical_length : img->blksz;
	while (*skip < scan && in[*skip] == 0)
		(*skip)++;
	if (*skip == scan)
		return err_fail(err, -EUCLEAN,
			       "inode %llu: pcluster at byte %llu of extent %llu starts with a block of zeros",
			       (unsigned long long)inode->nid, (unsigned long long)e->physical,
			       (unsigned long long)e->logical);
	return 0;
}

int zdecode_failed(ek_inode *inode, const ek_extent *e, int code,
			 const char *why, ek_error *err)
{
	return err_fail(err, code == -ENOMEM ? -ENOMEM : -EUCLEAN,
		       "inode %llu: extent at offset %llu (%llu bytes, %s pcluster at image byte %llu, %llu bytes): %s",
		       (unsigned long long)inode->nid, (unsigned long long)e->logical,
		       (unsigned long long)e->length, ek_algorithm_name(e->algorithm),
		       (unsigned long long)e->physical,
		       (unsigned long long)e->physical_length, why);
}
