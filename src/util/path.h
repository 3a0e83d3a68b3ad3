/* Paths: their strings, and where a scratch file goes. */
#ifndef EK_UTIL_PATH_H
#define EK_UTIL_PATH_H

#include <stddef.h>

/* "dir/name", newly allocated (NULL when out of memory). */
char *path_join(const char *dir, const char *name);
/* The directory part of a relative path (into parent[size]) and its last
 * name; -ENAMETOOLONG when the directory part does not fit. */
int path_split(const char *rel, char *parent, size_t size, const char **name);
/* An unnamed file for scratch (O_TMPFILE, read-write), gone when closed:
 * in dir when given and it can hold one, else in $TMPDIR or /tmp.  The
 * fd, or -1 with errno set. */
int path_scratch_file(const char *dir);
/* The same, in the directory that holds file (where the user expects
 * the space beside it to be used). */
int path_scratch_beside(const char *file);
/* An unnamed file (O_TMPFILE, read-write) in the directory that holds
 * file and nowhere else, so that it can be linked there; -1 with errno
 * set where that filesystem makes none. */
int path_unnamed_beside(const char *file);

#endif
