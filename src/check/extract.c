/* Creating extracted entries without following links or leaving DIR. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "check/extract.h"
#include "util/error.h"
#include "util/warn.h"

/* The process umask, without setting it (umask() would, for a moment, in
 * every thread of the caller): /proc/self/status has it since Linux 4.7. */
static bool read_umask(mode_t *out)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned int m;
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "Umask: %o", &m) == 1;
	fclose(f);
	*out = (mode_t)m & 0777;
	return found;
}

/*
 * New entries get our effective uid and, as long as no directory on the
 * way is set-group-ID (or the filesystem hands out the parent's group,
 * the "grpid" mount option), our effective gid.  Directories are created
 * without that bit and get theirs last, so the root decides: if it is not
 * set-group-ID and has our group, every new file has (euid, egid).
 */
static void learn_creation(struct extractor *x)
{
	struct stat st;

	x->create_uid = geteuid();
	x->create_gid = getegid();
	atomic_store(&x->creation_known,
		     fstat(x->rootfd, &st) == 0 && !(st.st_mode & S_ISGID) &&
		     st.st_gid == x->create_gid && read_umask(&x->umask));
}

int extract_init(struct extractor *x, const char *dir, ek_error *err)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return err_fail(err, -errno, "%s: cannot create: %s", dir, strerror(errno));
	x->dir = dir;
	x->rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->rootfd < 0)
		return err_fail(err, -errno, "%s: cannot extract into it: %s", dir,
				errno == ENOTDIR ? "not a directory" : strerror(errno));
	learn_creation(x);
	return 0;
}

void extract_fini(struct extractor *x)
{
	if (x->rootfd >= 0)
		close(x->rootfd);
	x->rootfd = -1;
}

int extract_open_dir(struct extractor *x, const char *rel, int *fd,
		     ek_error *err)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	long r = syscall(SYS_openat2, x->rootfd, *rel ? rel : ".", &how, sizeof(how));

	if (r < 0)
		return err_fail(err, -errno, "%s: cannot open extracted directory: %s",
			       *rel ? rel : ".", strerror(errno));
	*fd = (int)r;
	return 0;
}

/* With --overwrite, remove what is in the way (never a non-empty dir). */
static int make_room(struct extractor *x, int dirfd, const char *name,
		     bool want_dir)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (want_dir && S_ISDIR(st.st_mode)) {
		/* Reused: unless it is what mkdir would have made, neither
		 * it nor what is created in it (a set-group-ID directory
		 * hands out its group) has the owner creation gives. */
		if (st.st_uid != x->create_uid || st.st_gid != x->create_gid ||
		    (st.st_mode & S_ISGID))
			atomic_store(&x->creation_known, false);
		return 1;
	}
	if (!x->overwrite)
		return -EEXIST;
	if (unlinkat(dirfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
		return -errno;
	return 0;
}

/* The entry's path in the image goes before this (check_io_failure's
 * prefix); the target directory is said here. */
static int fail_entry(struct extractor *x, ek_error *err, int code, const char *what)
{
	if (code == -EEXIST)
		return err_fail(err, code, "already exists in %s (use --overwrite)", x->dir);
	return err_fail(err, code, "cannot %s in %s: %s", what, x->dir, strerror(-code));
}

/*
 * Each creator tries first and looks only when something is in the way:
 * an empty target costs one call per entry.  With --overwrite what is in
 * the way is removed (never followed) and the creation tried once more.
 */
typedef int (*create_fn)(int dirfd, const char *name, void *arg);

static int create_entry(struct extractor *x, int dirfd, const char *name,
			bool want_dir, const char *what, create_fn fn, void *arg,
			ek_error *err)
{
	int r;

	if (fn(dirfd, name, arg) == 0)
		return 0;
	if (errno != EEXIST)
		return fail_entry(x, err, -errno, what);
	r = make_room(x, dirfd, name, want_dir);
	if (r < 0)
		return fail_entry(x, err, r, what);
	if (r == 0 && fn(dirfd, name, arg) < 0)
		return fail_entry(x, err, -errno, what);
	return 0;
}

static int do_mkdir(int dirfd, const char *name, void *arg)
{
	(void)arg;
	return mkdirat(dirfd, name, 0700);
}

struct create_args {
	int fd;
	mode_t mode;
};

static int do_create(int dirfd, const char *name, void *arg)
{
	struct create_args *a = arg;

	a->fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       a->mode);
	return a->fd < 0 ? -1 : 0;
}

/* Whether a new file can get `mode` at creation: no set-ID or sticky bit
 * (those come after the owner, which clears them) and nothing the umask
 * would take away.  Writing to it is allowed whatever the mode: the
 * descriptor is opened by the call that creates it. */
static bool mode_at_creation(const struct extractor *x, uint32_t mode)
{
	/* Without privilege, user.* xattrs need a writable inode: a file we
	 * may not write gets its mode after them. */
	return atomic_load(&x->creation_known) && !(mode & 07000) &&
	       !(mode & 0777 & x->umask) &&
	       (x->owner || (mode & S_IWUSR));
}

static bool owner_at_creation(const struct extractor *x, const ek_stat *st)
{
	/* Entries are all new but reused directories, which make_room
	 * checks. */
	return atomic_load(&x->creation_known) && st->uid == x->create_uid &&
	       st->gid == x->create_gid;
}

static int do_symlink(int dirfd, const char *name, void *arg)
{
	return symlinkat(arg, dirfd, name);
}

static int do_mknod(int dirfd, const char *name, void *arg)
{
	const ek_stat *st = arg;

	return mknodat(dirfd, name, (st->mode & S_IFMT) | 0600,
		       makedev(st->rdev_major, st->rdev_minor));
}

int extract_mkdir(struct extractor *x, int dirfd, const char *name,
		  ek_error *err)
{
	return create_entry(x, dirfd, name, true, "create directory", do_mkdir, NULL, err);
}

int extract_create(struct extractor *x, int dirfd, const char *name,
		   uint32_t mode, int *fd, ek_error *err)
{
	struct create_args a = {
		.fd = -1,
		.mode = mode_at_creation(x, mode) ? (mode_t)(mode & 0777) : 0600,
	};
	int ret = create_entry(x, dirfd, name, false, "create file", do_create, &a, err);

	*fd = a.fd;
	return ret;
}

int extract_symlink(struct extractor *x, int dirfd, const char *name,
		    const char *target, ek_error *err)
{
	return create_entry(x, dirfd, name, false, "create symlink", do_symlink,
			    (void *)target, err);
}

int extract_special(struct extractor *x, int dirfd, const char *name,
		    const ek_stat *st, ek_error *err)
{
	return create_entry(x, dirfd, name, false, "create special file", do_mknod,
			    (void *)st, err);
}

int extract_link(struct extractor *x, int dirfd, const char *name,
		 const char *first_rel, ek_error *err)
{
	const char *slash = strrchr(first_rel, '/');
	char parent[4096];
	int pfd, ret, r = make_room(x, dirfd, name, false);

	if (r < 0)
		return fail_entry(x, err, r, "create hard link");
	if (slash) {
		size_t len = (size_t)(slash - first_rel);

		if (len >= sizeof(parent))
			return err_fail(err, -ENAMETOOLONG, "%s: path too long", first_rel);
		memcpy(parent, first_rel, len);
		parent[len] = '\0';
	} else {
		parent[0] = '\0';
	}
	ret = extract_open_dir(x, parent, &pfd, err);
	if (ret)
		return ret;
	if (linkat(pfd, slash ? slash + 1 : first_rel, dirfd, name, 0) < 0)
		ret = fail_entry(x, err, -errno, "create hard link");
	close(pfd);
	return ret;
}

static bool zero_block(const unsigned char *p, size_t n)
{
	return p[0] == 0 && !memcmp(p, p + 1, n - 1);
}

int extract_write(int fd, const void *buf, size_t len, uint64_t off,
		  uint64_t *data_end, ek_error *err)
{
	const unsigned char *p = buf;
	const size_t blk = 4096;

	while (len > 0) {
		size_t run = 0, n;

		/* All-zero blocks become holes (ftruncate gives the size);
		 * the blocks between them go out in one write. */
		while (run < len && zero_block(p + run, len - run < blk ? len - run : blk))
			run += len - run < blk ? len - run : blk;
		p += run;
		off += run;
		len -= run;
		for (run = 0; run < len; run += n) {
			n = len - run < blk ? len - run : blk;
			if (zero_block(p + run, n))
				break;
		}
		while (run > 0) {
			ssize_t w = pwrite(fd, p, run, (off_t)off);

			if (w < 0) {
				if (errno == EINTR)
					continue;
				return err_fail(err, -errno, "write: %s", strerror(errno));
			}
			p += w;
			off += (uint64_t)w;
			len -= (size_t)w;
			run -= (size_t)w;
			if (off > *data_end)
				*data_end = off;
		}
	}
	return 0;
}

/* Where xattrs go: a path whose last component is not followed, or an
 * open descriptor. */
struct xattr_target {
	const char *path;
	int fd;
};

static int set_xattrs(struct extractor *x, const struct xattr_target *t,
		      const char *name, const struct xattr_list *xl, ek_error *err)
{
	size_t i;

	for (i = 0; x->xattrs && xl && i < xl->n; i++) {
		const struct xattr_item *it = &xl->items[i];
		int r = t->path ? lsetxattr(t->path, it->name, it->value, it->len, 0)
				: fsetxattr(t->fd, it->name, it->value, it->len, 0);

		if (r == 0)
			continue;
		if ((errno == EPERM || errno == ENOTSUP) && !x->owner) {
			if (!x->warned_xattr)
				warn_user("cannot set xattr %s on %s: %s (further xattr failures are not reported)",
					it->name, name, strerror(errno));
			x->warned_xattr = true;
			continue;
		}
		return err_fail(err, -errno, "%s: cannot set xattr %s: %s", name,
			       it->name, strerror(errno));
	}
	return 0;
}

static int set_times(int dirfd, const char *name, int fd, const ek_stat *st,
		     ek_error *err)
{
	struct timespec ts[2];
	int r;

	ts[0].tv_sec = ts[1].tv_sec = (time_t)st->mtime;
	ts[0].tv_nsec = ts[1].tv_nsec = st->mtime_nsec;
	r = fd >= 0 ? futimens(fd, ts) : utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW);
	if (r < 0)
		return err_fail(err, -errno, "%s: cannot set times: %s", name, strerror(errno));
	return 0;
}

int extract_set_meta_fd(struct extractor *x, int fd, const char *name,
			const ek_stat *st, const struct xattr_list *xl,
			ek_error *err)
{
	struct xattr_target t = { NULL, fd };
	int ret;

	if (x->owner && !owner_at_creation(x, st) && fchown(fd, st->uid, st->gid) < 0)
		return err_fail(err, -errno, "%s: cannot set owner: %s", name, strerror(errno));
	/* After the owner (chown drops security.capability), before the mode
	 * (which may take away the write permission user.* xattrs need). */
	ret = set_xattrs(x, &t, name, xl, err);
	if (ret)
		return ret;
	/* extract_create gave it the mode already, and chown (if any) only
	 * clears bits that mode_at_creation excludes. */
	if (!mode_at_creation(x, st->mode) && fchmod(fd, st->mode & 07777) < 0)
		return err_fail(err, -errno, "%s: cannot set mode: %s", name, strerror(errno));
	return set_times(-1, name, fd, st, err);
}

int extract_set_meta(struct extractor *x, int dirfd, const char *name,
		     const ek_stat *st, const struct xattr_list *xl,
		     ek_error *err)
{
	char path[64 + 256];
	struct xattr_target t = { path, -1 };
	int ret;

	if (x->owner && !owner_at_creation(x, st) &&
	    fchownat(dirfd, name, st->uid, st->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return err_fail(err, -errno, "%s: cannot set owner: %s", name, strerror(errno));
	/* chown clears set-id bits: the mode comes after it. */
	if (!S_ISLNK(st->mode) && fchmodat(dirfd, name, st->mode & 07777, 0) < 0)
		return err_fail(err, -errno, "%s: cannot set mode: %s", name, strerror(errno));
	/* Through the directory's /proc magic link: the final component is
	 * not followed by lsetxattr, the rest is the open directory itself. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	ret = set_xattrs(x, &t, name, xl, err);
	return ret ? ret : set_times(dirfd, name, -1, st, err);
}

static int collect_one(void *ctx, const char *name, size_t name_len,
		       const void *value, size_t value_len)
{
	struct xattr_list *xl = ctx;
	struct xattr_item *grown = realloc(xl->items, (xl->n + 1) * sizeof(*grown));
	struct xattr_item *it;

	if (!grown)
		return -ENOMEM;
	xl->items = grown;
	it = &xl->items[xl->n];
	it->name = malloc(name_len + 1);
	it->value = malloc(value_len ? value_len : 1);
	if (!it->name || !it->value) {
		free(it->name);
		free(it->value);
		return -ENOMEM;
	}
	memcpy(it->name, name, name_len + 1);
	if (value_len)
		memcpy(it->value, value, value_len);
	it->len = value_len;
	xl->n++;
	return 0;
}

int xattr_list_collect(ek_inode *inode, struct xattr_list *xl, ek_error *err)
{
	int ret = ek_xattr_iterate(inode, collect_one, xl, err);

	if (ret == -ENOMEM)
		return err_fail(err, -ENOMEM, "out of memory");
	return ret;
}

void xattr_list_free(struct xattr_list *xl)
{
	size_t i;

	for (i = 0; i < xl->n; i++) {
		free(xl->items[i].name);
		free(xl->items[i].value);
	}
	free(xl->items);
	xl->items = NULL;
	xl->n = 0;
}
