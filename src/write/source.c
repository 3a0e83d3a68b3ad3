/* Source files: open, positional reads, change detection. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write/internal.h"
#include "write/source.h"
#include "util/error.h"

int source_open(struct build *b, const struct tnode *n, int *fd)
{
	struct stat st;

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

int source_pread(struct build *b, const struct tnode *n, int fd, void *buf,
		 size_t len, uint64_t off)
{
	char *p = buf;

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

int source_check_unchanged(struct build *b, const struct tnode *n, int fd)
{
	struct stat st;
	char c;
	ssize_t got;

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
