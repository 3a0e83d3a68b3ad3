/* What a directory source's walk leaves out: the image being replaced,
 * when the tree holds it, and the paths and patterns the caller names
 * (mkfs.erofs's --exclude-path and --exclude-regex). */
#ifndef EK_WRITE_EXCLUDE_H
#define EK_WRITE_EXCLUDE_H

#include <stdbool.h>
#include <sys/stat.h>

#include "erofskit/build.h"

struct exclude;

/* The rules of o, and the file at image_path if there is one; *out NULL
 * when nothing is to be left out.  A pattern that is not a POSIX extended
 * regular expression: -EINVAL with err filled. */
int exclude_open(const ek_build_options *o, const char *image_path, struct exclude **out,
		 ek_error *err);
/* rel: a path under the source, as "usr/share/doc" (no leading '/'). */
bool exclude_path(struct exclude *x, const char *rel);
/* After lstat: the image itself (every name of it). */
bool exclude_file(const struct exclude *x, const struct stat *st);
/* A warning for each --exclude-path that matched nothing (a rule upstream
 * would have ignored as silently), then everything freed. */
void exclude_close(struct exclude *x, const char *source);

#endif
