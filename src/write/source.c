/* Source files: open, positional reads, change detection; a directory's
 * files, a stream's in the spool, or a source image's. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write/imagesource.h"
#include "write/internal.h"
#include "write/source.h"
#include "util/error.h"

static bool from_image(const struct tnode *n)
{
	return n->src_dev == IMAGE_SOURCE_DEV && !n->spooled;
}

int source_open(struct build *b, const struct tnode *n, int *fd)
{
	struct stat st;

	/* The build's own copy: nothing can change it, and every read is
	 * positional, so all share the spool's descriptor (a dup and a
	 * close per file were 8% of the profile of a tar of 120,000 small
	 * files). */
	if (n->spooled) {
		*fd = b->spool_fd;
		return 0;
	}
	/* Read through the library: no descriptor, and nothing to change. */
	if (from_image(n)) {
		*fd = -1;
		return 0;
	}

	*fd = open(n->src_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (*fd < 0)
		return err_fail(b->err, -errno, "%s: cannot open: %s", n->src_path,
			       strerror(errno));
	if (fstat(*fd, &st) < 0) {
		int e = errno;

		close(*fd);
		return err_fail(b->err, -e, "%s: %s", n->src_path, strerror(e));
	}
	if (!S_ISREG(st.st_mode) || st.st_ino != n->src_ino ||
	    st.st_dev != n->src_dev || (uint64_t)st.st_size != n->size) {
		close(*fd);
		return err_fail(b->err, -ESTALE,
			       "%s: changed while the image was being built (was %llu bytes, now %lld)",
			       n->src_path, (unsigned long long)n->size,
			       (long long)st.st_size);
	}
	return 0;
}

void source_close(struct build *b, int fd)
{
	if (fd >= 0 && fd != b->spool_fd)
		close(fd);
}

int source_pread(struct build *b, const struct tnode *n, int fd, void *buf,
		 size_t len, uint64_t off)
{
	char *p = buf;

	if (from_image(n))
		return image_source_pread(b, n, buf, len, off);
	if (n->spooled)
		off += n->spool_off;
	while (len > 0) {
		ssize_t got = pread(fd, p, len, (off_t)off);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return err_fail(b->err, -errno, "%s: read error at offset %llu: %s",
				       n->src_path, (unsigned long long)off, strerror(errno));
		}
		if (got == 0)
			return err_fail(b->err, -ESTALE,
				       "%s: shrank while being read (ends before offset %llu of %llu)",
				       n->src_path, (unsigned long long)off,
				       (unsigned long long)n->size);
		p += got;
		off += (uint64_t)got;
		len -= (size_t)got;
	}
	return 0;
}

/* Spans start on page boundaries, so that whole pages are given back. */
#define SPOOL_ALIGN 4096u

uint64_t source_spool_span(const struct tnode *n)
{
	return (n->size + SPOOL_ALIGN - 1) / SPOOL_ALIGN * SPOOL_ALIGN;
}

/* Holes are punched a run of spans at a time: one call per small file was
 * 7% of the profile of a tar of 120,000 of them.  The spool holds at most
 * this much beyond what is in flight. */
#define PUNCH_RUN (4ull << 20)

static void punch(struct build *b)
{
	/* Where holes cannot be punched the spool just grows. */
	if (b->unpunched_to > b->unpunched_from && b->spool_fd >= 0)
		(void)fallocate(b->spool_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)b->unpunched_from,
				(off_t)(b->unpunched_to - b->unpunched_from));
	b->unpunched_from = b->unpunched_to = 0;
}

void source_release(struct build *b, const struct tnode *n)
{
	uint64_t len = source_spool_span(n);

	if (!len)
		return;
	/* Files mostly leave in the order they came: their spans join. */
	if (n->spool_off != b->unpunched_to || b->unpunched_to == b->unpunched_from) {
		punch(b);
		b->unpunched_from = n->spool_off;
	}
	b->unpunched_to = n->spool_off + len;
	if (b->unpunched_to - b->unpunched_from >= PUNCH_RUN)
		punch(b);
}

int source_check_unchanged(struct build *b, const struct tnode *n, int fd)
{
	struct stat st;
	char c;
	ssize_t got;

	if (n->spooled || from_image(n))
		return 0;
	if (fstat(fd, &st) < 0)
		return err_fail(b->err, -errno, "%s: %s", n->src_path, strerror(errno));
	do {
		got = pread(fd, &c, 1, (off_t)n->size);
	} while (got < 0 && errno == EINTR);
	if ((uint64_t)st.st_size != n->size || got > 0)
		return err_fail(b->err, -ESTALE,
			       "%s: changed size while being read (%llu bytes when scanned, %lld now)",
			       n->src_path, (unsigned long long)n->size,
			       (long long)st.st_size);
	return 0;
}

int64_t source_seek(struct build *b, const struct tnode *n, int fd, uint64_t pos, int whence)
{
	off_t at;

	if (from_image(n))
		return image_source_seek(b, n, pos, whence);
	at = lseek(fd, (off_t)pos, whence);
	if (at >= 0)
		return at;
	if (errno == ENXIO)
		return -ENXIO;
	return err_fail(b->err, -errno, "%s: %s: %s", n->src_path,
			whence == SEEK_DATA ? "SEEK_DATA" : "SEEK_HOLE", strerror(errno));
}
