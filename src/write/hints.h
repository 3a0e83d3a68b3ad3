/* Per-file physical cluster sizes: mkfs.erofs's --compress-hints file. */
#ifndef EK_WRITE_HINTS_H
#define EK_WRITE_HINTS_H

#include <stdint.h>

#include "erofskit/build.h"

struct hints;

/* A node keeps the number of its rule in a byte (0: none). */
#define HINTS_MAX 255u

/*
 * Read the rules of the file at path: one a line, "SIZE [ALGORITHM]
 * REGEX"; blank lines and lines from '#' are skipped.  check(size, err)
 * judges each SIZE as -C's is judged.  Errors name the file and line:
 * -EINVAL for a bad line, a size check refuses or a pattern that is not
 * a POSIX extended regular expression; the file's own errno.
 */
int hints_open(const char *path, int (*check)(const void *ctx, uint32_t size, ek_error *err),
	       const void *ctx, struct hints **out, ek_error *err);
void hints_close(struct hints *h);
/* The number (from 1) of the first rule whose pattern is found in rel, a
 * path under the source without a leading '/'; 0 when none is. */
unsigned int hints_rule(const struct hints *h, const char *rel);
/* Rule `rule`'s cluster size, bytes (rule from hints_rule, not 0). */
uint32_t hints_cluster(const struct hints *h, unsigned int rule);
/* The largest of them (0 without rules). */
uint32_t hints_largest(const struct hints *h);

#endif
