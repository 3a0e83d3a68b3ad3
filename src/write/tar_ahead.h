/*
 * An archive's headers, read ahead (tar_ahead.c).  Where no entry's data
 * is read (index mode, the survey of layers), libarchive's parsing of the
 * next headers runs on a thread of its own while the caller builds the
 * tree from the earlier ones: the two take about equal time, so the pass
 * takes about the time of the parsing alone.  Where data is read, the
 * archive belongs to the caller (libarchive reads one archive from one
 * thread) and each header is read when asked for.
 */
#ifndef EK_WRITE_TAR_AHEAD_H
#define EK_WRITE_TAR_AHEAD_H

#include <stdbool.h>
#include <stdint.h>

#include "write/libarchive.h"

struct tar_header {
	struct archive_entry *entry;
	int status;                 /* archive_read_next_header2()'s */
	int64_t position;           /* where the header starts in the tar (< 0:
	                               unknown, after a failure) */
	uint64_t data_start;        /* where its data starts; after a failure,
	                               how much of the tar was read (UINT64_MAX:
	                               none of it, out of memory) */
	const char *why;            /* libarchive's message, status != ARCHIVE_OK */
	int errnum;                 /* and its archive_errno() */
};

struct tar_ahead;

/* threaded: no data will be read, and a second core may parse.  -ENOMEM
 * or -errno (the thread). */
int tar_ahead_start(struct archive *a, bool threaded, struct tar_ahead **out);
/* The next header, valid until the next call (the entry is reused); once
 * one ends the archive (ARCHIVE_EOF or a failure), that one again. */
const struct tar_header *tar_ahead_next(struct tar_ahead *q);
/* Stop reading (wherever it got to) and free; NULL is fine. */
void tar_ahead_stop(struct tar_ahead *q);

#endif
