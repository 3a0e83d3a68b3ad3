/* OCI registries (registry.c): images stored as artifacts of media type
 * application/vnd.erofs, resolved to a blob read by Range, and pushed. */
#ifndef EK_IO_REGISTRY_H
#define EK_IO_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofskit/erofskit.h"
#include "util/digest.h"

#define OCI_EROFS_MEDIA_TYPE "application/vnd.erofs"
/* The annotation that tags an image layout's index.json entry. */
#define OCI_REF_NAME "org.opencontainers.image.ref.name"
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
/* Pulling an image's manifests and blobs (mkfs --oci oci://...): a
 * session for one reference, its authorization kept between requests. */
struct oci_pull;
struct oci_pulled {
	char media_type[256];
	char hex[2 * DIGEST_SIZE + 1];   /* sha256 of its bytes */
	uint64_t size;
};
int oci_pull_begin(const char *ref, const ek_http_options *o, struct oci_pull **out,
		   ek_error *err);
void oci_pull_end(struct oci_pull *p);
/* The reference's tag, or NULL when it names a digest. */
const char *oci_pull_tag(const struct oci_pull *p);
/* The manifest (or index) the reference names, written to fd as sent
 * (by digest: checked against it); what it is into *top. */
int oci_pull_top(struct oci_pull *p, int fd, struct oci_pulled *top, ek_error *err);
/* The blob sha256:hex (a manifest: from the manifests endpoint) into fd,
 * refused past size bytes; the caller checks its digest.  progress, if
 * not NULL, hears of its bytes as they land, and may stop it. */
struct oci_pull_progress {
	bool (*fn)(void *ctx, uint64_t bytes);     /* false: stop (-ECANCELED) */
	void *ctx;
};
int oci_pull_blob(struct oci_pull *p, const char *hex, bool manifest, uint64_t size, int fd,
		  const struct oci_pull_progress *progress, ek_error *err);

/* Upload image as an artifact tagged ref; the manifest's digest out. */
int oci_push(const char *image, const char *ref, const ek_http_options *o,
	     char *manifest_digest, size_t digest_size, ek_error *err);

#endif
