/*
 * Extents that failed to decode, remembered per image so that reading
 * them again fails at once with the same message: a damaged cluster
 * shared by many files (a packed inode's) costs one decode, not one per
 * file.  Bounded: the oldest entries are forgotten.
 */
#ifndef EK_READ_BADMEMO_H
#define EK_READ_BADMEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

struct badmemo;

struct badmemo *badmemo_create(void);
void badmemo_destroy(struct badmemo *m);
/* Record a failure of extent (nid, la). */
void badmemo_add(struct badmemo *m, uint64_t nid, uint64_t la, const ek_error *err);
/* If (nid, la) failed before, fill err and return its code; else 0. */
int badmemo_check(struct badmemo *m, uint64_t nid, uint64_t la, ek_error *err);

#endif
