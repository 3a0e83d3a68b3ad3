/* For the targets that write images (tar, OCI): what they write is clean. */
#ifndef EK_FUZZ_CLEAN_H
#define EK_FUZZ_CLEAN_H

/* Open image and check all of it; abort, naming who wrote it, unless it
 * opens and fsck finds no problem. */
void fuzz_require_clean(const char *image, const char *who);

/* Remove path and everything below it, following no symlink: 0, or -1
 * with errno at the first entry that could not be removed. */
int fuzz_rm_tree(const char *path);

/* Make a private scratch directory from template ("/tmp/NAME.XXXXXX",
 * changed in place) and remove it, with everything left in it, when the
 * process exits: a fuzz run or a seed replay leaves nothing in /tmp. */
void fuzz_scratch_dir(char *template);

#endif
