/*
 * Fuzz target: mkfs --oci over a layout made from the input.  The input is
 * parts separated by "\n--\n": part 0 is index.json, part i > 0 is a blob
 * stored under its digest.  So that mutations keep reaching past the
 * digest checks, "sha256:@N" in a part (N a digit, naming a later part)
 * becomes the digest of part N as stored, and "@@N" its size.  Whatever
 * the bytes, the build fails with an error, or writes an image that opens
 * and that fsck finds clean; --oci-layers does the same per layer, and
 * --oci-layer for the one it picks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <erofskit/build.h>

#include "clean.h"
#include "util/digest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PARTS 10
#define SEP "\n--\n"

struct part {
	char *text;          /* after substitution */
	size_t len;
	char hex[2 * DIGEST_SIZE + 1];
};

/* The part a reference at src[k] names (tag, then one digit naming a
 * later part), or -1. */
static int names_part(const char *src, size_t len, size_t k, const char *tag, size_t i,
		      size_t n)
{
	size_t t = strlen(tag);
	size_t which;

	if (k + t >= len || memcmp(src + k, tag, t) || src[k + t] < '0' || src[k + t] > '9')
		return -1;
	which = (size_t)(src[k + t] - '0');
	return which > i && which < n ? (int)which : -1;
}

/* Part i's text with its references to later parts resolved. */
static void substitute(struct part *parts, size_t n, size_t i, const char *src, size_t len)
{
	char *out = malloc(len * 9 + 1);   /* 9 bytes become 71 at most */
	size_t o = 0, k = 0;
	int which;

	if (!out)
		abort();
	while (k < len) {
		if ((which = names_part(src, len, k, "sha256:@", i, n)) >= 0) {
			o += (size_t)sprintf(out + o, "sha256:%s", parts[which].hex);
			k += strlen("sha256:@") + 1;
		} else if ((which = names_part(src, len, k, "@@", i, n)) >= 0) {
			o += (size_t)sprintf(out + o, "%zu", parts[which].len);
			k += strlen("@@") + 1;
		} else {
			out[o++] = src[k++];
		}
	}
	parts[i].text = out;
	parts[i].len = o;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		abort();
}

/* Each layer's image, once written: clean, then gone. */
static void layer_done(void *ctx, size_t index, size_t count, const char *image,
		       const ek_build_stats *stats)
{
	(void)ctx;
	(void)index;
	(void)count;
	(void)stats;
	fuzz_require_clean(image, "fuzz_oci");
	unlink(image);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[] = "/tmp/ek-fuzz-oci.XXXXXX";
	static int made;
	const char *starts[PARTS];
	size_t lens[PARTS], n = 0, i;
	struct part parts[PARTS];
	char path[256], image[256], layers[256];
	const char *p = (const char *)data, *end = p + size;
	ek_build_options o;
	ek_error err;

	if (!made) {
		char sub[300];

		fuzz_scratch_dir(dir);
		snprintf(sub, sizeof(sub), "%s/layout", dir);
		mkdir(sub, 0700);
		snprintf(sub, sizeof(sub), "%s/layout/blobs", dir);
		mkdir(sub, 0700);
		snprintf(sub, sizeof(sub), "%s/layout/blobs/sha256", dir);
		mkdir(sub, 0700);
		snprintf(sub, sizeof(sub), "%s/layout/oci-layout", dir);
		write_file(sub, "{\"imageLayoutVersion\":\"1.0.0\"}", 30);
		made = 1;
	}
	while (n < PARTS) {
		const char *sep = memmem(p, (size_t)(end - p), SEP, strlen(SEP));

		starts[n] = p;
		lens[n] = sep ? (size_t)(sep - p) : (size_t)(end - p);
		n++;
		if (!sep)
			break;
		p = sep + strlen(SEP);
	}
	/* Later parts first: earlier ones name their digests. */
	for (i = n; i-- > 0;) {
		uint8_t d[DIGEST_SIZE];

		substitute(parts, n, i, starts[i], lens[i]);
		digest_of(parts[i].text, parts[i].len, d);
		digest_to_hex(d, parts[i].hex);
		if (i == 0)
			snprintf(path, sizeof(path), "%s/layout/index.json", dir);
		else
			snprintf(path, sizeof(path), "%s/layout/blobs/sha256/%s", dir, parts[i].hex);
		write_file(path, parts[i].text, parts[i].len);
	}
	snprintf(path, sizeof(path), "%s/layout", dir);
	snprintf(image, sizeof(image), "%s/out.img", dir);
	snprintf(layers, sizeof(layers), "%s/layers", dir);
	ek_build_options_init(&o);
	o.workers = 1;
	if (!ek_build_oci(image, path, &o, NULL, &err)) {
		fuzz_require_clean(image, "fuzz_oci");
		unlink(image);
	}
	(void)ek_build_oci_layers(layers, path, &o, layer_done, NULL, &err);
	/* One layer alone (--oci-layer), which may be past the last. */
	o.oci_layer = size % 4 + 1;
	if (!ek_build_oci(image, path, &o, NULL, &err)) {
		fuzz_require_clean(image, "fuzz_oci");
		unlink(image);
	}
	for (i = 0; i < n; i++) {
		if (i) {
			snprintf(path, sizeof(path), "%s/layout/blobs/sha256/%s", dir, parts[i].hex);
			unlink(path);
		}
		free(parts[i].text);
	}
	return 0;
}
