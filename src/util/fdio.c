#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fdio.h"

static int full_io(int fd, char *p, size_t len, uint64_t off, bool write)
{
	while (len) {
		ssize_t n = write ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int fd_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	return full_io(fd, buf, len, off, false);
}

int fd_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	return full_io(fd, (char *)buf, len, off, true);
}

int64_t fd_remaining(int fd)
{
	struct stat st;
	off_t at = lseek(fd, 0, SEEK_CUR);

	if (at < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < at)
		return -1;
	return (int64_t)(st.st_size - at);
}
