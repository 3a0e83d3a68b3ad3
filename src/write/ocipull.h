/*
 * An image in an OCI registry (oci://REGISTRY/REPO[:TAG|@sha256:DIGEST])
 * as a scratch image layout under $TMPDIR (default /var/tmp), for oci.c
 * (ocipull.c): its index.json names what the reference names, and blobs
 * are fetched as they are needed.
 */
#ifndef EK_WRITE_OCIPULL_H
#define EK_WRITE_OCIPULL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "erofskit/erofskit.h"
#include "io/registry.h"

/* Where a layout keeps its blobs, and blob sha256:hex's path there. */
#define OCI_BLOBS "blobs/sha256"

static inline void oci_blob_path(const char *hex, char *out, size_t size)
{
	snprintf(out, size, OCI_BLOBS "/%s", hex);
}

struct ocipull {
	char *dir;                  /* the scratch layout */
	int dirfd;
	struct oci_pull *session;
	struct oci_pulled top;      /* what the reference names */
	char *ref;                  /* for more sessions (ocipull_session) */
	const ek_http_options *http;
};

/* The reference's manifest fetched into a new scratch layout; on failure
 * too, ocipull_close removes what was made. */
int ocipull_open(struct ocipull *p, const char *ref, const ek_http_options *http, ek_error *err);
/* The reference's tag, or NULL when it names a digest. */
const char *ocipull_tag(const struct ocipull *p);
/* blobs/sha256/HEX fetched unless it is here (a manifest or an index
 * from the manifests endpoint), at most size bytes. */
int ocipull_blob(struct ocipull *p, const char *hex, bool manifest, uint64_t size,
		 ek_error *err);
/* A blob's download goes through blobs/sha256/HEX.WHICH.part (which 0
 * for the layout's own fetches): opened empty (the fd, or -errno with
 * err), then, once its fetch has ended with ret, renamed HEX (ret 0) or
 * removed; ret, or the rename's failure.  Downloads of one blob under
 * way at once (an image may list a layer twice) need a which each: their
 * files are their own, and the last renamed keeps the name. */
int ocipull_part_open(struct ocipull *p, const char *hex, unsigned int which, ek_error *err);
int ocipull_part_done(struct ocipull *p, const char *hex, unsigned int which, int ret,
		      ek_error *err);
/* Another session with the registry, for downloads on another thread (a
 * session is one thread's at a time: its authorization is its own); end
 * it with oci_pull_end.  No request is made yet. */
int ocipull_session(const struct ocipull *p, struct oci_pull **out, ek_error *err);
/* A blob no longer needed (a layer built): its space back. */
void ocipull_drop_blob(struct ocipull *p, const char *hex);
void ocipull_close(struct ocipull *p);

#endif
