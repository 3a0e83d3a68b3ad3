/*
 * Copying a source file's bytes into the image's data blocks, through
 * the caller's buffer of COPY_BUF bytes (shared by data.c and
 * chunks.c).
 */
#include <errno.h>
#include <string.h>

#include "write/internal.h"
#include "write/source.h"
#include "util/cancel.h"
#include "util/error.h"

/* buf has room for the padding: COPY_BUF is a multiple of any block. */
static int put_blocks(struct build *b, struct writer *w, uint8_t *buf, size_t len,
		      uint64_t dst)
{
	size_t padded = (size_t)round_up_u64(len, b->blksz);

	memset(buf + len, 0, padded - len);
	return writer_pwrite(w, dst, buf, padded, b->err);
}

int copy_range_to(struct build *b, struct tnode *n, int fd, uint8_t *buf,
		  uint64_t off, uint64_t len, struct writer *w, uint64_t *blk)
{
	uint64_t dst = *blk << b->blkszbits;
	uint64_t done = 0;

	while (done < len) {
		size_t want = len - done < COPY_BUF ? (size_t)(len - done) : COPY_BUF;
		int ret;

		/* A large file is copied in many pieces: a stop request is
		 * seen between them, not only when the file is done. */
		if (cancel_requested(b->o.cancel))
			return err_fail(b->err, -ECANCELED, CANCEL_MESSAGE);
		ret = source_pread(b, n, fd, buf, want, off + done);

		if (!ret)
			ret = put_blocks(b, w, buf, want, dst + done);
		if (ret)
			return ret;
		done += want;
		build_progress(b, want);
	}
	*blk += div_round_up_u64(len, b->blksz);
	return 0;
}

int copy_range(struct build *b, struct tnode *n, int fd, uint8_t *buf,
	       uint64_t off, uint64_t len)
{
	return copy_range_to(b, n, fd, buf, off, len, b->w, &b->data_blk);
}
