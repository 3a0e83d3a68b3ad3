/*
 * The inline tails of files stored uncompressed: the last partial block of
 * a file, kept after its inode in the metadata, which is written last.
 * Until then they wait in memory, up to TAILS_IN_MEMORY; past that in an
 * unnamed file beside the image.  Each is at most a block, but there is
 * one per file: 24,000 small files that do not compress (a 78 MiB tar)
 * held 60 MiB of them, and mkfs --tar peaked at 145 MiB.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "write/internal.h"
#include "util/error.h"
#include "util/fdio.h"
#include "util/path.h"
#include "write/source.h"
#include "write/tails.h"

#define TAILS_IN_MEMORY (16u << 20)

/* n's tail to the tails file, from buf. */
static int spill(struct build *b, struct tnode *n, const uint8_t *buf)
{
	int ret;

	if (b->tails_fd < 0) {
		b->tails_fd = path_scratch_beside(b->image_path);
		if (b->tails_fd < 0)
			return err_fail(b->err, -errno, "cannot make a temporary file for inline data: %s",
					strerror(errno));
	}
	ret = fd_pwrite_full(b->tails_fd, buf, n->inline_size, b->tails_spilled);
	if (ret)
		return err_fail(b->err, ret, "writing inline data to a temporary file: %s",
				strerror(-ret));
	n->inline_spilled = true;
	n->inline_off = b->tails_spilled;
	b->tails_spilled += n->inline_size;
	return 0;
}

bool tail_fits_inline(const struct build *b, const struct tnode *n, uint64_t tail)
{
	return tail && b->lay.inline_data &&
	       tnode_core_size(n) + n->xattr_size + tail <= b->blksz;
}

int tail_read(struct build *b, struct tnode *n, int fd, uint64_t off)
{
	uint8_t *buf = malloc(n->inline_size ? n->inline_size : 1);
	int ret;

	if (!buf)
		return err_fail(b->err, -ENOMEM, "out of memory");
	ret = source_pread(b, n, fd, buf, n->inline_size, off);
	if (!ret && b->tails_in_memory + n->inline_size <= TAILS_IN_MEMORY) {
		b->tails_in_memory += n->inline_size;
		n->inline_data = buf;
		return 0;
	}
	if (!ret)
		ret = spill(b, n, buf);
	free(buf);
	return ret;
}

int tail_copy(struct build *b, const struct tnode *n, uint8_t *out)
{
	int ret;

	if (!n->inline_spilled) {
		memcpy(out, n->inline_data, n->inline_size);
		return 0;
	}
	ret = fd_pread_full(b->tails_fd, out, n->inline_size, n->inline_off);
	if (ret)
		return err_fail(b->err, ret, "reading inline data back from a temporary file: %s",
				strerror(-ret));
	return 0;
}

void tails_close(struct build *b)
{
	if (b->tails_fd >= 0)
		close(b->tails_fd);
	b->tails_fd = -1;
}
