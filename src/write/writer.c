/* Temporary image file: positional writes, hashing, atomic rename. */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "write/writer.h"
#include "util/cancel.h"
#include "util/error.h"
#include "util/fdio.h"
#include "util/path.h"

struct writer {
	int fd;
	char *target;
	char *tmp;                 /* the file's name until it is the target's;
	                              NULL: unnamed (O_TMPFILE) until the commit */
	XXH3_state_t *hash;
	uint64_t unflushed;        /* bytes written since writeback started */
	uint64_t base;             /* where offset 0 lies in the file */
	const volatile int *cancel;
	int (*before_rename)(void *ctx, const char *name, ek_error *err);
	void *before_rename_ctx;
};

/* The image is flushed before it is renamed into place; starting the
 * disk's writeback as it grows leaves that last fsync little to wait for
 * (it was a quarter of a second per 100 MiB at the end). */
#define WRITEBACK_STEP (8u << 20)

/* The name an unnamed file is linked by: /proc/self/fd/N. */
static void proc_name(int fd, char *out, size_t size)
{
	snprintf(out, size, "/proc/self/fd/%d", fd);
}

/* An unnamed file beside target (O_TMPFILE), so that a process killed
 * outright (kill -9, the OOM killer) leaves nothing behind; -1 where the
 * filesystem makes none, or where /proc/self/fd/N is not that file (a
 * missing /proc, or something mounted over it, would lose the image at
 * the commit). */
static int open_unnamed(const char *target)
{
	struct stat by_fd, by_proc;
	char proc[40];
	int fd = path_unnamed_beside(target);

	if (fd < 0)
		return -1;
	proc_name(fd, proc, sizeof(proc));
	if (fstat(fd, &by_fd) == 0 && stat(proc, &by_proc) == 0 &&
	    by_fd.st_dev == by_proc.st_dev && by_fd.st_ino == by_proc.st_ino)
		return fd;
	close(fd);
	return -1;
}

/* Where there can be no unnamed file: TARGET.tmp.XXXXXX, named from the
 * start (w->tmp, w->fd). */
static int open_named(struct writer *w, ek_error *err)
{
	size_t size = strlen(w->target) + 32;
	int e;

	w->tmp = malloc(size);
	if (!w->tmp)
		return err_fail(err, -ENOMEM, "out of memory");
	snprintf(w->tmp, size, "%s.tmp.XXXXXX", w->target);
	w->fd = mkostemp(w->tmp, O_CLOEXEC);
	if (w->fd >= 0)
		return 0;
	e = errno;
	free(w->tmp);
	w->tmp = NULL;
	if (e == ENOENT || e == ENOTDIR)
		return err_fail(err, -e, "%s: its directory does not exist", w->target);
	return err_fail(err, -e, "cannot create a temporary file beside %s: %s", w->target,
			strerror(e));
}

int writer_open(const char *target, struct writer **out, ek_error *err)
{
	struct writer *w = calloc(1, sizeof(*w));
	struct stat st;
	int ret;

	if (!w)
		return err_fail(err, -ENOMEM, "out of memory");
	w->fd = -1;
	/* Refuse to replace something that is not a regular file. */
	if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
		free(w);
		return err_fail(err, -EEXIST, "%s exists and is not a regular file", target);
	}
	w->target = strdup(target);
	w->hash = XXH3_createState();
	if (!w->target || !w->hash) {
		writer_abort(w);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	w->fd = open_unnamed(target);
	ret = w->fd >= 0 ? 0 : open_named(w, err);
	if (ret) {
		writer_abort(w);
		return ret;
	}
	XXH3_128bits_reset(w->hash);
	*out = w;
	return 0;
}

void writer_watch(struct writer *w, const volatile int *cancel)
{
	w->cancel = cancel;
}

void writer_before_rename(struct writer *w, int (*hook)(void *ctx, const char *name,
							ek_error *err), void *ctx)
{
	w->before_rename = hook;
	w->before_rename_ctx = ctx;
}

void writer_shift(struct writer *w, uint64_t base)
{
	w->base = base;
}

static int write_all(struct writer *w, uint64_t off, const void *buf,
		     size_t len, ek_error *err)
{
	int ret;

	if (cancel_requested(w->cancel))
		return err_fail(err, -ECANCELED, CANCEL_MESSAGE);
	w->unflushed += len;
	if (w->unflushed >= WRITEBACK_STEP) {
		/* A hint: a failure shows at the fsync. */
		(void)sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
		w->unflushed = 0;
	}

	ret = fd_pwrite_full(w->fd, buf, len, off + w->base);
	if (ret)
		return err_fail(err, ret, "writing %s: %s", w->target, strerror(-ret));
	return 0;
}

int writer_pwrite_unhashed(struct writer *w, uint64_t off, const void *buf,
			   size_t len, ek_error *err)
{
	return write_all(w, off, buf, len, err);
}

/* Whether buf is all zeros. */
static int all_zero(const uint8_t *p, size_t len)
{
	return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

int writer_pwrite(struct writer *w, uint64_t off, const void *buf, size_t len,
		  ek_error *err)
{
	const uint8_t *p = buf;
	const size_t step = 4096;

	XXH3_128bits_update(w->hash, buf, len);
	/* Leave runs of zeros unwritten: the file reads them as zeros and
	 * stays sparse (sparse inputs, zero-padded blocks). */
	while (len > 0) {
		size_t n = len < step ? len : step;
		size_t run = 0;

		while (run < len && all_zero(p + run, n)) {
			run += n;
			n = len - run < step ? len - run : step;
		}
		p += run;
		off += run;
		len -= run;
		if (!len)
			break;
		run = 0;
		n = len < step ? len : step;
		while (run < len && !all_zero(p + run, n)) {
			run += n;
			n = len - run < step ? len - run : step;
		}
		if (write_all(w, off, p, run, err))
			return err ? err->code : -EIO;
		p += run;
		off += run;
		len -= run;
	}
	return 0;
}

int writer_discard(struct writer *w, uint64_t off, uint64_t len, ek_error *err)
{
	static const uint8_t zeros[65536];

	if (!len)
		return 0;
	if (fallocate(w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(off + w->base),
		      (off_t)len) == 0)
		return 0;
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		int ret = write_all(w, off, zeros, n, err);

		if (ret)
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

void writer_digest(struct writer *w, uint8_t out[16])
{
	XXH128_hash_t h = XXH3_128bits_digest(w->hash);
	XXH128_canonical_t c;

	XXH128_canonicalFromHash(&c, h);
	memcpy(out, c.digest, 16);
}

/* An unnamed file's name beside the target: TARGET.tmp.PID.N, the
 * first that is free.  It lasts only until the rename. */
static int name_unnamed(struct writer *w, ek_error *err)
{
	size_t size = strlen(w->target) + 48;
	char proc[40];
	int e = EEXIST;

	w->tmp = malloc(size);
	if (!w->tmp)
		return err_fail(err, -ENOMEM, "out of memory");
	proc_name(w->fd, proc, sizeof(proc));
	for (unsigned int n = 0; n < 100 && e == EEXIST; n++) {
		snprintf(w->tmp, size, "%s.tmp.%ld.%u", w->target, (long)getpid(), n);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, w->tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		e = errno;
	}
	free(w->tmp);
	w->tmp = NULL;
	return err_fail(err, -e, "naming the new %s: %s", w->target, strerror(e));
}

int writer_commit(struct writer *w, uint64_t size, ek_error *err)
{
	mode_t mask = umask(0);
	int ret = 0;

	umask(mask);
	if (ftruncate(w->fd, (off_t)(size + w->base)) < 0)
		ret = err_fail(err, -errno, "setting the size of %s: %s", w->target,
			      strerror(errno));
	else if (fsync(w->fd) < 0)
		ret = err_fail(err, -errno, "flushing %s: %s", w->target, strerror(errno));
	else if (fchmod(w->fd, 0666 & ~mask) < 0)
		ret = err_fail(err, -errno, "chmod %s: %s", w->tmp ? w->tmp : w->target,
			      strerror(errno));
	else if (!w->tmp)
		ret = name_unnamed(w, err);
	if (close(w->fd) < 0 && !ret)
		ret = err_fail(err, -errno, "closing %s: %s", w->target, strerror(errno));
	w->fd = -1;
	if (!ret && w->before_rename)
		ret = w->before_rename(w->before_rename_ctx, w->tmp, err);
	if (!ret && rename(w->tmp, w->target) < 0)
		ret = err_fail(err, -errno, "renaming %s to %s: %s", w->tmp, w->target,
			      strerror(errno));
	if (!ret) {
		free(w->tmp);
		w->tmp = NULL;
	}
	writer_abort(w);
	return ret;
}

void writer_abort(struct writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp) {
		unlink(w->tmp);
		free(w->tmp);
	}
	free(w->target);
	if (w->hash)
		XXH3_freeState(w->hash);
	free(w);
}
