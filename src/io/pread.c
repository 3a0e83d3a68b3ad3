/* Buffered pread(2) back end. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"
#include "util/error.h"

struct pread_io {
	struct io base;
	int fd;
};

static int pread_read(struct io *io, void *buf, size_t len, uint64_t off)
{
	struct pread_io *p = (struct pread_io *)io;
	char *dst = buf;

	while (len > 0) {
		ssize_t n = pread(p->fd, dst, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;  /* the file shrank under us */
		dst += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

void io_read_batch_serial(struct io *io, struct io_req *reqs,
			     size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		reqs[i].result = io->ops->read(io, reqs[i].buf, reqs[i].len,
					       reqs[i].offset);
}

#define RUN_MAX 64   /* iovecs per preadv */

/* Requests that follow each other in the image (a readahead batch of
 * small pclusters, mostly) are read with one preadv each run: at 4 KiB
 * clusters that is one system call instead of dozens.  A short or failed
 * run is read again request by request, for exact per-request results. */
static void pread_read_batch(struct io *io, struct io_req *reqs, size_t n)
{
	struct pread_io *p = (struct pread_io *)io;
	struct iovec iov[RUN_MAX];
	size_t i = 0, k, run;

	while (i < n) {
		uint64_t want = reqs[i].len;
		ssize_t got;

		for (run = 1; i + run < n && run < RUN_MAX &&
			      reqs[i + run].offset == reqs[i + run - 1].offset + reqs[i + run - 1].len;
		     run++)
			want += reqs[i + run].len;
		for (k = 0; k < run; k++)
			iov[k] = (struct iovec){ reqs[i + k].buf, reqs[i + k].len };
		got = run > 1 ? preadv(p->fd, iov, (int)run, (off_t)reqs[i].offset) : -1;
		for (k = 0; k < run; k++)
			reqs[i + k].result = got == (ssize_t)want
				? 0 : pread_read(io, reqs[i + k].buf, reqs[i + k].len, reqs[i + k].offset);
		i += run;
	}
}

/* The page cache reads ahead on its own only up to the device's window,
 * smaller than a readahead batch of big pclusters. */
static void pread_prefetch(struct io *io, uint64_t offset, uint64_t len)
{
	struct pread_io *p = (struct pread_io *)io;

	if (offset < io->size) {
		if (len > io->size - offset)
			len = io->size - offset;
		(void)posix_fadvise(p->fd, (off_t)offset, (off_t)len, POSIX_FADV_WILLNEED);
	}
}

static void pread_close(struct io *io)
{
	struct pread_io *p = (struct pread_io *)io;

	close(p->fd);
	free(p);
}

static const struct io_ops pread_ops = {
	.read = pread_read,
	.read_batch = pread_read_batch,
	.prefetch = pread_prefetch,
	.close = pread_close,
};

int io_open_pread(const char *path, struct io **out, ek_error *err)
{
	struct pread_io *p;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return err_fail(err, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return err_fail(err, -e, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		close(fd);
		return err_fail(err, -EINVAL, "%s: not a regular file or block device", path);
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	p->fd = fd;
	p->base.ops = &pread_ops;
	p->base.name = "pread";
	if (S_ISBLK(st.st_mode)) {
		off_t end = lseek(fd, 0, SEEK_END);

		p->base.size = end > 0 ? (uint64_t)end : 0;
	} else {
		p->base.size = (uint64_t)st.st_size;
	}
	*out = &p->base;
	return 0;
}
