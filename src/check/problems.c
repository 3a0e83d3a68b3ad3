/*
 * Problems are collected, then reported sorted: by path in walk order,
 * then message, duplicates removed.  A problem of an inode (its data, its
 * xattrs) is reported under the inode's smallest name, so the report does
 * not depend on which worker met which name first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check/checker.h"
#include "util/error.h"

static const struct data_where nowhere = { EK_NO_OFFSET, EK_NO_OFFSET, NULL };

static void add(struct checker *c, const char *path, uint64_t nid, bool by_inode,
		int code, const char *msg, const struct data_where *w)
{
	struct problem *p;

	pthread_mutex_lock(&c->lock);
	if (c->nproblems == c->cap_problems) {
		size_t cap = c->cap_problems ? c->cap_problems * 2 : 16;
		struct problem *g = realloc(c->problems, cap * sizeof(*g));

		if (!g) {
			pthread_mutex_unlock(&c->lock);
			return;
		}
		c->problems = g;
		c->cap_problems = cap;
	}
	p = &c->problems[c->nproblems];
	p->path = strdup(path && *path ? path : "/");
	p->message = strdup(msg);
	p->nid = nid;
	p->by_inode = by_inode;
	p->code = code;
	p->where = *w;
	if (p->path && p->message)
		c->nproblems++;
	else {
		free(p->path);
		free(p->message);
	}
	pthread_mutex_unlock(&c->lock);
}

void check_problem_entry(struct checker *c, const char *path, uint64_t nid,
			 int code, const char *msg)
{
	add(c, path, nid, false, code, msg, &nowhere);
}

void check_problem_inode(struct checker *c, const char *path, uint64_t nid,
			 int code, const char *msg)
{
	add(c, path, nid, true, code, msg, &nowhere);
}

void check_problem_data(struct checker *c, const char *path, uint64_t nid,
			int code, const char *msg, const struct data_where *w)
{
	add(c, path, nid, true, code, msg, w);
}

void check_io_failure(struct checker *c, const char *path, const ek_error *e)
{
	bool first = false;

	atomic_fetch_add(&c->io_errors, 1);
	pthread_mutex_lock(&c->lock);
	if (!atomic_load(&c->stop)) {
		c->fatal = *e;
		first = true;
		atomic_store(&c->stop, true);
	}
	pthread_mutex_unlock(&c->lock);
	if (first) {
		const char *shown = path && *path ? path : "/";
		size_t len = strlen(shown);

		/* Messages of the extraction name their entry already. */
		if (strncmp(c->fatal.message, shown, len) || c->fatal.message[len] != ':')
			err_prefix(&c->fatal, "%s: ", shown);
	}
}

static int cmp_problem(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;
	int r = path_cmp(x->path, y->path);

	return r ? r : strcmp(x->message, y->message);
}

void check_report_problems(struct checker *c)
{
	size_t i;

	/* Inode problems move to the inode's smallest name. */
	for (i = 0; i < c->nproblems; i++) {
		struct problem *p = &c->problems[i];
		struct nid_entry *e;
		bool fresh;

		if (!p->by_inode)
			continue;
		e = nidset_get(&c->seen, p->nid, &fresh);
		if (e && e->min_path && path_cmp(e->min_path, p->path)) {
			char *np = strdup(*e->min_path ? e->min_path : "/");

			if (np) {
				free(p->path);
				p->path = np;
			}
		}
	}
	if (c->nproblems)
		qsort(c->problems, c->nproblems, sizeof(*c->problems), cmp_problem);
	for (i = 0; i < c->nproblems; i++) {
		struct problem *p = &c->problems[i];

		if (i && !strcmp(p->path, c->problems[i - 1].path) &&
		    !strcmp(p->message, c->problems[i - 1].message))
			continue;
		c->st->problems++;
		if (c->o->problem) {
			ek_problem shown = {
				.path = p->path, .nid = p->nid, .code = p->code,
				.message = p->message, .offset = p->where.offset,
				.image_offset = p->where.image_offset,
				.decoder = p->where.decoder,
			};

			c->o->problem(c->o->problem_ctx, &shown);
		}
	}
	for (i = 0; i < c->nproblems; i++) {
		free(c->problems[i].path);
		free(c->problems[i].message);
	}
	free(c->problems);
	c->problems = NULL;
	c->nproblems = c->cap_problems = 0;
}
