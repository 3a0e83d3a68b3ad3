/*
 * Tar archives into one image (tar.c): the archive of --tar, or the
 * layers of an OCI image, read in order into one tree.
 */
#ifndef EK_WRITE_TAR_H
#define EK_WRITE_TAR_H

#include <stdbool.h>
#include <stdint.h>

#include "erofskit/build.h"
#include "util/digest.h"
#include "write/tarstream.h"

struct tar_layer {
	const char *path;             /* NULL: standard input */
	const struct tarstream_feed *feed;   /* not NULL: read as it is written */
	const char *name;             /* what messages call it; NULL: path */
	/* A blob named by its digest (an OCI layer): its size and SHA-256,
	 * and the SHA-256 of the tar it holds if expect says, are checked as
	 * it is read; a mismatch fails the build. */
	bool verify;
	struct tarstream_expect expect;
};

/*
 * Build image_path from count archives read in order.  flatten: later
 * layers' whiteouts (.wh.NAME, .wh..wh..opq) delete what earlier layers
 * hold, as an OCI image's layers are applied; otherwise one archive, its
 * whiteouts recorded for overlayfs when opts->aufs.
 */
int tar_build_layers(const char *image_path, const struct tar_layer *layers, size_t count,
		     bool flatten, const ek_build_options *opts, ek_build_stats *stats,
		     ek_error *err);

#endif
