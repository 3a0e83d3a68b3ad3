/* Per-file physical cluster sizes and algorithms: mkfs.erofs's
 * --compress-hints file. */
#ifndef EK_WRITE_HINTS_H
#define EK_WRITE_HINTS_H

#include <stdint.h>

#include "erofskit/build.h"

struct hints;

/* A node keeps the number of its rule in a byte (0: none). */
#define HINTS_MAX 255u

/*
 * Read the rules of the file at path: one a line, "SIZE [ALGORITHM]
 * REGEX"; blank lines and lines from '#' are skipped.  check(size,
 * algorithm, err) judges each SIZE as -C's is judged, for the algorithm
 * (0 when none is given), and the algorithm.  Errors name the file and line:
 * -EINVAL for a bad line, a size check refuses or a pattern that is not
 * a POSIX extended regular expression; the file's own errno.
 */
typedef int (*hints_check_fn)(const void *ctx, uint32_t size, unsigned int algorithm,
			      ek_error *err);
int hints_open(const char *path, hints_check_fn check, const void *ctx, struct hints **out,
	       ek_error *err);
void hints_close(struct hints *h);
/* The number (from 1) of the first rule whose pattern is found in rel, a
 * path under the source without a leading '/'; 0 when none is. */
unsigned int hints_rule(const struct hints *h, const char *rel);
/* Rule `rule`'s cluster size, bytes (rule from hints_rule, not 0). */
uint32_t hints_cluster(const struct hints *h, unsigned int rule);
/* ... and its algorithm, a place in -z's list (0: the first). */
unsigned int hints_algorithm(const struct hints *h, unsigned int rule);
/* The largest of them (0 without rules). */
uint32_t hints_largest(const struct hints *h);

#endif
