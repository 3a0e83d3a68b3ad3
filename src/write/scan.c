/*
 * Walking the source directory: every entry's metadata and xattrs into the
 * tree, hard links joined on (st_dev, st_ino).  Children of a directory are
 * created together (sorted by name) before any subdirectory is entered, so
 * that the inodes of one directory end up next to each other.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "write/internal.h"
#include "format/xattr.h"
#include "util/cancel.h"
#include "util/error.h"
#include "util/path.h"
#include "write/exclude.h"
#include "write/imagesource.h"
#include "write/hints.h"

/* ------------------------------------------------------------ hard links */

struct link_entry {
	dev_t dev;
	ino_t ino;
	struct tnode *inode;
};

struct hardlinks {
	struct link_entry *slots;
	size_t cap, used;
};

static size_t link_hash(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev;

	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static struct link_entry *links_find(struct hardlinks *h, dev_t dev, ino_t ino)
{
	size_t i;

	if (!h->cap)
		return NULL;
	for (i = link_hash(dev, ino, h->cap); h->slots[i].inode;
	     i = (i + 1) & (h->cap - 1))
		if (h->slots[i].dev == dev && h->slots[i].ino == ino)
			return &h->slots[i];
	return NULL;
}

static int links_add(struct hardlinks *h, dev_t dev, ino_t ino,
		     struct tnode *inode)
{
	size_t i;

	if ((h->used + 1) * 2 > h->cap) {
		size_t ncap = h->cap ? h->cap * 2 : 64, j;
		struct link_entry *n = calloc(ncap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (j = 0; j < h->cap; j++) {
			if (!h->slots[j].inode)
				continue;
			i = link_hash(h->slots[j].dev, h->slots[j].ino, ncap);
			while (n[i].inode)
				i = (i + 1) & (ncap - 1);
			n[i] = h->slots[j];
		}
		free(h->slots);
		h->slots = n;
		h->cap = ncap;
	}
	i = link_hash(dev, ino, h->cap);
	while (h->slots[i].inode)
		i = (i + 1) & (h->cap - 1);
	h->slots[i] = (struct link_entry){ dev, ino, inode };
	h->used++;
	return 0;
}

void hardlinks_free(struct hardlinks *h)
{
	if (h) {
		free(h->slots);
		free(h);
	}
}

/* ------------------------------------------------------------ xattrs */

static int read_xattrs(struct build *b, struct tnode *n, const char *path)
{
	char *names = NULL, *value = NULL, *p;
	ssize_t len, vlen;
	int ret = 0, tries = 0;

retry:
	len = llistxattr(path, NULL, 0);
	if (len < 0) {
		if (errno == ENOTSUP || errno == ENOSYS)
			return 0;
		return err_fail(b->err, -errno, "%s: cannot list xattrs: %s", path,
			       strerror(errno));
	}
	if (len == 0)
		return 0;
	names = malloc((size_t)len);
	value = malloc(65536);
	if (!names || !value) {
		ret = err_fail(b->err, -ENOMEM, "out of memory");
		goto out;
	}
	len = llistxattr(path, names, (size_t)len);
	if (len < 0) {
		if (errno == ERANGE && ++tries < 3) {
			free(names);
			free(value);
			goto retry;
		}
		ret = err_fail(b->err, -errno, "%s: cannot list xattrs: %s", path,
			      strerror(errno));
		goto out;
	}
	for (p = names; p < names + len; p += strlen(p) + 1) {
		if (path_rules_replace_xattr(b, p))
			continue;   /* the rules' value replaces it */
		vlen = lgetxattr(path, p, value, 65536);
		if (vlen < 0) {
			if (errno == ENODATA)
				continue;   /* removed meanwhile */
			ret = err_fail(b->err, -errno, "%s: cannot read xattr %s: %s",
				      path, p, strerror(errno));
			goto out;
		}
		ret = xattr_attach(b, n, p, value, (size_t)vlen, path);
		if (ret)
			goto out;
	}
	xattr_sort(n);
out:
	free(names);
	free(value);
	return ret;
}

/* ------------------------------------------------------------ inodes */

static int fill_inode(struct build *b, struct tnode *n, const char *path,
		      const struct stat *st)
{
	const ek_build_options *o = &b->o;

	n->mode = st->st_mode;
	if (build_set_owner_time(b, n, st->st_uid, st->st_gid, st->st_mtim.tv_sec,
				 (uint32_t)st->st_mtim.tv_nsec))
		return err_fail(b->err, -EOVERFLOW,
				"%s: owner %u:%u with the id offsets is over 4294967295", path,
				(unsigned int)st->st_uid, (unsigned int)st->st_gid);
	n->src_dev = st->st_dev;
	n->src_ino = st->st_ino;
	n->nlink = 1;

	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		n->size = (uint64_t)st->st_size;
		n->has_holes = (uint64_t)st->st_blocks * 512 < n->size;
		n->src_path = strdup(path);
		if (!n->src_path)
			return err_fail(b->err, -ENOMEM, "out of memory");
		break;
	case S_IFLNK: {
		char target[PATH_MAX + 1];
		ssize_t len = b->src_image ?
			      image_source_readlink(b, n, path, target, sizeof(target)) :
			      readlink(path, target, sizeof(target));

		if (len < 0 && b->src_image)
			return (int)len;
		if (len < 0)
			return err_fail(b->err, -errno, "%s: cannot read symlink: %s",
				       path, strerror(errno));
		if (len == 0 || len > 4095)
			return err_fail(b->err, -ENAMETOOLONG,
				       "%s: symlink target of %zd bytes (EROFS stores 1..4095)",
				       path, len);
		n->symlink = malloc((size_t)len + 1);
		if (!n->symlink)
			return err_fail(b->err, -ENOMEM, "out of memory");
		memcpy(n->symlink, target, (size_t)len);
		n->symlink[len] = '\0';
		n->size = (uint64_t)len;
		break;
	}
	case S_IFCHR:
	case S_IFBLK:
		n->rdev_major = major(st->st_rdev);
		n->rdev_minor = minor(st->st_rdev);
		break;
	case S_IFDIR:
	case S_IFIFO:
	case S_IFSOCK:
		break;
	default:
		return err_fail(b->err, -EINVAL, "%s: unsupported file type 0%o", path,
			       st->st_mode & S_IFMT);
	}
	if (o->no_xattrs)
		return 0;
	return b->src_image ? image_source_xattrs(b, n, path) : read_xattrs(b, n, path);
}

static void drop_child(struct tnode *dir, uint32_t i)
{
	free(dir->children[i].name);
	memmove(&dir->children[i], &dir->children[i + 1],
		(dir->nchildren - i - 1) * sizeof(dir->children[0]));
	dir->nchildren--;
}

/* One name into dir's children, not yet created. */
struct names {
	struct build *b;
	struct tnode *dir;
	size_t cap;
};

static int add_name(void *ctx, const char *name, size_t len)
{
	struct names *l = ctx;
	struct tnode *dir = l->dir;
	struct tdentry *e;

	if (cancel_requested(l->b->o.cancel))
		return err_fail(l->b->err, -ECANCELED, CANCEL_MESSAGE);
	if (dir->nchildren == l->cap) {
		struct tdentry *grown;

		l->cap = l->cap ? l->cap * 2 : 16;
		grown = realloc(dir->children, l->cap * sizeof(*grown));
		if (!grown)
			return err_fail(l->b->err, -ENOMEM, "out of memory");
		dir->children = grown;
	}
	e = &dir->children[dir->nchildren];
	e->name = strndup(name, len);
	e->name_len = (uint16_t)len;
	e->inode = NULL;
	if (!e->name)
		return err_fail(l->b->err, -ENOMEM, "out of memory");
	dir->nchildren++;
	return 0;
}

/* Every name in the directory at path but "." and "..". */
static int list_dir(struct build *b, struct tnode *dir, const char *path)
{
	struct names l = { b, dir, 0 };
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (b->src_image)
		return image_source_list(b, dir->src_ino, path, add_name, &l);
	d = opendir(path);
	if (!d)
		return err_fail(b->err, -errno, "%s: cannot open directory: %s", path,
			       strerror(errno));
	while (!ret) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				ret = err_fail(b->err, -errno, "%s: cannot read directory: %s",
					      path, strerror(errno));
			break;
		}
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			ret = add_name(&l, de->d_name, strlen(de->d_name));
	}
	closedir(d);
	return ret;
}

/* lstat(2) of the entry name of dir, at path. */
static int source_lstat(struct build *b, const struct tnode *dir, const char *name,
			const char *path, struct stat *st)
{
	if (b->src_image)
		return image_source_stat(b, dir->src_ino, name, path, st);
	if (lstat(path, st) < 0)
		return err_fail(b->err, -errno, "%s: %s", path, strerror(errno));
	return 0;
}

/* A directory of a source image is walked once: a corrupt image can name
 * one twice, or inside itself, which would copy its tree again and again
 * (the depth limit alone bounds the depth, not the breadth). */
static int image_dir_once(struct build *b, const char *path, const struct stat *st)
{
	if (!b->src_image || !S_ISDIR(st->st_mode))
		return 0;
	if (links_find(b->links, st->st_dev, st->st_ino))
		return err_fail(b->err, -EUCLEAN, "%s: directory (nid %llu) has a second name, "
				"or is inside itself", path, (unsigned long long)st->st_ino);
	/* The table's inode is only ever compared with NULL for these. */
	if (links_add(b->links, st->st_dev, st->st_ino, b->tree.root))
		return err_fail(b->err, -ENOMEM, "out of memory");
	return 0;
}

/* Read, sort and create the children of one directory. */
static int scan_children(struct build *b, struct tnode *dir, const char *path)
{
	/* Every path is the source's, a '/' and the path under it, which is
	 * what exclusion rules match. */
	size_t under_source = strlen(b->source) + 1;
	uint32_t i;
	int ret = list_dir(b, dir, path);

	if (ret)
		return ret;
	tree_sort_children(dir);

	for (i = 0; i < dir->nchildren && !ret;) {
		struct tdentry *e = &dir->children[i];
		struct link_entry *link;
		struct stat st;
		char *child;

		child = path_join(path, e->name);
		if (!child)
			return err_fail(b->err, -ENOMEM, "out of memory");
		if (b->exclude && exclude_path(b->exclude, child + under_source)) {
			free(child);
			drop_child(dir, i);
			continue;
		}
		ret = source_lstat(b, dir, e->name, child, &st);
		if (ret) {
			free(child);
			break;
		}
		if (exclude_file(b->exclude, &st)) {
			free(child);
			drop_child(dir, i);
			continue;
		}
		ret = image_dir_once(b, child, &st);
		if (ret) {
			free(child);
			break;
		}
		link = !S_ISDIR(st.st_mode) && st.st_nlink > 1 ?
		       links_find(b->links, st.st_dev, st.st_ino) : NULL;
		if (link) {
			e->inode = link->inode;
			e->inode->nlink++;
		} else {
			e->inode = tree_new_inode(&b->tree);
			if (!e->inode)
				ret = err_fail(b->err, -ENOMEM, "out of memory");
			else
				ret = fill_inode(b, e->inode, child, &st);
			if (!ret)
				/* the '/' before the path under the source */
				ret = path_rules_apply(b, e->inode, child + under_source - 1);
			/* Its first name picks the rule, as upstream's does. */
			if (!ret && b->hints && S_ISREG(st.st_mode))
				e->inode->hint = (uint8_t)hints_rule(b->hints, child + under_source);
			if (!ret && !S_ISDIR(st.st_mode) && st.st_nlink > 1 &&
			    !b->o.hard_dereference &&    /* (so never found) */
			    links_add(b->links, st.st_dev, st.st_ino, e->inode))
				ret = err_fail(b->err, -ENOMEM, "out of memory");
			if (!ret && S_ISDIR(st.st_mode))
				e->inode->parent = dir;
		}
		free(child);
		i++;
	}
	return ret;
}

static int scan_dir(struct build *b, struct tnode *dir, const char *path, unsigned int depth)
{
	uint32_t i, subdirs = 0;
	int ret;

	if (depth > 4096)
		return err_fail(b->err, -ELOOP, "%s: directory tree too deep", path);
	ret = scan_children(b, dir, path);
	for (i = 0; i < dir->nchildren && !ret; i++) {
		struct tdentry *e = &dir->children[i];
		char *child;

		if (!S_ISDIR(e->inode->mode))
			continue;
		subdirs++;
		child = path_join(path, e->name);
		if (!child)
			ret = err_fail(b->err, -ENOMEM, "out of memory");
		else
			ret = scan_dir(b, e->inode, child, depth + 1);
		free(child);
	}
	dir->nlink = 2 + subdirs;
	return ret;
}

int scan_source(struct build *b, const char *image_path)
{
	struct tnode *root;
	struct stat st;
	int ret;

	/* The source itself may be a symlink to a directory, or an image. */
	if (stat(b->source, &st) < 0)
		return err_fail(b->err, -errno, "%s: %s", b->source, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		ret = image_source_open(b);
		if (ret == -ENOTDIR)
			return err_fail(b->err, -ENOTDIR, "%s: not a directory", b->source);
		if (!ret)
			ret = image_source_root(b, &st);
		if (!ret && !S_ISDIR(st.st_mode))
			ret = err_fail(b->err, -EUCLEAN, "%s: the image's root is not a directory",
				       b->source);
		if (ret)
			return ret;
	}
	b->links = calloc(1, sizeof(*b->links));
	root = tree_new_inode(&b->tree);
	if (!b->links || !root)
		return err_fail(b->err, -ENOMEM, "out of memory");
	b->tree.root = root;
	ret = exclude_open(&b->o, image_path, &b->exclude, b->err);
	if (!ret)
		ret = image_dir_once(b, b->source, &st);
	if (!ret)
		ret = fill_inode(b, root, b->source, &st);
	if (!ret)
		ret = path_rules_apply(b, root, "/");
	root->parent = root;
	if (!ret)
		ret = scan_dir(b, root, b->source, 0);
	exclude_close(b->exclude, ret ? NULL : b->source);
	b->exclude = NULL;
	return ret;
}
