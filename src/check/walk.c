/*
 * The directory walk: one job per directory.  A job validates the
 * directory (blocks, names, order, dots), claims each entry's inode (the
 * first name to reach an inode owns it: its data is checked and extracted
 * once; later names become hard links), checks and creates the leaves it
 * owns, queues its subdirectories as jobs and its regular files as data
 * work, and defers its own metadata to the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/checker.h"
#include "util/error.h"
#include "util/path.h"

#define MAX_DEPTH 2048

struct dir_job {
	struct pool_job job;
	struct checker *c;
	uint64_t nid, parent;
	char *path;          /* "" for the root, else "/a/b" */
	unsigned int depth;
};

struct entry {
	char *name;
	uint64_t nid;
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

/*
 * Claim an inode for a name: *owner when this name is the first.  Entries
 * move when the set grows, so no pointer to one outlives the lock: callers
 * get a yes/no and come back by nid.
 */
static int claim(struct checker *c, uint64_t nid, const char *path, bool *owner)
{
	struct nid_entry *e;
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	e = nidset_get(&c->seen, nid, owner);
	if (!e) {
		ret = -ENOMEM;
	} else {
		if (*owner)
			e->first_path = strdup(path);
		if (!e->min_path || path_cmp(path, e->min_path) < 0) {
			free(e->min_path);
			e->min_path = strdup(path);
		}
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static void set_entry_mode(struct checker *c, uint64_t nid, uint32_t mode,
			   bool extracted)
{
	struct nid_entry *e;
	bool fresh;

	pthread_mutex_lock(&c->lock);
	e = nidset_get(&c->seen, nid, &fresh);
	if (e) {
		e->mode = mode;
		e->is_dir = S_ISDIR(mode);
		e->extracted = extracted;
	}
	pthread_mutex_unlock(&c->lock);
}

static void run_dir(struct pool_job *job, unsigned int worker);

static int queue_dir(struct checker *c, unsigned int worker, uint64_t nid,
		     uint64_t parent, const char *path, unsigned int depth)
{
	struct dir_job *d = calloc(1, sizeof(*d));

	if (!d || !(d->path = strdup(path))) {
		free(d);
		return -ENOMEM;
	}
	d->c = c;
	d->nid = nid;
	d->parent = parent;
	d->depth = depth;
	d->job.run = run_dir;
	d->job.detached = true;
	check_submit(c, &d->job, worker);
	return 0;
}

/* A symlink, device, fifo or socket: check it, create it. */
static void visit_leaf(struct checker *c, int dirfd, const char *name,
		       const char *path, ek_inode *inode)
{
	const ek_stat *st = ek_inode_stat(inode);
	struct xattr_list xl = { 0 };
	bool made = false;
	ek_error e;
	int ret;

	ret = xattr_list_collect(inode, &xl, &e);
	if (ret) {
		check_problem_inode(c, path, st->nid, ret, e.message);
		goto out;
	}
	if (S_ISLNK(st->mode)) {
		char target[4096];
		ssize_t len = ek_readlink(inode, target, sizeof(target), &e);

		if (len < 0) {
			check_problem_inode(c, path, st->nid, (int)len, e.message);
			goto out;
		}
		if (dirfd >= 0 && extract_symlink(&c->x, dirfd, name, target, &e)) {
			check_io_failure(c, path, &e);
			goto out;
		}
	} else if (dirfd >= 0 && extract_special(&c->x, dirfd, name, st, &e)) {
		check_io_failure(c, path, &e);
		goto out;
	}
	if (dirfd >= 0) {
		if (extract_set_meta(&c->x, dirfd, name, st, &xl, &e))
			check_io_failure(c, path, &e);
		else
			made = true;
	}
out:
	set_entry_mode(c, st->nid, st->mode, made);
	xattr_list_free(&xl);
}

static void check_dots(struct checker *c, const struct entries *es,
		       const ek_stat *st, uint64_t parent, const char *shown)
{
	unsigned int dots = 0, dotdots = 0;
	size_t i;

	for (i = 0; i < es->n; i++) {
		char msg[160];

		if (!strcmp(es->v[i].name, ".")) {
			dots++;
			if (es->v[i].nid != st->nid) {
				snprintf(msg, sizeof(msg),
					 "\".\" points to nid %llu, not to the directory itself",
					 (unsigned long long)es->v[i].nid);
				check_problem_entry(c, shown, st->nid, -EUCLEAN, msg);
			}
		} else if (!strcmp(es->v[i].name, "..")) {
			dotdots++;
			if (es->v[i].nid != parent) {
				snprintf(msg, sizeof(msg),
					 "\"..\" points to nid %llu, not to the parent %llu",
					 (unsigned long long)es->v[i].nid,
					 (unsigned long long)parent);
				check_problem_entry(c, shown, st->nid, -EUCLEAN, msg);
			}
		}
	}
	if (dots != 1 || dotdots != 1) {
		char msg[96];

		snprintf(msg, sizeof(msg), "directory has %u \".\" and %u \"..\" entries, "
			 "not one of each", dots, dotdots);
		check_problem_entry(c, shown, st->nid, -EUCLEAN, msg);
	}
}

/* One entry other than "." and "..". */
static void visit_entry(struct checker *c, struct dir_job *d, unsigned int worker,
			int dirfd, const struct entry *en, struct file_batch **batch)
{
	char *cpath = path_join(d->path, en->name);
	ek_inode *child = NULL;
	bool owner;
	ek_error e;
	int ret;

	if (!cpath) {
		check_problem_entry(c, d->path, d->nid, -ENOMEM, "out of memory");
		return;
	}
	if (claim(c, en->nid, cpath, &owner)) {
		check_problem_entry(c, cpath, en->nid, -ENOMEM, "out of memory");
		goto out;
	}
	if (!owner) {
		if (en->type == EK_FT_DIR)
			check_defer_dupdir(c, en->nid, cpath);
		else if (c->extracting)
			check_defer_link(c, en->nid, cpath);
		goto out;
	}
	ret = ek_inode_get(c->img, en->nid, &child, &e);
	if (ret) {
		check_problem_inode(c, cpath, en->nid, ret, e.message);
		goto out;
	}
	atomic_fetch_add(&c->inodes, 1);
	if (ek_file_type_of_mode(ek_inode_stat(child)->mode) != en->type) {
		char msg[128];

		snprintf(msg, sizeof(msg),
			 "directory entry type %u does not match the inode's mode 0%o",
			 en->type, ek_inode_stat(child)->mode);
		check_problem_entry(c, cpath, en->nid, -EUCLEAN, msg);
		set_entry_mode(c, en->nid, ek_inode_stat(child)->mode, false);
		goto out;
	}
	switch (ek_inode_stat(child)->mode & S_IFMT) {
	case S_IFDIR:
		set_entry_mode(c, en->nid, S_IFDIR, false);
		if (dirfd >= 0 && extract_mkdir(&c->x, dirfd, en->name, &e)) {
			check_io_failure(c, cpath, &e);
			break;
		}
		if (queue_dir(c, worker, en->nid, d->nid, cpath, d->depth + 1))
			check_problem_entry(c, cpath, en->nid, -ENOMEM, "out of memory");
		break;
	case S_IFREG: {
		struct xattr_list xl = { 0 };

		set_entry_mode(c, en->nid, S_IFREG, false);
		atomic_fetch_add(&c->regular_files, 1);
		ret = xattr_list_collect(child, &xl, &e);
		if (ret) {
			check_problem_inode(c, cpath, en->nid, ret, e.message);
			xattr_list_free(&xl);
		}
		check_add_file(c, worker, dirfd, batch, child, cpath, &xl);
		child = NULL;   /* the file work owns it now */
		break;
	}
	default:
		visit_leaf(c, dirfd, en->name, cpath, child);
		break;
	}
out:
	if (child)
		ek_inode_put(child);
	free(cpath);
}

static void walk_dir(struct checker *c, struct dir_job *d, unsigned int worker)
{
	const char *shown = *d->path ? d->path : "/";
	struct file_batch *batch = NULL;
	struct entries es = { 0 };
	struct xattr_list xl = { 0 };
	ek_inode *dir;
	int dirfd = -1;
	size_t i;
	ek_error e;
	int ret;

	ret = ek_inode_get(c->img, d->nid, &dir, &e);
	if (ret) {
		check_problem_inode(c, shown, d->nid, ret, e.message);
		return;
	}
	atomic_fetch_add(&c->directories, 1);
	if (d->depth > MAX_DEPTH) {
		check_problem_entry(c, shown, d->nid, -EUCLEAN,
				    "directory tree deeper than 2048 levels");
		goto out;
	}
	ret = xattr_list_collect(dir, &xl, &e);
	if (ret) {
		check_problem_inode(c, shown, d->nid, ret, e.message);
		xattr_list_free(&xl);
	}
	if (c->extracting &&
	    check_defer_dir(c, d->path[0] ? d->path + 1 : "", d->depth,
			    ek_inode_stat(dir), &xl)) {
		check_problem_entry(c, shown, d->nid, -ENOMEM, "out of memory");
		goto out;
	}
	ret = ek_readdir(dir, 0, collect_entry, &es, &e);
	if (ret) {
		check_problem_inode(c, shown, d->nid, ret,
				    ret == -ENOMEM ? "out of memory" : e.message);
		goto out;
	}
	check_dots(c, &es, ek_inode_stat(dir), d->parent, shown);
	if (c->extracting &&
	    extract_open_dir(&c->x, d->path[0] ? d->path + 1 : "", &dirfd, &e)) {
		check_io_failure(c, shown, &e);
		goto out;
	}
	for (i = 0; i < es.n && !atomic_load(&c->stop); i++) {
		if (!strcmp(es.v[i].name, ".") || !strcmp(es.v[i].name, ".."))
			continue;
		visit_entry(c, d, worker, dirfd, &es.v[i], &batch);
	}
	check_flush_batch(c, worker, &batch);
out:
	if (dirfd >= 0)
		close(dirfd);
	free_entries(&es);
	xattr_list_free(&xl);
	ek_inode_put(dir);
}

static void run_dir(struct pool_job *job, unsigned int worker)
{
	struct dir_job *d = (struct dir_job *)job;

	if (!atomic_load(&d->c->stop))
		walk_dir(d->c, d, worker);
	free(d->path);
	free(d);
}

int check_walk(struct checker *c)
{
	uint64_t root = ek_root_nid(c->img);
	bool owner;

	if (claim(c, root, "", &owner))
		return -ENOMEM;
	set_entry_mode(c, root, S_IFDIR, false);
	atomic_fetch_add(&c->inodes, 1);
	return queue_dir(c, 0, root, root, "", 0);
}
