/* Problem transcripts of check runs. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofskit/check.h"
#include "transcript.h"

#define TEXT_MAX (256u << 10)   /* more is not kept, on either side */

/* What one check run reported. */
struct check_transcript {
	int ret;
	ek_check_stats st;
	char *text;        /* one line per problem reported, in order */
	size_t len, cap;
};

static void note_problem(void *ctx, const ek_problem *pr)
{
	struct check_transcript *t = ctx;
	char line[1024];
	int n = snprintf(line, sizeof(line), "%s nid %" PRIu64 " code %d at %" PRIu64
			 " image %" PRIu64 " %s: %s\n", pr->path ? pr->path : "(null)",
			 (uint64_t)pr->nid, pr->code, pr->offset, pr->image_offset,
			 pr->decoder ? pr->decoder : "-", pr->message);
	size_t add = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;

	if (t->len + add + 1 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		char *p;

		while (cap < t->len + add + 1)
			cap *= 2;
		if (cap > TEXT_MAX || !(p = realloc(t->text, cap)))
			return;
		t->text = p;
		t->cap = cap;
	}
	memcpy(t->text + t->len, line, add);
	t->len += add;
	t->text[t->len] = '\0';
}

static void transcript_run(ek_image *img, ek_check_options *opts,
			   struct check_transcript *t)
{
	memset(t, 0, sizeof(*t));
	opts->problem = note_problem;
	opts->problem_ctx = t;
	t->ret = ek_check(img, opts, &t->st, NULL);
}

static void show(const char *label, const struct check_transcript *t)
{
	fprintf(stderr, "%s: ret %d, %" PRIu64 " inodes, %" PRIu64 " directories, "
		"%" PRIu64 " files, %" PRIu64 " problems\n%s", label, t->ret,
		t->st.inodes, t->st.directories, t->st.regular_files, t->st.problems,
		t->text ? t->text : "");
}

static void transcript_expect_same(const struct check_transcript *a,
				   const struct check_transcript *b)
{
	if (a->st.io_errors || b->st.io_errors)
		return;
	if (a->ret == b->ret && a->st.problems == b->st.problems &&
	    a->st.inodes == b->st.inodes && a->st.directories == b->st.directories &&
	    a->st.regular_files == b->st.regular_files && a->len == b->len &&
	    (!a->len || !memcmp(a->text, b->text, a->len)))
		return;
	fprintf(stderr, "check runs differ\n");
	show("first", a);
	show("second", b);
	abort();
}

static void transcript_free(struct check_transcript *t)
{
	free(t->text);
	t->text = NULL;
}

void transcript_one_and_two(const uint8_t *data, size_t size,
			    const char *extract_dir, void (*after)(void))
{
	struct check_transcript run[2];
	ek_check_options co;
	ek_image *img;
	unsigned int w;

	if (ek_open_memory(data, size, NULL, &img, NULL))
		return;
	for (w = 1; w <= 2; w++) {
		ek_check_options_init(&co);
		co.workers = w;
		co.extract_dir = extract_dir;
		transcript_run(img, &co, &run[w - 1]);
		if (after)
			after();
	}
	transcript_expect_same(&run[0], &run[1]);
	transcript_free(&run[0]);
	transcript_free(&run[1]);
	ek_close(img);
}
