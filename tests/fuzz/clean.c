/* An image erofskit wrote must open and check clean, whatever its input. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include <erofskit/check.h>

#include "clean.h"

static void on_problem(void *ctx, const ek_problem *p)
{
	fprintf(stderr, "%s: the image it wrote has a problem: %s (nid %llu): %s\n",
		(const char *)ctx, p->path, (unsigned long long)p->nid, p->message);
	abort();
}

void fuzz_require_clean(const char *image, const char *who)
{
	ek_check_options co;
	ek_check_stats st;
	ek_error err;
	ek_image *img;

	if (ek_open(image, NULL, &img, &err)) {
		fprintf(stderr, "%s: the image it wrote does not open: %s\n", who, err.message);
		abort();
	}
	ek_check_options_init(&co);
	co.workers = 1;
	co.problem = on_problem;
	co.problem_ctx = (void *)who;
	if (ek_check(img, &co, &st, &err) || st.problems) {
		fprintf(stderr, "%s: checking the image it wrote failed: %s\n", who, err.message);
		abort();
	}
	ek_close(img);
}

static const char *scratch;

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

int fuzz_rm_tree(const char *path)
{
	return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_scratch(void)
{
	fuzz_rm_tree(scratch);
}

void fuzz_scratch_dir(char *template)
{
	if (!mkdtemp(template))
		abort();
	scratch = template;
	atexit(remove_scratch);
}
