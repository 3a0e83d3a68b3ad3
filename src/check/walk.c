/*
 * The checker: a depth-first walk from the root that validates every
 * directory (dots, names, order, types), every inode and its xattrs, and
 * reads every byte of every file; with an extract directory it recreates
 * the tree as it goes (contents first, then owner/mode/xattrs/times;
 * a directory's own metadata after all of its children).
 *
 * A problem is reported and the walk goes on with the next entry; an
 * extraction failure (the target's, not the image's) stops it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check/extract.h"
#include "check/nidset.h"
#include "erofskit/check.h"
#include "util/error.h"

#define READ_CHUNK (1u << 20)
#define MAX_DEPTH 2048

struct checker {
	ek_image *img;
	const ek_check_options *o;
	ek_check_stats *st;
	struct nidset seen;
	bool extracting;
	struct extractor x;
	bool stop;             /* an extraction failure: give up */
	ek_error fatal;        /* the failure that stopped us */
	uint8_t *buf;
};

void ek_check_options_init(ek_check_options *o)
{
	memset(o, 0, sizeof(*o));
	o->preserve_owner = -1;
}

static void problem(struct checker *c, const char *path, ek_nid nid, int code,
		    const char *msg)
{
	c->st->problems++;
	if (c->o->problem)
		c->o->problem(c->o->problem_ctx, path, nid, code, msg);
}

/* An extraction (target-side) failure: report and stop the walk. */
static void io_failure(struct checker *c, const char *path, ek_error *e)
{
	c->st->io_errors++;
	if (!c->stop) {
		c->stop = true;
		c->fatal = *e;
		ek_error_prefix(&c->fatal, "%s: ", path);
	}
}

struct entry {
	char *name;
	uint16_t name_len;
	ek_nid nid;
	unsigned int type;
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

static int collect_entry(void *ctx, const ek_dirent *d)
{
	struct entries *es = ctx;
	struct entry *e;

	if (es->n == es->cap) {
		size_t ncap = es->cap ? es->cap * 2 : 32;
		struct entry *g = realloc(es->v, ncap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		es->v = g;
		es->cap = ncap;
	}
	e = &es->v[es->n];
	e->name = malloc(d->name_len + 1);
	if (!e->name)
		return -ENOMEM;
	memcpy(e->name, d->name, d->name_len);
	e->name[d->name_len] = '\0';
	e->name_len = (uint16_t)d->name_len;
	e->nid = d->nid;
	e->type = d->type;
	es->n++;
	return 0;
}

static void free_entries(struct entries *es)
{
	size_t i;

	for (i = 0; i < es->n; i++)
		free(es->v[i].name);
	free(es->v);
}

static unsigned int type_of_mode(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return EK_FT_REG;
	case S_IFDIR: return EK_FT_DIR;
	case S_IFCHR: return EK_FT_CHR;
	case S_IFBLK: return EK_FT_BLK;
	case S_IFIFO: return EK_FT_FIFO;
	case S_IFSOCK: return EK_FT_SOCK;
	case S_IFLNK: return EK_FT_LNK;
	default: return EK_FT_UNKNOWN;
	}
}

/* "" + "/" + name, for reports ("/a/b") and relative extraction paths. */
static char *child_path(const char *parent, const char *name)
{
	size_t a = strlen(parent), b = strlen(name);
	char *p = malloc(a + b + 2);

	if (p) {
		memcpy(p, parent, a);
		p[a] = '/';
		memcpy(p + a + 1, name, b + 1);
	}
	return p;
}

/* Read every byte (holes are skipped), writing to fd when fd >= 0. */
static int read_file(struct checker *c, ek_inode *inode, int fd,
		     const char *path, ek_error *e)
{
	const ek_stat *st = ek_inode_stat(inode);
	uint64_t off = 0;

	while (off < st->size) {
		ek_extent ext;
		uint64_t end;
		int ret = ek_map(inode, off, &ext, e);

		if (ret)
			return ret;
		if (ext.logical + ext.length <= off || ext.logical > off)
			return ek_fail(e, -EUCLEAN, "extent map does not cover offset %llu",
				       (unsigned long long)off);
		end = ext.logical + ext.length;
		if (end > st->size)
			end = st->size;
		if (ext.kind == EK_EXTENT_HOLE) {
			off = end;
			continue;
		}
		while (off < end) {
			size_t n = end - off < READ_CHUNK ? (size_t)(end - off) : READ_CHUNK;
			ssize_t got = ek_read(inode, c->buf, n, off, e);

			if (got < 0)
				return (int)got;
			if ((size_t)got != n)
				return ek_fail(e, -EUCLEAN, "short read at offset %llu",
					       (unsigned long long)off);
			if (fd >= 0) {
				ek_error w;

				if (extract_write(fd, c->buf, n, off, &w)) {
					io_failure(c, path, &w);
					return 1;
				}
			}
			c->st->bytes += n;
			off += n;
			if (c->o->progress)
				c->o->progress(c->o->progress_ctx, c->st->bytes, 0);
		}
	}
	if (fd >= 0 && ftruncate(fd, (off_t)st->size) < 0) {
		ek_error w;

		ek_fail(&w, -errno, "cannot set size: %s", strerror(errno));
		io_failure(c, path, &w);
		return 1;
	}
	return 0;
}

/* Check one non-directory inode and create it under dirfd. */
static void visit_leaf(struct checker *c, ek_inode *inode, int dirfd,
		       const char *name, const char *path, struct nid_entry *ne)
{
	const ek_stat *st = ek_inode_stat(inode);
	struct xattr_list xl = { 0 };
	ek_error e;
	int fd = -1, ret;

	ret = xattr_list_collect(inode, &xl, &e);
	if (ret) {
		problem(c, path, st->nid, ret, e.message);
		goto out;
	}
	if (S_ISREG(st->mode)) {
		c->st->regular_files++;
		if (dirfd >= 0 && extract_create(&c->x, dirfd, name, &fd, &e)) {
			io_failure(c, path, &e);
			goto out;
		}
		ret = read_file(c, inode, fd, path, &e);
		if (fd >= 0)
			close(fd);
		if (ret) {
			if (ret < 0)
				problem(c, path, st->nid, ret, e.message);
			goto out;
		}
	} else if (S_ISLNK(st->mode)) {
		char target[4096];
		ssize_t len = ek_readlink(inode, target, sizeof(target), &e);

		if (len < 0) {
			problem(c, path, st->nid, (int)len, e.message);
			goto out;
		}
		c->st->bytes += (uint64_t)len;
		if (dirfd >= 0 && extract_symlink(&c->x, dirfd, name, target, &e)) {
			io_failure(c, path, &e);
			goto out;
		}
	} else if (dirfd >= 0 && extract_special(&c->x, dirfd, name, st, &e)) {
		io_failure(c, path, &e);
		goto out;
	}
	if (dirfd >= 0) {
		if (extract_set_meta(&c->x, dirfd, name, st, &xl, &e))
			io_failure(c, path, &e);
		else
			ne->extracted = true;
	}
out:
	xattr_list_free(&xl);
}

static void walk_dir(struct checker *c, ek_inode *dir, ek_nid parent,
		     const char *path, unsigned int depth);

/* Directory entries other than "." and "..": validate, recurse, create. */
static void visit_children(struct checker *c, ek_inode *dir, struct entries *es,
			   const char *path, unsigned int depth)
{
	const char *rel = path[0] == '/' ? path + 1 : path;
	ek_nid self = ek_inode_stat(dir)->nid;
	int dirfd = -1;
	size_t i;
	ek_error e;

	if (c->extracting && extract_open_dir(&c->x, rel, &dirfd, &e)) {
		io_failure(c, path, &e);
		return;
	}
	/* First pass: leaves and directory creation; subdirectories are
	 * walked afterwards so that only one descriptor is open per level. */
	for (i = 0; i < es->n && !c->stop; i++) {
		struct entry *en = &es->v[i];
		char *cpath;
		struct nid_entry *ne;
		ek_inode *child;
		bool fresh;
		int ret;

		if (!strcmp(en->name, ".") || !strcmp(en->name, ".."))
			continue;
		cpath = child_path(path, en->name);
		if (!cpath) {
			problem(c, path, self, -ENOMEM, "out of memory");
			break;
		}
		ne = nidset_get(&c->seen, en->nid, &fresh);
		if (!ne) {
			problem(c, cpath, en->nid, -ENOMEM, "out of memory");
			free(cpath);
			break;
		}
		if (!fresh) {
			if (ne->is_dir || en->type == EK_FT_DIR) {
				problem(c, cpath, en->nid, -EUCLEAN,
					"directory reached twice (a loop or a hard-linked directory)");
			} else if (dirfd >= 0 && ne->extracted) {
				if (extract_link(&c->x, dirfd, en->name, ne->first_path, &e))
					io_failure(c, cpath, &e);
			}
			free(cpath);
			continue;
		}
		ret = ek_inode_get(c->img, en->nid, &child, &e);
		if (ret) {
			problem(c, cpath, en->nid, ret, e.message);
			free(cpath);
			continue;
		}
		c->st->inodes++;
		ne->is_dir = S_ISDIR(ek_inode_stat(child)->mode);
		if (type_of_mode(ek_inode_stat(child)->mode) != en->type) {
			char msg[128];

			snprintf(msg, sizeof(msg),
				 "directory entry type %u does not match the inode's mode 0%o",
				 en->type, ek_inode_stat(child)->mode);
			problem(c, cpath, en->nid, -EUCLEAN, msg);
			ek_inode_put(child);
			free(cpath);
			continue;
		}
		if (ne->is_dir) {
			if (dirfd >= 0 && extract_mkdir(&c->x, dirfd, en->name, &e))
				io_failure(c, cpath, &e);
		} else {
			ne->first_path = strdup(cpath + 1);
			visit_leaf(c, child, dirfd, en->name, cpath, ne);
		}
		ek_inode_put(child);
		free(cpath);
	}
	if (dirfd >= 0)
		close(dirfd);

	/* Second pass: subdirectories, each followed by its own metadata. */
	for (i = 0; i < es->n && !c->stop; i++) {
		struct entry *en = &es->v[i];
		struct nid_entry *ne;
		ek_inode *child;
		char *cpath;
		bool fresh;

		if (en->type != EK_FT_DIR || !strcmp(en->name, ".") ||
		    !strcmp(en->name, ".."))
			continue;
		ne = nidset_get(&c->seen, en->nid, &fresh);
		if (!ne || !ne->is_dir || ne->extracted)
			continue;   /* reported in the first pass */
		/* For directories `extracted` means "walked": once only. */
		ne->extracted = true;
		if (ek_inode_get(c->img, en->nid, &child, &e))
			continue;
		cpath = child_path(path, en->name);
		if (cpath)
			walk_dir(c, child, self, cpath, depth + 1);
		free(cpath);
		ek_inode_put(child);
	}
}

static void walk_dir(struct checker *c, ek_inode *dir, ek_nid parent,
		     const char *path, unsigned int depth)
{
	const ek_stat *st = ek_inode_stat(dir);
	struct entries es = { 0 };
	struct xattr_list xl = { 0 };
	unsigned int dots = 0, dotdots = 0;
	const char *shown = *path ? path : "/";
	ek_error e;
	size_t i;
	int ret;

	c->st->directories++;
	if (depth > MAX_DEPTH) {
		problem(c, shown, st->nid, -EUCLEAN, "directory tree deeper than 2048 levels");
		return;
	}
	ret = xattr_list_collect(dir, &xl, &e);
	if (ret) {
		problem(c, shown, st->nid, ret, e.message);
		xattr_list_free(&xl);
	}
	ret = ek_readdir(dir, 0, collect_entry, &es, &e);
	if (ret) {
		problem(c, shown, st->nid, ret,
			ret == -ENOMEM ? "out of memory" : e.message);
		goto out;
	}
	for (i = 0; i < es.n; i++) {
		char msg[160];

		if (!strcmp(es.v[i].name, ".")) {
			dots++;
			if (es.v[i].nid != st->nid) {
				snprintf(msg, sizeof(msg), "\".\" points to nid %llu, not to the directory itself",
					 (unsigned long long)es.v[i].nid);
				problem(c, shown, st->nid, -EUCLEAN, msg);
			}
		} else if (!strcmp(es.v[i].name, "..")) {
			dotdots++;
			if (es.v[i].nid != parent) {
				snprintf(msg, sizeof(msg), "\"..\" points to nid %llu, not to the parent %llu",
					 (unsigned long long)es.v[i].nid,
					 (unsigned long long)parent);
				problem(c, shown, st->nid, -EUCLEAN, msg);
			}
		}
	}
	if (dots != 1 || dotdots != 1)
		problem(c, shown, st->nid, -EUCLEAN, "directory lacks \".\" or \"..\"");
	visit_children(c, dir, &es, path, depth);
	/* A directory's own metadata last, so that creating its children
	 * does not disturb its mtime and a default ACL does not leak into
	 * the children. */
	if (c->extracting && !c->stop) {
		const char *rel = *path ? path + 1 : "";
		const char *slash = strrchr(rel, '/');
		char parent_rel[4096];
		int pfd;

		if (!*rel) {
			if (extract_set_meta(&c->x, c->x.rootfd, ".", st, &xl, &e))
				io_failure(c, shown, &e);
		} else if ((size_t)(slash ? slash - rel : 0) < sizeof(parent_rel)) {
			size_t plen = slash ? (size_t)(slash - rel) : 0;

			memcpy(parent_rel, rel, plen);
			parent_rel[plen] = '\0';
			if (extract_open_dir(&c->x, parent_rel, &pfd, &e)) {
				io_failure(c, shown, &e);
			} else {
				if (extract_set_meta(&c->x, pfd, slash ? slash + 1 : rel,
						     st, &xl, &e))
					io_failure(c, shown, &e);
				close(pfd);
			}
		}
	}
out:
	free_entries(&es);
	xattr_list_free(&xl);
}

int ek_check(ek_image *img, const ek_check_options *opts,
	     ek_check_stats *stats, ek_error *err)
{
	struct checker c = { .img = img, .o = opts };
	ek_check_options defaults;
	ek_check_stats local;
	struct timespec t0, t1;
	struct nid_entry *ne;
	ek_inode *root;
	bool fresh;
	ek_error e;
	int ret;

	if (!opts) {
		ek_check_options_init(&defaults);
		c.o = &defaults;
	}
	c.st = stats ? stats : &local;
	memset(c.st, 0, sizeof(*c.st));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c.x.rootfd = -1;
	c.buf = malloc(READ_CHUNK);
	if (!c.buf)
		return ek_fail(err, -ENOMEM, "out of memory");
	if (c.o->extract_dir) {
		ret = extract_init(&c.x, c.o->extract_dir, err);
		if (ret) {
			free(c.buf);
			return ret;
		}
		c.extracting = true;
		c.x.overwrite = c.o->overwrite;
		c.x.owner = c.o->preserve_owner < 0 ? geteuid() == 0
						     : c.o->preserve_owner > 0;
		c.x.xattrs = !c.o->no_xattrs;
	}
	ret = ek_inode_get(img, ek_root_nid(img), &root, &e);
	if (ret) {
		problem(&c, "/", ek_root_nid(img), ret, e.message);
	} else {
		c.st->inodes++;
		ne = nidset_get(&c.seen, ek_root_nid(img), &fresh);
		if (ne)
			ne->is_dir = true;
		walk_dir(&c, root, ek_root_nid(img), "", 0);
		ek_inode_put(root);
	}
	ret = 0;
	if (c.stop)
		ret = ek_fail(err, c.fatal.code ? c.fatal.code : -EIO, "%s", c.fatal.message);
	extract_fini(&c.x);
	nidset_free(&c.seen);
	free(c.buf);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c.st->seconds = (double)(t1.tv_sec - t0.tv_sec) +
			(double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return ret;
}
