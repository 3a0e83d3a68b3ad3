/*
 * A registry image's layers fetched ahead of the build (pullahead.c),
 * several at once, each on a thread and a connection of its own, started
 * in order, while the build reads them: a layer is read as its bytes
 * land, so the download and the build overlap instead of following each
 * other.  Layer N comes down into blobs/sha256/HEX.N.part of the scratch
 * layout and takes its name once whole, as ocipull_blob's do; what the
 * build reads is checked by it (size, digest, diff_id) as a layout's
 * blobs are, so bytes a registry changes between tries fail the build.
 */
#ifndef EK_WRITE_PULLAHEAD_H
#define EK_WRITE_PULLAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofskit/erofskit.h"
#include "util/digest.h"
#include "write/ocipull.h"
#include "write/tarstream.h"

struct pullahead;

struct pullahead_blob {
	char hex[2 * DIGEST_SIZE + 1];
	uint64_t size;
};

/* Called on a fetching thread as a blob's bytes land, one call at a time,
 * and with no lock of the fetch held (readers do not wait on it): the
 * bytes of all blobs on disk so far, never a total counted before one
 * already told. */
typedef void (*pullahead_progress_fn)(void *ctx, uint64_t fetched);

/* Start fetching blobs[0..n) (copied), started in order, downloads at
 * once (0: the default, 3; at most EK_HTTP_DOWNLOADS_MAX).  window: how
 * many may be on disk at once, counting those not yet dropped (0: no
 * bound).  cancel (may be NULL) stops the fetch as the build's cancel
 * does.  A failed fetch fails its blob and every later one not yet
 * whole, with its error. */
int pullahead_start(struct ocipull *pull, const struct pullahead_blob *blobs, size_t n,
		    size_t window, size_t downloads, pullahead_progress_fn progress, void *ctx,
		    const volatile int *cancel, struct pullahead **out, ek_error *err);

/* Blob i as a tarstream reads it, as it comes down (its open gives a
 * descriptor of the reader's own; its wait, the bytes landed so far, a
 * failed fetch's error); valid until pullahead_stop. */
const struct tarstream_feed *pullahead_feed(struct pullahead *a, size_t i);

/* Blob i is no longer needed: its file goes (its space back once read). */
void pullahead_drop(struct pullahead *a, size_t i);

/* Stop what is still coming down, wait for the thread, free it.  NULL
 * is fine. */
void pullahead_stop(struct pullahead *a);

#endif
