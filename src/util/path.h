/* Path strings. */
#ifndef EK_UTIL_PATH_H
#define EK_UTIL_PATH_H

#include <stddef.h>

/* "dir/name", newly allocated (NULL when out of memory). */
char *path_join(const char *dir, const char *name);
/* The directory part of a relative path (into parent[size]) and its last
 * name; -ENAMETOOLONG when the directory part does not fit. */
int path_split(const char *rel, char *parent, size_t size, const char **name);

#endif
