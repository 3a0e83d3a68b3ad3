/* An EROFS image as a build's source: its tree, metadata and data. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "write/imagesource.h"
#include "write/internal.h"
#include "util/error.h"

/* Decoded clusters kept for the workers' reads: a file's pieces are read
 * in order, several from one large source cluster, which would otherwise
 * be decoded once per piece. */
#define SOURCE_CACHE_BYTES (32u << 20)

/* The superblock's magic (0xE0F5E1E2, little-endian) at byte 1024. */
static bool looks_like_image(const char *path)
{
	static const uint8_t magic[4] = { 0xe2, 0xe1, 0xf5, 0xe0 };
	uint8_t got[4];
	bool yes;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return false;
	yes = fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) &&
	      pread(fd, got, sizeof(got), 1024) == (ssize_t)sizeof(got) &&
	      !memcmp(got, magic, sizeof(magic));
	close(fd);
	return yes;
}

int image_source_open(struct build *b)
{
	ek_open_options o;
	ek_error err;
	int ret;

	if (!looks_like_image(b->source))
		return -ENOTDIR;
	ek_open_options_init(&o);
	o.cache_bytes = SOURCE_CACHE_BYTES;
	o.workers = 1;      /* the build's workers read; no threads of its own */
	ret = ek_open(b->source, &o, &b->src_image, &err);
	if (ret)
		return err_fail(b->err, ret, "%s", err.message);
	return 0;
}

void image_source_close(struct build *b)
{
	if (b->src_image)
		ek_close(b->src_image);
	b->src_image = NULL;
}

/* The inode nid (at path, for messages), or -errno with b->err filled. */
static int get(struct build *b, uint64_t nid, const char *path, ek_inode **out)
{
	ek_error err;
	int ret = ek_inode_get(b->src_image, (ek_nid)nid, out, &err);

	return ret ? err_fail(b->err, ret, "%s: %s", path, err.message) : 0;
}

/* lstat(2)'s fields of inode. */
static void stat_of(ek_inode *inode, struct stat *st)
{
	const ek_stat *s = ek_inode_stat(inode);
	ek_inode_detail detail;

	memset(st, 0, sizeof(*st));
	st->st_dev = IMAGE_SOURCE_DEV;
	st->st_ino = (ino_t)s->nid;
	st->st_mode = s->mode;
	st->st_nlink = s->nlink;
	st->st_uid = s->uid;
	st->st_gid = s->gid;
	st->st_rdev = makedev(s->rdev_major, s->rdev_minor);
	st->st_size = (off_t)s->size;
	/* st_blocks says only whether the file has holes (the build then
	 * asks where they are: image_source_seek): an uncompressed file's
	 * holes (null chunks, or a flat file with no blocks) are kept as
	 * holes; a compressed file is data, however few blocks it takes. */
	ek_inode_get_detail(inode, &detail);
	st->st_blocks = (blkcnt_t)((s->size + 511) / 512);
	if (S_ISREG(s->mode) && detail.layout != 1 && detail.layout != 3 && s->size &&
	    ek_seek(inode, 0, SEEK_HOLE, NULL) < (int64_t)s->size)
		st->st_blocks = 0;
	st->st_mtim.tv_sec = (time_t)s->mtime;
	st->st_mtim.tv_nsec = (long)s->mtime_nsec;
}

int image_source_root(struct build *b, struct stat *st)
{
	ek_inode *root;
	ek_error err;
	ek_nid nid;
	int ret = ek_lookup(b->src_image, "/", &nid, &err);

	if (ret)
		return err_fail(b->err, ret, "%s: %s", b->source, err.message);
	ret = get(b, nid, b->source, &root);
	if (ret)
		return ret;
	stat_of(root, st);
	ek_inode_put(root);
	return 0;
}

int image_source_stat(struct build *b, uint64_t dir_nid, const char *name, const char *path,
		      struct stat *st)
{
	ek_inode *dir, *inode;
	ek_error err;
	ek_nid nid;
	int ret = get(b, dir_nid, path, &dir);

	if (ret)
		return ret;
	ret = ek_lookup_child(dir, name, strlen(name), &nid, &err);
	ek_inode_put(dir);
	if (ret)
		return err_fail(b->err, ret, "%s: %s", path, err.message);
	ret = get(b, nid, path, &inode);
	if (ret)
		return ret;
	stat_of(inode, st);
	ek_inode_put(inode);
	return 0;
}

struct lister {
	struct build *b;
	const char *path;
	int (*add)(void *ctx, const char *name, size_t len);
	void *ctx;
};

static int list_one(void *ctx, const ek_dirent *d)
{
	const struct lister *l = ctx;

	if ((d->name_len == 1 && d->name[0] == '.') ||
	    (d->name_len == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	/* The walk goes by path: a name that is not one component would
	 * lead it elsewhere (the reader leaves names as stored). */
	if (!d->name_len || memchr(d->name, '/', d->name_len) || memchr(d->name, 0, d->name_len))
		return err_fail(l->b->err, -EUCLEAN, "%s: a name in the directory (nid %llu) "
				"is empty or holds '/' or NUL", l->path,
				(unsigned long long)d->nid);
	return l->add(l->ctx, d->name, d->name_len);
}

int image_source_list(struct build *b, uint64_t nid, const char *path,
		      int (*add)(void *ctx, const char *name, size_t len), void *ctx)
{
	struct lister l = { b, path, add, ctx };
	ek_inode *dir;
	ek_error err;
	int ret = get(b, nid, path, &dir);

	if (ret)
		return ret;
	err.code = 0;
	ret = ek_readdir(dir, 0, list_one, &l, &err);
	ek_inode_put(dir);
	/* add's own failures have filled b->err already. */
	return ret && err.code ? err_fail(b->err, ret, "%s: %s", path, err.message) : ret;
}

ssize_t image_source_readlink(struct build *b, const struct tnode *n, const char *path,
			      char *buf, size_t size)
{
	ek_inode *inode;
	ek_error err;
	ssize_t len;
	int ret = get(b, n->src_ino, path, &inode);

	if (ret)
		return ret;
	len = ek_readlink(inode, buf, size, &err);
	ek_inode_put(inode);
	return len < 0 ? err_fail(b->err, (int)len, "%s: %s", path, err.message) : len;
}

struct xattr_sink {
	struct build *b;
	struct tnode *n;
	const char *path;
};

static int take_xattr(void *ctx, const char *name, size_t name_len, const void *value,
		      size_t value_len)
{
	const struct xattr_sink *s = ctx;
	char *full = strndup(name, name_len);
	int ret;

	if (!full)
		return err_fail(s->b->err, -ENOMEM, "out of memory");
	ret = path_rules_replace_xattr(s->b, full) ? 0 :
	      xattr_attach(s->b, s->n, full, value, value_len, s->path);
	free(full);
	return ret;
}

int image_source_xattrs(struct build *b, struct tnode *n, const char *path)
{
	struct xattr_sink s = { b, n, path };
	ek_inode *inode;
	ek_error err;
	int ret = get(b, n->src_ino, path, &inode);

	if (ret)
		return ret;
	err.code = 0;
	ret = ek_xattr_iterate(inode, take_xattr, &s, &err);
	ek_inode_put(inode);
	if (ret)
		return err.code ? err_fail(b->err, ret, "%s: %s", path, err.message) : ret;
	xattr_sort(n);
	return 0;
}

int image_source_pread(struct build *b, const struct tnode *n, void *buf, size_t len,
		       uint64_t off)
{
	ek_inode *inode;
	ek_error err;
	char *p = buf;
	int ret = get(b, n->src_ino, n->src_path, &inode);

	if (ret)
		return ret;
	while (len > 0) {
		ssize_t got = ek_read(inode, p, len, off, &err);

		if (got < 0) {
			ret = err_fail(b->err, (int)got, "%s: %s", n->src_path, err.message);
			break;
		}
		if (got == 0) {
			ret = err_fail(b->err, -EUCLEAN, "%s: its data ends at offset %llu of %llu",
				       n->src_path, (unsigned long long)off,
				       (unsigned long long)n->size);
			break;
		}
		p += got;
		off += (uint64_t)got;
		len -= (size_t)got;
	}
	ek_inode_put(inode);
	return ret;
}

int64_t image_source_seek(struct build *b, const struct tnode *n, uint64_t pos, int whence)
{
	ek_inode *inode;
	ek_error err;
	int64_t at;
	int ret = get(b, n->src_ino, n->src_path, &inode);

	if (ret)
		return ret;
	at = ek_seek(inode, pos, whence, &err);
	ek_inode_put(inode);
	if (at < 0 && at != -ENXIO)
		return err_fail(b->err, (int)at, "%s: %s", n->src_path, err.message);
	return at;
}
