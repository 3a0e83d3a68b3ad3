/*
 * Extents that failed to decode, remembered per image so that reading
 * them again fails at once with the same message: a damaged cluster
 * shared by many files (a packed inode's) costs one decode, not one per
 * file.  Bounded: the oldest entries are forgotten.
 */
#ifndef EK_READ_BADEXTENTS_H
#define EK_READ_BADEXTENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

struct bad_extents;

struct bad_extents *bad_extents_create(void);
void bad_extents_destroy(struct bad_extents *m);
/* Record a failure of extent (nid, la). */
void bad_extents_add(struct bad_extents *m, uint64_t nid, uint64_t la, const ek_error *err);
/* If (nid, la) failed before, fill err and return its code; else 0. */
int bad_extents_check(struct bad_extents *m, uint64_t nid, uint64_t la, ek_error *err);

#endif
