/* What a check run reported, to compare runs with different worker counts. */
#ifndef EK_FUZZ_TRANSCRIPT_H
#define EK_FUZZ_TRANSCRIPT_H

#include <stddef.h>

#include "erofskit/check.h"

struct check_transcript {
	int ret;
	ek_check_stats st;
	char *text;        /* one line per problem reported, in order */
	size_t len, cap;
};

/* Run ek_check with opts (its problem callback is taken over). */
void transcript_run(ek_image *img, ek_check_options *opts,
		    struct check_transcript *t);

/* Abort, printing both, unless the runs reported the same: the same
 * return, counts and problems.  Runs that met extraction failures are
 * not compared (where the first one stops the walk depends on timing). */
void transcript_expect_same(const struct check_transcript *a,
			    const struct check_transcript *b);

void transcript_free(struct check_transcript *t);

/* Check img with one worker and then two, extracting into extract_dir
 * unless it is NULL and calling after() (if any) after each run, and
 * expect the same from both. */
void transcript_one_and_two(ek_image *img, const char *extract_dir,
			    void (*after)(void));

#endif
