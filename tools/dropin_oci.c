/*
 * mkfs.erofs --oci[=OPTIONS] DESTINATION IMAGE, as erofs-utils spells a
 * build from a registry: OPTIONS a comma list of f (a full image, the
 * default), i (index-only, refused: erofskit indexes only a tar it is
 * given), platform=OS/ARCH, layer=N (from 0), blob=DIGEST, username=U,
 * password=P and insecure (plain HTTP); IMAGE a reference as Docker
 * writes one.  Here they become erofskit mkfs's --oci oci://...,
 * --platform, --oci-layer and -o plain_http, and the credentials its
 * environment's EK_REGISTRY_AUTH_ENV (the library reads them there).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dropin_oci.h"

struct parse {
	struct dropin_oci *out;
	char user[256], password[256];
	bool layer_by_number, layer_by_blob;
	char *why;
	size_t why_size;
};

#define WHY(p, ...) (snprintf((p)->why, (p)->why_size, __VA_ARGS__), -1)

/* value into a buffer of its own; too long is an error naming what. */
static int copy(struct parse *p, char *to, size_t size, const char *what, const char *value)
{
	if (!*value)
		return WHY(p, "%s is empty", what);
	if (strlen(value) >= size)
		return WHY(p, "%s is longer than %zu bytes", what, size - 1);
	memcpy(to, value, strlen(value) + 1);
	return 0;
}

static int take_full(struct parse *p, const char *value)
{
	(void)p;
	(void)value;
	return 0;
}

static int refuse_index(struct parse *p, const char *value)
{
	(void)value;
	return WHY(p, "i (an index-only image of a registry's layers) is not supported by "
		      "erofskit: build a full one (f), or index a layer's tar with --tar=i");
}

static int take_platform(struct parse *p, const char *value)
{
	return copy(p, p->out->platform, sizeof(p->out->platform), "platform=", value);
}

/* layer=N counts from 0 upstream, --oci-layer from 1. */
static int take_layer(struct parse *p, const char *value)
{
	uint32_t n;

	if (!cli_parse_count(value, 0, UINT32_MAX - 1, &n))
		return WHY(p, "layer='%.40s': expected a layer's index from 0", value);
	p->layer_by_number = true;
	snprintf(p->out->layer, sizeof(p->out->layer), "%lu", (unsigned long)n + 1);
	return 0;
}

/* blob=DIGEST, with or without its "sha256:" (the library checks the
 * digits). */
static int take_blob(struct parse *p, const char *value)
{
	const char *hex = strncmp(value, "sha256:", 7) ? value : value + 7;

	if (!*hex || strlen(hex) + 8 > sizeof(p->out->layer))
		return WHY(p, "blob='%.80s': expected sha256:HEX", value);
	p->layer_by_blob = true;
	snprintf(p->out->layer, sizeof(p->out->layer), "sha256:%s", hex);
	return 0;
}

static int take_user(struct parse *p, const char *value)
{
	if (strchr(value, ':'))
		return WHY(p, "username= may not hold a ':'");
	return copy(p, p->user, sizeof(p->user), "username=", value);
}

static int take_password(struct parse *p, const char *value)
{
	return copy(p, p->password, sizeof(p->password), "password=", value);
}

/* Upstream's insecure is plain HTTP (erofskit's insecure is a
 * certificate left unchecked, which this never asks for). */
static int take_insecure(struct parse *p, const char *value)
{
	(void)value;
	p->out->plain_http = true;
	return 0;
}

/* Every option --oci's list takes. */
static const struct {
	const char *name;       /* "platform=" takes a value */
	int (*take)(struct parse *p, const char *value);
} options[] = {
	{ "f", take_full },
	{ "i", refuse_index },
	{ "platform=", take_platform },
	{ "layer=", take_layer },
	{ "blob=", take_blob },
	{ "username=", take_user },
	{ "password=", take_password },
	{ "insecure", take_insecure },
};

static int take_option(struct parse *p, const char *token)
{
	size_t i, len;

	for (i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		len = strlen(options[i].name);
		if (options[i].name[len - 1] == '=' ? !strncmp(token, options[i].name, len)
						    : !strcmp(token, options[i].name))
			return options[i].take(p, token + len);
	}
	return WHY(p, "unknown option '%.80s' (they are: f, i, platform=, layer=, blob=, "
		      "username=, password=, insecure)", token);
}

/* Docker's reading of a reference: the first component is a registry
 * when it has a '.' or a ':' or is localhost; otherwise the image is
 * Docker Hub's (the library maps docker.io and library/ from there). */
static int reference(struct parse *p, const char *image)
{
	const char *slash = strchr(image, '/');
	size_t first = slash ? (size_t)(slash - image) : 0;
	bool registry = slash && (memchr(image, '.', first) || memchr(image, ':', first) ||
				  (first == 9 && !strncmp(image, "localhost", 9)));
	int n;

	if (!*image)
		return WHY(p, "the image reference is empty");
	if (!strncmp(image, "oci://", 6))
		n = snprintf(p->out->reference, sizeof(p->out->reference), "%s", image);
	else
		n = snprintf(p->out->reference, sizeof(p->out->reference), "oci://%s%s",
			     registry ? "" : "docker.io/", image);
	if (n < 0 || (size_t)n >= sizeof(p->out->reference))
		return WHY(p, "the image reference is too long");
	return 0;
}

int dropin_oci_parse(const char *options_list, const char *image, struct dropin_oci *out,
		     char *why, size_t why_size)
{
	struct parse p = { .out = out, .why = why, .why_size = why_size };
	char token[600];
	const char *at = options_list, *comma;
	size_t len;

	memset(out, 0, sizeof(*out));
	for (; at && *at; at = comma ? comma + 1 : NULL) {
		comma = strchr(at, ',');
		len = comma ? (size_t)(comma - at) : strlen(at);
		if (len >= sizeof(token))
			return WHY(&p, "an option of %zu bytes", len);
		memcpy(token, at, len);
		token[len] = '\0';
		if (take_option(&p, token))
			return -1;
	}
	if (p.layer_by_number && p.layer_by_blob)
		return WHY(&p, "layer= and blob= each pick a layer: give one");
	if (!*p.user != !*p.password)
		return WHY(&p, "username= and password= go together");
	if (*p.user && snprintf(out->credentials, sizeof(out->credentials), "%s:%s", p.user,
				p.password) >= (int)sizeof(out->credentials))
		return WHY(&p, "username= and password= are too long");
	return reference(&p, image);
}
