/* Check runs with one worker and with two must report the same. */
#ifndef EK_FUZZ_TRANSCRIPT_H
#define EK_FUZZ_TRANSCRIPT_H

#include "erofskit/check.h"

/*
 * Check img with one worker and then two, extracting into extract_dir
 * unless it is NULL and calling after() (if any) after each run.  Aborts,
 * printing both, unless the runs reported the same: the same return,
 * counts and problems.  Runs that met extraction failures are not
 * compared (where the first one stops the walk depends on timing).
 */
void transcript_one_and_two(ek_image *img, const char *extract_dir,
			    void (*after)(void));

#endif
