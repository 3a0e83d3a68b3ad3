/* Path strings. */
#ifndef EK_UTIL_PATH_H
#define EK_UTIL_PATH_H

/* "dir/name", newly allocated (NULL when out of memory). */
char *path_join(const char *dir, const char *name);

#endif
