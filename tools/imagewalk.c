/* The walk of a whole image; see imagewalk.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "imagewalk.h"
#include "u64set.h"

/* Deeper than a path Linux takes (4096 bytes) can go. */
#define MAX_DEPTH 4096

struct walk {
	ek_image *img;
	image_visit_fn visit;
	void *ctx;
	ek_error *err;
	char *path;             /* the entry being visited */
	size_t path_cap;
	struct u64set seen;     /* directories, and inodes with more names */
};

struct child {
	ek_nid nid;
	char *name;
};

struct children {
	struct child *v;
	size_t n, cap;
};

static int collect_child(void *ctx, const ek_dirent *d)
{
	struct children *c = ctx;

	if ((d->name_len == 1 && d->name[0] == '.') ||
	    (d->name_len == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 32;
		struct child *grown = realloc(c->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		c->v = grown;
		c->cap = cap;
	}
	c->v[c->n].name = strndup(d->name, d->name_len);
	if (!c->v[c->n].name)
		return -ENOMEM;
	c->v[c->n++].nid = d->nid;
	return 0;
}

/* The path becomes its first len bytes, then "/name". */
static int set_path(struct walk *w, size_t len, const char *name)
{
	size_t need = len + 1 + strlen(name) + 1;

	if (need > w->path_cap) {
		char *grown = realloc(w->path, need);

		if (!grown)
			return cli_fail(w->err, -ENOMEM, "out of memory");
		w->path = grown;
		w->path_cap = need;
	}
	w->path[len] = '/';
	strcpy(w->path + len + 1, name);
	return 0;
}

static int visit_dir(struct walk *w, ek_inode *dir, unsigned int depth);

/* Load, visit and (a directory) descend into the entry at w->path. */
static int visit_nid(struct walk *w, ek_nid nid, const char *name, unsigned int depth)
{
	struct image_entry e = { .path = *w->path ? w->path : "/", .name = name, .nid = nid };
	int ret = ek_inode_get(w->img, nid, &e.inode, w->err), seen = 0;

	if (ret)
		return ret;
	e.st = ek_inode_stat(e.inode);
	/* A directory has one name: met again, the tree is a loop (or
	 * worse), which would walk for ever. */
	if (S_ISDIR(e.st->mode) || e.st->nlink > 1)
		seen = u64set_add(&w->seen, nid);
	e.first = seen == 0;
	if (seen < 0)
		ret = cli_fail(w->err, -ENOMEM, "out of memory");
	else if (seen && S_ISDIR(e.st->mode))
		ret = cli_fail(w->err, -EUCLEAN, "%s: directory (nid %llu) met a second time: "
				"the tree loops", e.path, (unsigned long long)nid);
	else
		ret = w->visit(w->ctx, &e, w->err);
	if (!ret && S_ISDIR(e.st->mode))
		ret = visit_dir(w, e.inode, depth);
	ek_inode_put(e.inode);
	return ret;
}

static int visit_dir(struct walk *w, ek_inode *dir, unsigned int depth)
{
	struct children c = { 0 };
	size_t len = strlen(w->path), i;
	int ret;

	if (depth >= MAX_DEPTH)
		return cli_fail(w->err, -EUCLEAN, "%s: directories nested over %u deep", w->path,
				 MAX_DEPTH);
	ret = ek_readdir(dir, 0, collect_child, &c, w->err);
	if (ret == -ENOMEM)
		ret = cli_fail(w->err, ret, "out of memory");
	for (i = 0; i < c.n && !ret; i++) {
		ret = set_path(w, len, c.v[i].name);
		if (!ret)
			ret = visit_nid(w, c.v[i].nid, c.v[i].name, depth + 1);
		w->path[len] = '\0';
	}
	for (i = 0; i < c.n; i++)
		free(c.v[i].name);
	free(c.v);
	return ret;
}

int image_walk(ek_image *img, const char *prefix, image_visit_fn visit, void *ctx,
	       ek_error *err)
{
	struct walk w = { .img = img, .visit = visit, .ctx = ctx, .err = err };
	int ret;

	w.path = strdup(prefix);
	if (!w.path)
		return cli_fail(err, -ENOMEM, "out of memory");
	w.path_cap = strlen(prefix) + 1;
	ret = visit_nid(&w, ek_root_nid(img), "", 0);
	free(w.path);
	u64set_free(&w.seen);
	return ret;
}
