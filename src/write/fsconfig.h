/*
 * Android's canned fs_config (mkfs.erofs --fs-config-file): a file whose
 * lines "PATH UID GID MODE [capabilities=N] ..." give each file of a
 * partition its owner, permission bits and file capabilities.  PATH is
 * the file's path on the device without the leading '/' and with the
 * partition's mount point in front ("system/bin/sh"); the partition's
 * root is the empty path (a line that starts with a blank, or "/").  As
 * Android's build writes them: other words ("selabel=...") are read past.
 */
#ifndef EK_WRITE_FSCONFIG_H
#define EK_WRITE_FSCONFIG_H

#include <stdint.h>

#include "erofskit/erofskit.h"

struct fsconfig_entry {
	uint32_t uid, gid;
	uint32_t mode;          /* permission bits, 07777 at most */
	uint64_t capabilities;  /* bit N: capability N; 0: none */
};

struct fsconfig;

/* Read the file at path: 0, or -errno with err naming the file and the
 * line at fault. */
int fsconfig_open(const char *path, struct fsconfig **out, ek_error *err);
void fsconfig_close(struct fsconfig *c);
/* The entry of key ("system/bin/sh", "" the root), NULL if it has none.
 * A path given twice takes its last line, as a later entry replaces an
 * earlier one. */
const struct fsconfig_entry *fsconfig_lookup(const struct fsconfig *c, const char *key);
/* The file it was read from, for messages. */
const char *fsconfig_path(const struct fsconfig *c);

#endif
