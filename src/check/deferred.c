/*
 * Work deferred to the end of a check: hard links (made once every target
 * exists), directories met twice (reported under their smallest name), and
 * directories' metadata (applied deepest first, after all contents).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/checker.h"
#include "util/error.h"
#include "util/path.h"

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *g;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	g = realloc(*v, ncap * size);
	if (!g)
		return -ENOMEM;
	*v = g;
	*cap = ncap;
	return 0;
}

static int defer_pair(struct checker *c, struct deferred_link **v, size_t *n,
		      size_t *cap, uint64_t nid, const char *path)
{
	char *p = strdup(path);
	int ret;

	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	ret = grow((void **)v, cap, *n, sizeof(**v));
	if (!ret) {
		(*v)[*n].nid = nid;
		(*v)[*n].path = p;
		(*n)++;
	}
	pthread_mutex_unlock(&c->lock);
	if (ret)
		free(p);
	return ret;
}

int check_defer_link(struct checker *c, uint64_t nid, const char *path)
{
	return defer_pair(c, &c->links, &c->nlinks, &c->cap_links, nid, path);
}

int check_defer_dupdir(struct checker *c, uint64_t nid, const char *path)
{
	return defer_pair(c, &c->dupdirs, &c->ndupdirs, &c->cap_dupdirs, nid, path);
}

int check_defer_dir(struct checker *c, const char *path, unsigned int depth,
		    const ek_stat *st, struct xattr_list *xl)
{
	char *p = strdup(path);
	int ret;

	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	ret = grow((void **)&c->dirs, &c->cap_dirs, c->ndirs, sizeof(*c->dirs));
	if (!ret) {
		struct deferred_dir *d = &c->dirs[c->ndirs++];

		d->path = p;
		d->depth = depth;
		d->st = *st;
		d->xl = *xl;
		memset(xl, 0, sizeof(*xl));
	}
	pthread_mutex_unlock(&c->lock);
	if (ret)
		free(p);
	return ret;
}

/* A directory met under several names: every name but the smallest is
 * reported, whichever name the walk happened to take. */
void check_report_dupdirs(struct checker *c)
{
	size_t i;

	for (i = 0; i < c->ndupdirs; i++) {
		struct deferred_link *d = &c->dupdirs[i];
		struct nid_entry *e;
		const char *path = d->path;
		bool fresh;

		e = nidset_get(&c->seen, d->nid, &fresh);
		if (e && e->min_path && e->first_path && !strcmp(e->min_path, d->path))
			path = e->first_path;
		check_problem_entry(c, *path ? path : "/", d->nid, -EUCLEAN,
				    "directory reached twice (a loop or a hard-linked directory)");
		free(d->path);
	}
	free(c->dupdirs);
	c->dupdirs = NULL;
}

static int cmp_link(const void *a, const void *b)
{
	return path_cmp(((const struct deferred_link *)a)->path,
			((const struct deferred_link *)b)->path);
}

void check_make_links(struct checker *c)
{
	size_t i;

	if (c->nlinks)
		qsort(c->links, c->nlinks, sizeof(*c->links), cmp_link);
	for (i = 0; i < c->nlinks; i++) {
		struct deferred_link *l = &c->links[i];
		char parent[4096];
		const char *name;
		struct nid_entry *e;
		bool fresh;
		ek_error err;
		int pfd;

		if (atomic_load(&c->stop))
			break;
		e = nidset_get(&c->seen, l->nid, &fresh);
		if (!e || !e->first_path || S_ISDIR(e->mode) ||
		    path_split(l->path + 1, parent, sizeof(parent), &name))
			continue;
		if (extract_open_dir(&c->x, parent, &pfd, &err)) {
			check_io_failure(c, l->path, &err);
			break;
		}
		/* A target that could not be created (a problem was
		 * reported for it) leaves nothing to link to. */
		if (extract_link(&c->x, pfd, name, e->first_path + 1, &err) &&
		    err.code != -ENOENT)
			check_io_failure(c, l->path, &err);
		close(pfd);
	}
}

static int cmp_dir_depth(const void *a, const void *b)
{
	const struct deferred_dir *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth > y->depth ? -1 : 1;
	return path_cmp(x->path, y->path);
}

/* The parent directory last opened: directories of one depth are sorted
 * by path, so siblings come one after another and share it. */
struct open_parent {
	char path[4096];
	int fd;
};

static void apply_dir_meta(struct checker *c, const struct deferred_dir *d,
			   struct open_parent *op)
{
	char parent[4096];
	const char *name;
	ek_error err;

	if (!*d->path) {
		if (extract_set_meta(&c->x, c->x.rootfd, ".", &d->st, &d->xl, &err))
			check_io_failure(c, "/", &err);
		return;
	}
	if (path_split(d->path, parent, sizeof(parent), &name)) {
		err_fail(&err, -ENAMETOOLONG, "%s: path too long", d->path);
		check_io_failure(c, d->path, &err);
		return;
	}
	if (op->fd < 0 || strcmp(op->path, parent)) {
		if (op->fd >= 0)
			close(op->fd);
		op->fd = -1;
		if (extract_open_dir(&c->x, parent, &op->fd, &err)) {
			check_io_failure(c, d->path, &err);
			return;
		}
		memcpy(op->path, parent, strlen(parent) + 1);
	}
	if (extract_set_meta(&c->x, op->fd, name, &d->st, &d->xl, &err))
		check_io_failure(c, d->path, &err);
}

static void apply_dirs(struct checker *c, size_t from, size_t to)
{
	struct open_parent op = { .fd = -1 };
	size_t i;

	for (i = from; i < to && !atomic_load(&c->stop); i++)
		apply_dir_meta(c, &c->dirs[i], &op);
	if (op.fd >= 0)
		close(op.fd);
}

/* Directories per job when a level is shared out. */
#define DIR_META_JOB 8u

struct dir_meta_job {
	struct pool_job job;
	struct checker *c;
	size_t from, to;
};

static void run_dir_meta(struct pool_job *job, unsigned int worker)
{
	struct dir_meta_job *j = (struct dir_meta_job *)job;

	(void)worker;
	apply_dirs(j->c, j->from, j->to);
}

/* One depth's directories, on the pool when there are enough of them. */
static void apply_level(struct checker *c, size_t from, size_t to)
{
	size_t njobs = (to - from + DIR_META_JOB - 1) / DIR_META_JOB, k;
	struct dir_meta_job *jobs;

	if (!c->pool || njobs < 2 || !(jobs = calloc(njobs, sizeof(*jobs)))) {
		apply_dirs(c, from, to);
		return;
	}
	for (k = 0; k < njobs; k++) {
		jobs[k].c = c;
		jobs[k].from = from + k * DIR_META_JOB;
		jobs[k].to = jobs[k].from + DIR_META_JOB < to ? jobs[k].from + DIR_META_JOB : to;
		jobs[k].job.run = run_dir_meta;
		pool_submit(c->pool, &jobs[k].job);
	}
	pool_wait_idle(c->pool);
	free(jobs);
}

/*
 * Directories last, deepest first: creating an entry changes its
 * directory's mtime, and a default ACL must not reach the children.
 * Setting one directory's metadata touches no other directory, so those
 * of one depth go in parallel; a level waits for the deeper one, since a
 * parent whose mode forbids search would shut an unprivileged extraction
 * out of its children.
 */
void check_finish_dirs(struct checker *c)
{
	size_t i, j;

	if (c->ndirs)
		qsort(c->dirs, c->ndirs, sizeof(*c->dirs), cmp_dir_depth);
	for (i = 0; i < c->ndirs && !atomic_load(&c->stop); i = j) {
		for (j = i + 1; j < c->ndirs && c->dirs[j].depth == c->dirs[i].depth; j++)
			;
		apply_level(c, i, j);
	}
}

void check_free_deferred(struct checker *c)
{
	size_t i;

	for (i = 0; i < c->nlinks; i++)
		free(c->links[i].path);
	free(c->links);
	for (i = 0; i < c->ndirs; i++) {
		free(c->dirs[i].path);
		xattr_list_free(&c->dirs[i].xl);
	}
	free(c->dirs);
}
