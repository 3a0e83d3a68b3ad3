/* A directory's entries as stored: children plus "." and "..", sorted. */
#ifndef EK_WRITE_DIRENT_H
#define EK_WRITE_DIRENT_H

#include <stddef.h>

#include "format/dir.h"

struct build;
struct tnode;

/* Allocates *out (free() it); nids are those assigned so far. */
int dir_entries(struct build *b, const struct tnode *dir,
		struct fmt_dirent_in **out, size_t *count);

#endif
