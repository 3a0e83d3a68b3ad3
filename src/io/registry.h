/* OCI registries (registry.c): images stored as artifacts of media type
 * application/vnd.erofs, resolved to a blob read by Range, and pushed. */
#ifndef EK_IO_REGISTRY_H
#define EK_IO_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

#define OCI_EROFS_MEDIA_TYPE "application/vnd.erofs"
#define OCI_DIGEST_MAX 72          /* "sha256:" + 64 + NUL, rounded */

struct oci_ref {
	char host[256];            /* registry[:port] */
	char repo[256];
	char tag[129];             /* "" when by digest */
	char digest[OCI_DIGEST_MAX];
};

/* oci://REGISTRY/REPO, with :TAG (default "latest") or @sha256:DIGEST;
 * names as the distribution spec allows them. */
int oci_parse_ref(const char *s, struct oci_ref *r, ek_error *err);

/* An image's blob: where, with which authorization, and what it is. */
struct oci_blob {
	char url[1200];
	char auth[8192];           /* "Authorization: ..." or "" */
	char digest[OCI_DIGEST_MAX];
	uint64_t size;
	void *renew_ctx;           /* for oci_renew; oci_release frees it */
};

/* ref: oci://REGISTRY/REPO[:TAG|@sha256:DIGEST]; the manifest's (or an
 * index's first manifest with one) layer of media type
 * application/vnd.erofs. */
int oci_resolve(const char *ref, const ek_http_options *o, struct oci_blob *blob,
		ek_error *err);
/* A new authorization for a blob's reads when the registry answers 401
 * (a token expired), as io_http_extra's renew wants. */
int oci_renew(void *ctx, const char *challenge, char *out, size_t size);
void oci_release(void *ctx);
/* Upload image as an artifact tagged ref; the manifest's digest out. */
int oci_push(const char *image, const char *ref, const ek_http_options *o,
	     char *manifest_digest, size_t digest_size, ek_error *err);

#endif
