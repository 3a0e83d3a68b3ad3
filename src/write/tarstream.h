/*
 * An archive's bytes on their way to libarchive (tarstream.c): read from a
 * file or standard input in large pieces (or, skimming a file for its
 * headers, a header's worth at a time, the data sought over); gzip,
 * zstd and xz decompressed here (ISA-L's inflate takes 0.6 of the time of
 * zlib's, which libarchive would use, on the root filesystem's .tar.gz;
 * and what is decompressed here can be copied out), any other
 * compression left to libarchive; and, for an OCI layer, the blob's size
 * and digest over the bytes as stored and its diff_id over the tar they
 * hold, checked at the end.
 */
#ifndef EK_WRITE_TARSTREAM_H
#define EK_WRITE_TARSTREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "erofskit/erofskit.h"
#include "util/digest.h"
#include "write/libarchive.h"

/* What a blob must be (an OCI layer's descriptor and config). */
struct tarstream_expect {
	uint8_t digest[DIGEST_SIZE];    /* of the bytes as stored */
	uint64_t size;
	bool check_diff_id;
	uint8_t diff_id[DIGEST_SIZE];   /* of the tar, decompressed */
};

struct tarstream;
struct writer;

/* A file still being written (a registry's layer as it comes down): the
 * stream reads what is there and waits for the rest. */
struct tarstream_feed {
	/* A descriptor of the file, the caller's own; -errno with err. */
	int (*open)(void *ctx, ek_error *err);
	/* Until the file holds more than have bytes or is whole: its bytes
	 * now (fewer than before when its writer started it again) and
	 * whether it is whole; -errno with err when its writer failed. */
	int (*wait)(void *ctx, uint64_t have, uint64_t *avail, bool *whole, ek_error *err);
	void *ctx;
};

/* path NULL: standard input; feed, if not NULL, stands for path (the
 * stream then never skims).  name: what messages call it.  x: NULL, or
 * what tarstream_finish() checks.  skim: libarchive will skip all data
 * (tarstream_skip).  -errno with err filled (a missing blob: -EUCLEAN). */
int tarstream_open(const char *path, const struct tarstream_feed *feed, const char *name,
		   const struct tarstream_expect *x, bool skim, struct tarstream **out,
		   ek_error *err);
/* Also write the tar as handed over (decompressed) to w, from its offset
 * 0, and on tarstream_finish() the rest of it: a copy of the whole tar,
 * tarstream_copied() bytes.  Before the first read; the stream must not
 * skim. */
void tarstream_copy_to(struct tarstream *s, struct writer *w);
uint64_t tarstream_copied(const struct tarstream *s);
/* Decode (gzip, zstd, xz) on a thread of its own, ahead of the reads, when
 * no read can wait on a writer (a regular file, a feed's file whole
 * already: stopping the thread must not wait for a download); else, or
 * if the thread cannot start, where it is read.  Before the first read,
 * after tarstream_copy_to(). */
void tarstream_decode_ahead(struct tarstream *s);
/* libarchive's read callback (ctx: the stream). */
la_ssize_t tarstream_read(struct archive *a, void *ctx, const void **out);
/* libarchive's skip callback: over a skimmed file's data without touching
 * it; else 0 (libarchive reads through). */
la_int64_t tarstream_skip(struct archive *a, void *ctx, la_int64_t request);
/* Bytes of the archive as stored read (or skipped) so far; from any
 * thread. */
uint64_t tarstream_consumed(const struct tarstream *s);
/* "gzip", "zstd" or "xz" when the stream decompresses what it hands
 * over, else NULL. */
const char *tarstream_compression(const struct tarstream *s);
/* The archive has ended (or failed: archive_failed): with expectations,
 * the rest of the blob is read and its size, digest and diff_id compared;
 * a feed's failure, then a blob that is not the one named, is the error
 * to report, before any the archive met. */
int tarstream_finish(struct tarstream *s, bool archive_failed, ek_error *err);
void tarstream_close(struct tarstream *s);

#endif
