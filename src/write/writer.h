/*
 * The image file under construction: a temporary file beside the target,
 * written with positional writes, hashed in write order (for the default
 * content-derived UUID), renamed over the target only on success.
 */
#ifndef EK_WRITE_WRITER_H
#define EK_WRITE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

struct writer;

int writer_open(const char *target, struct writer **out, ek_error *err);
/* Every write fails (-ECANCELED) once *cancel is set (util/cancel.h). */
void writer_watch(struct writer *w, const volatile int *cancel);
/* Every offset from now on lies base bytes further into the file, the
 * bytes before them zeros (mkfs --offset: the image after a header). */
void writer_shift(struct writer *w, uint64_t base);
/* Write len bytes at off, hashed in write order. */
int writer_pwrite(struct writer *w, uint64_t off, const void *buf, size_t len,
		  ek_error *err);
/* Write without hashing (the superblock, which holds the hash). */
int writer_pwrite_unhashed(struct writer *w, uint64_t off, const void *buf,
			   size_t len, ek_error *err);
/* Forget bytes written earlier (they read as zeros again); not hashed. */
int writer_discard(struct writer *w, uint64_t off, uint64_t len, ek_error *err);
/* 128-bit digest of everything hashed so far. */
void writer_digest(struct writer *w, uint8_t out[16]);
/* Call hook(ctx, name, err) at the commit, once the file is whole and
 * flushed under its temporary name, before the rename: non-zero (err
 * filled) fails the commit, and the file goes. */
void writer_before_rename(struct writer *w, int (*hook)(void *ctx, const char *name,
							ek_error *err), void *ctx);
/* Set the final size, flush, rename over the target. Frees w. */
int writer_commit(struct writer *w, uint64_t size, ek_error *err);
/* Remove the temporary file. Frees w.  Safe with NULL. */
void writer_abort(struct writer *w);

#endif
