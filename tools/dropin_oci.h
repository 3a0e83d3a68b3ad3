/* mkfs.erofs --oci[=OPTIONS] DESTINATION IMAGE: upstream's spelling of a
 * build from a registry, in erofskit mkfs's words (dropin_oci.c). */
#ifndef EK_TOOLS_DROPIN_OCI_H
#define EK_TOOLS_DROPIN_OCI_H

#include <stdbool.h>
#include <stddef.h>

struct dropin_oci {
	char reference[600];    /* --oci's: oci://REGISTRY/REPO[:TAG|@DIGEST] */
	char platform[80];      /* --platform's, "" for erofskit's default */
	char layer[80];         /* --oci-layer's, "" for every layer flattened */
	bool plain_http;        /* -o plain_http */
	char credentials[512];  /* "user:password", "" for none */
};

/* options: what followed "--oci=" (NULL for a bare --oci); image: the
 * SOURCE operand, upstream's image reference (REGISTRY/REPO[:TAG], or
 * Docker Hub's REPO[:TAG]).  0, or -1 with why filled. */
int dropin_oci_parse(const char *options, const char *image, struct dropin_oci *out,
		     char *why, size_t why_size);

#endif
