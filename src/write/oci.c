/*
 * OCI image layouts as a source (the OCI image-layout and image-manifest
 * specifications): index.json names manifests, a manifest names a config
 * and the layers, and each is a blob under blobs/sha256/HEX named by its
 * digest and size.  Every blob read is checked against its descriptor:
 * the JSON ones before they are parsed, the layers as they stream through
 * the tar reader (a mismatch fails the build; no image is left).
 *
 * The layers go through tar.c: flattened into one image (whiteouts
 * applied), or one image each with their whiteouts kept for overlayfs.
 * Nothing of the config is applied: owners stay the layers' numbers.
 * A registry's layers come down several at once, each on a thread of its
 * own (pullahead.c), and are read as they land.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util/cancel.h"
#include "util/digest.h"
#include "util/error.h"
#include "util/fdio.h"
#include "write/ocipull.h"
#include "write/pullahead.h"
#include "write/tar.h"

/* JSON blobs are small; these bound what a hostile layout makes us read. */
#define INDEX_MAX ((size_t)4 << 20)
#define MANIFEST_MAX ((size_t)4 << 20)
#define CONFIG_MAX ((size_t)16 << 20)
#define NESTED_INDEX_MAX 4      /* an index naming an index naming ... */


enum blob_kind { BLOB_MANIFEST, BLOB_INDEX, BLOB_CONFIG, BLOB_LAYER, BLOB_OTHER };

/* Every media type a layout may use for what we read. */
static const struct {
	const char *type;
	enum blob_kind kind;
} media_types[] = {
	{ "application/vnd.oci.image.manifest.v1+json", BLOB_MANIFEST },
	{ "application/vnd.docker.distribution.manifest.v2+json", BLOB_MANIFEST },
	{ "application/vnd.oci.image.index.v1+json", BLOB_INDEX },
	{ "application/vnd.docker.distribution.manifest.list.v2+json", BLOB_INDEX },
	{ "application/vnd.oci.image.config.v1+json", BLOB_CONFIG },
	{ "application/vnd.docker.container.image.v1+json", BLOB_CONFIG },
	{ "application/vnd.oci.image.layer.v1.tar", BLOB_LAYER },
	{ "application/vnd.oci.image.layer.v1.tar+gzip", BLOB_LAYER },
	{ "application/vnd.oci.image.layer.v1.tar+zstd", BLOB_LAYER },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar", BLOB_LAYER },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", BLOB_LAYER },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd", BLOB_LAYER },
	{ "application/vnd.docker.image.rootfs.diff.tar.gzip", BLOB_LAYER },
	{ "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", BLOB_LAYER },
};

struct descriptor {
	const char *media_type;     /* borrowed from the JSON holding it */
	enum blob_kind kind;
	uint8_t digest[DIGEST_SIZE];
	char hex[2 * DIGEST_SIZE + 1];
	uint64_t size;
};

struct platform {
	char os[64], arch[64], variant[64];   /* variant "": any */
};

struct layout {
	const char *name;           /* as the user named it: messages say it */
	const char *dir;            /* where it is: name, or a registry's
	                               image's scratch layout */
	int dirfd;
	bool remote;                /* pull fetches its blobs as they are read */
	struct ocipull pull;
	struct pullahead *ahead;    /* remote: its layers, coming down */
	const ek_build_options *opts;   /* its progress hears of the fetches */
	/* The build's progress and the fetch's reach opts->progress one at a
	 * time, the fetch's figures in both while layers are coming. */
	pthread_mutex_t progress_lock;
	uint64_t fetched, to_fetch;     /* the layers' bytes */
	struct platform platform;       /* an image index's entry to take */
	ek_error *err;
	json_t *manifest;           /* owns the layers' media type strings */
	struct descriptor *layers;
	size_t nlayers;
	/* Messages count the layers as the manifest does, when the build
	 * takes one of them (pick_layer): layers[0] is its first + 1-th of
	 * total. */
	size_t first, total;
	/* The config's rootfs.diff_ids, one per layer (NULL: it names none):
	 * the digests of the layers' tars, decompressed. */
	uint8_t (*diff_ids)[DIGEST_SIZE];
};

static enum blob_kind kind_of(const char *media_type)
{
	size_t i;

	for (i = 0; i < sizeof(media_types) / sizeof(media_types[0]); i++)
		if (!strcmp(media_types[i].type, media_type))
			return media_types[i].kind;
	return BLOB_OTHER;
}

/* A descriptor object: mediaType, digest "sha256:<64 hex>", size. */
static int parse_descriptor(struct layout *l, json_t *obj, const char *what,
			    struct descriptor *d)
{
	json_t *type = json_object_get(obj, "mediaType");
	json_t *digest = json_object_get(obj, "digest");
	json_t *size = json_object_get(obj, "size");
	const char *s;

	if (!json_is_object(obj) || !json_is_string(type) || !json_is_string(digest) ||
	    !json_is_integer(size))
		return err_fail(l->err, -EUCLEAN, "%s: %s is not a descriptor "
				"(mediaType, digest and size)", l->name, what);
	d->media_type = json_string_value(type);
	d->kind = kind_of(d->media_type);
	if (json_integer_value(size) < 0)
		return err_fail(l->err, -EUCLEAN, "%s: %s: a negative size", l->name, what);
	d->size = (uint64_t)json_integer_value(size);
	s = json_string_value(digest);
	if (strncmp(s, "sha256:", 7))
		return err_fail(l->err, -EUCLEAN, "%s: %s: digest '%.80s': only sha256 digests "
				"are supported", l->name, what, s);
	/* The spec's encoded digests are lower case; checked before the
	 * digest becomes part of a path. */
	if (digest_from_hex(s + 7, d->digest))
		return err_fail(l->err, -EUCLEAN, "%s: %s: digest '%.80s' is not 64 "
				"lower-case hex digits", l->name, what, s);
	digest_to_hex(d->digest, d->hex);
	return 0;
}

/* All of a small file at path (relative to the layout), at most max. */
static int read_small(struct layout *l, const char *path, size_t max, char **out, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = openat(l->dirfd, path, O_RDONLY | O_CLOEXEC), ret = 0;

	*out = NULL;
	if (fd < 0)
		return err_fail(l->err, -errno, "%s: %s: %s", l->name, path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(fd);
		return err_fail(l->err, -EUCLEAN, "%s: %s: not a regular file of at most %zu bytes",
				l->name, path, max);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf)
		ret = fd_pread_full(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	if (!buf)
		return err_fail(l->err, -ENOMEM, "out of memory");
	if (ret) {
		free(buf);
		return err_fail(l->err, ret, "%s: %s: %s", l->name, path,
				ret == -EIO ? "short read" : strerror(-ret));
	}
	buf[st.st_size] = '\0';
	*out = buf;
	*len = (size_t)st.st_size;
	return 0;
}

static int parse_json(struct layout *l, const char *what, const char *text, size_t len,
		      json_t **out)
{
	json_error_t why;

	*out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &why);
	if (!*out)
		return err_fail(l->err, -EUCLEAN, "%s: %s: not valid JSON (line %d: %s)",
				l->name, what, why.line, why.text);
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return err_fail(l->err, -EUCLEAN, "%s: %s: not a JSON object", l->name, what);
	}
	return 0;
}

/* A registry's JSON blob fetched into the scratch layout (a no-op for a
 * layout on disk, or a blob already here). */
static int fetch(struct layout *l, const struct descriptor *d)
{
	if (!l->remote)
		return 0;
	return ocipull_blob(&l->pull, d->hex, d->kind == BLOB_MANIFEST || d->kind == BLOB_INDEX,
			    d->size, l->err);
}

/* The build's progress, with the fetch's figures while layers are still
 * coming (the build reads them as they land). */
static void build_progress(void *ctx, const ek_build_progress *p)
{
	struct layout *l = ctx;
	ek_build_progress q = *p;

	pthread_mutex_lock(&l->progress_lock);
	if (l->fetched < l->to_fetch) {
		q.fetch_done = l->fetched;
		q.fetch_total = l->to_fetch;
	}
	l->opts->progress(l->opts->progress_ctx, &q);
	pthread_mutex_unlock(&l->progress_lock);
}

/* The fetch's progress, on its thread (only when there is a progress
 * callback to hear it). */
static void fetch_progress(void *ctx, uint64_t fetched)
{
	struct layout *l = ctx;
	ek_build_progress q = { .fetch_done = fetched, .fetch_total = l->to_fetch };

	pthread_mutex_lock(&l->progress_lock);
	l->fetched = fetched;
	l->opts->progress(l->opts->progress_ctx, &q);
	pthread_mutex_unlock(&l->progress_lock);
}

/* A registry's layers start coming down, window of them on disk at once
 * (0: all). */
static int start_fetching(struct layout *l, size_t window)
{
	struct pullahead_blob *blobs = calloc(l->nlayers ? l->nlayers : 1, sizeof(*blobs));
	int ret;

	if (!blobs)
		return err_fail(l->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < l->nlayers; i++) {
		memcpy(blobs[i].hex, l->layers[i].hex, sizeof(blobs[i].hex));
		blobs[i].size = l->layers[i].size;
		l->to_fetch += l->layers[i].size;
	}
	ret = pullahead_start(&l->pull, blobs, l->nlayers, window,
			      l->opts && l->opts->http ? l->opts->http->downloads : 0,
			      l->opts && l->opts->progress ? fetch_progress : NULL, l,
			      l->opts ? l->opts->cancel : NULL, &l->ahead, l->err);
	free(blobs);
	return ret;
}

/* The options a layer's build takes: opts, its progress through
 * build_progress for a registry's layers. */
static void layer_options(struct layout *l, ek_build_options *o)
{
	if (l->opts)
		*o = *l->opts;
	else
		ek_build_options_init(o);
	if (l->remote && o->progress) {
		o->progress = build_progress;
		o->progress_ctx = l;
	}
}

/* A JSON blob, its size and digest checked before it is parsed. */
static int read_json_blob(struct layout *l, const struct descriptor *d, size_t max,
			  json_t **out)
{
	char path[128], *text;
	uint8_t got[DIGEST_SIZE];
	size_t len;
	int ret;

	*out = NULL;
	oci_blob_path(d->hex, path, sizeof(path));
	if (d->size > max)
		return err_fail(l->err, -EUCLEAN, "%s: %s: %llu bytes, more than a %s may have",
				l->name, path, (unsigned long long)d->size, d->media_type);
	ret = fetch(l, d);
	if (!ret)
		ret = read_small(l, path, max, &text, &len);
	if (ret)
		return ret;
	digest_of(text, len, got);
	if (len != d->size)
		ret = err_fail(l->err, -EUCLEAN, "%s: %s: %zu bytes, where its descriptor says %llu",
			       l->name, path, len, (unsigned long long)d->size);
	else if (memcmp(got, d->digest, DIGEST_SIZE))
		ret = err_fail(l->err, -EUCLEAN, "%s: %s: its content does not match its digest",
			       l->name, path);
	else
		ret = parse_json(l, path, text, len, out);
	free(text);
	return ret;
}

/* Go's names for this machine's architecture, as OCI platforms use them. */
static const char *host_architecture(void)
{
	static const struct { const char *uname, *oci; } arch[] = {
		{ "x86_64", "amd64" }, { "aarch64", "arm64" }, { "i686", "386" },
		{ "armv7l", "arm" }, { "ppc64le", "ppc64le" }, { "s390x", "s390x" },
		{ "riscv64", "riscv64" },
	};
	struct utsname u;
	size_t i;

	if (uname(&u) < 0)
		return "";
	for (i = 0; i < sizeof(arch) / sizeof(arch[0]); i++)
		if (!strcmp(u.machine, arch[i].uname))
			return arch[i].oci;
	return "";
}

/* "OS/ARCH[/VARIANT]" (NULL: linux and this machine's architecture), as
 * image indexes name platforms. */
static int parse_platform(struct layout *l, const char *s, struct platform *p)
{
	const char *arch, *variant;

	memset(p, 0, sizeof(*p));
	if (!s) {
		snprintf(p->os, sizeof(p->os), "linux");
		snprintf(p->arch, sizeof(p->arch), "%s", host_architecture());
		return 0;
	}
	arch = strchr(s, '/');
	variant = arch ? strchr(arch + 1, '/') : NULL;
	if (!arch || arch == s || arch[1] == '/' || !arch[1] || (variant && !variant[1]) ||
	    (variant && strchr(variant + 1, '/')) || strlen(s) >= sizeof(p->os) ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-/") != strlen(s))
		return err_fail(l->err, -EINVAL, "platform '%.80s': expected OS/ARCH or "
				"OS/ARCH/VARIANT, as linux/arm64 or linux/arm/v7", s);
	snprintf(p->os, sizeof(p->os), "%.*s", (int)(arch - s), s);
	snprintf(p->arch, sizeof(p->arch), "%.*s", (int)(variant ? variant - arch - 1 :
							     (long)strlen(arch + 1)), arch + 1);
	if (variant)
		snprintf(p->variant, sizeof(p->variant), "%s", variant + 1);
	return 0;
}

/* An index entry for the platform wanted: the same os and architecture,
 * and variant when one is wanted; an entry that names no platform fits
 * any. */
static bool platform_matches(const struct platform *want, json_t *entry)
{
	json_t *p = json_object_get(entry, "platform");
	const char *os = json_string_value(json_object_get(p, "os"));
	const char *arch = json_string_value(json_object_get(p, "architecture"));
	const char *variant = json_string_value(json_object_get(p, "variant"));

	if (!p)
		return true;
	return os && arch && !strcmp(os, want->os) && !strcmp(arch, want->arch) &&
	       (!want->variant[0] || (variant && !strcmp(variant, want->variant)));
}

/* names += ", " and what (while it fits). */
static void list_add(char *names, size_t size, const char *what)
{
	size_t used = strlen(names);

	if (used + strlen(what) + 3 < size)
		snprintf(names + used, size - used, "%s%s", used ? ", " : "", what);
}

/* An entry's platform in words, "linux/arm/v7", for a message. */
static void platform_words(json_t *entry, char *out, size_t size)
{
	json_t *p = json_object_get(entry, "platform");
	const char *os = json_string_value(json_object_get(p, "os"));
	const char *arch = json_string_value(json_object_get(p, "architecture"));
	const char *variant = json_string_value(json_object_get(p, "variant"));

	snprintf(out, size, "%.40s/%.40s%s%.40s", os ? os : "?", arch ? arch : "?",
		 variant ? "/" : "", variant ? variant : "");
}

/*
 * The manifest an index names: by tag (its ref.name annotation), else the
 * one for the platform wanted, else the only one.  In an image index (not
 * a layout's index.json) the first entry for the platform wins, as
 * runtimes pull.
 */
static int choose_manifest(struct layout *l, json_t *index, const char *tag, const char *what,
			   bool image_index, struct descriptor *out)
{
	json_t *list = json_object_get(index, "manifests"), *entry;
	size_t i, found = 0;
	char names[512] = "", platforms[512] = "", words[128];

	if (!json_is_array(list))
		return err_fail(l->err, -EUCLEAN, "%s: %s has no \"manifests\" list", l->name,
				what);
	json_array_foreach(list, i, entry) {
		const char *name = json_string_value(json_object_get(
				json_object_get(entry, "annotations"), OCI_REF_NAME));
		struct descriptor d;
		int ret;

		if (name)
			list_add(names, sizeof(names), name);
		if (json_object_get(entry, "platform")) {
			platform_words(entry, words, sizeof(words));
			list_add(platforms, sizeof(platforms), words);
		}
		if (tag ? !name || strcmp(name, tag) : !platform_matches(&l->platform, entry))
			continue;
		ret = parse_descriptor(l, entry, what, &d);
		if (ret)
			return ret;
		if (d.kind != BLOB_MANIFEST && d.kind != BLOB_INDEX)
			continue;       /* an artifact beside the images */
		if (found++ == 0)
			*out = d;
	}
	if (found == 1 || (found && image_index))
		return 0;
	if (tag)
		return err_fail(l->err, -ENOENT, "%s: no image is tagged '%s' (tags: %s)", l->name,
				tag, *names ? names : "none");
	if (!found)
		return err_fail(l->err, -ENOENT, "%s: %s names no image for %s/%s%s%s (it has: %s)",
				l->name, what, l->platform.os, l->platform.arch,
				l->platform.variant[0] ? "/" : "", l->platform.variant,
				*platforms ? platforms : "no platforms");
	return err_fail(l->err, -EINVAL, "%s: it holds %zu images: name one as DIR:TAG "
			"(tags: %s)", l->name, found, *names ? names : "none");
}

/* The config's rootfs.diff_ids, if it has them: as many as the manifest
 * has layers, each a sha256 digest. */
static int load_diff_ids(struct layout *l, json_t *config, size_t nlayers)
{
	json_t *ids = json_object_get(json_object_get(config, "rootfs"), "diff_ids"), *id;
	size_t i;

	if (!ids)
		return 0;
	if (!json_is_array(ids) || json_array_size(ids) != nlayers)
		return err_fail(l->err, -EUCLEAN, "%s: the image config's rootfs.diff_ids is not "
				"a list of %zu digests, one for each layer", l->name, nlayers);
	l->diff_ids = calloc(nlayers ? nlayers : 1, sizeof(*l->diff_ids));
	if (!l->diff_ids)
		return err_fail(l->err, -ENOMEM, "out of memory");
	json_array_foreach(ids, i, id) {
		const char *s = json_string_value(id);

		if (!s || strncmp(s, "sha256:", 7) || digest_from_hex(s + 7, l->diff_ids[i]))
			return err_fail(l->err, -EUCLEAN, "%s: the image config's diff_id %zu is "
					"not 'sha256:' and 64 lower-case hex digits",
					l->name, i + 1);
	}
	return 0;
}

/* The image's manifest: its config checked, its layers listed. */
static int load_manifest(struct layout *l, const struct descriptor *m)
{
	struct descriptor config;
	json_t *layers, *entry, *config_json = NULL;
	size_t i;
	int ret = read_json_blob(l, m, MANIFEST_MAX, &l->manifest);

	if (ret)
		return ret;
	ret = parse_descriptor(l, json_object_get(l->manifest, "config"), "the manifest's config",
			       &config);
	if (!ret)
		ret = read_json_blob(l, &config, CONFIG_MAX, &config_json);
	layers = json_object_get(l->manifest, "layers");
	if (!ret && !json_is_array(layers))
		ret = err_fail(l->err, -EUCLEAN, "%s: the manifest has no \"layers\" list",
			       l->name);
	if (!ret)
		ret = load_diff_ids(l, config_json, json_array_size(layers));
	json_decref(config_json);
	if (ret)
		return ret;
	l->nlayers = l->total = json_array_size(layers);
	l->layers = calloc(l->nlayers ? l->nlayers : 1, sizeof(*l->layers));
	if (!l->layers)
		return err_fail(l->err, -ENOMEM, "out of memory");
	json_array_foreach(layers, i, entry) {
		char what[64];

		snprintf(what, sizeof(what), "layer %zu", i + 1);
		ret = parse_descriptor(l, entry, what, &l->layers[i]);
		if (ret)
			return ret;
		if (l->layers[i].kind != BLOB_LAYER)
			return err_fail(l->err, -EUCLEAN, "%s: %s is a '%s', not a layer this reads "
					"(tar, tar+gzip or tar+zstd)", l->name, what,
					l->layers[i].media_type);
	}
	return 0;
}

/* "DIR" or "DIR:TAG"; a directory whose own name has a colon wins. */
static int split_reference(const char *ref, char **dir, char **tag)
{
	const char *colon = strrchr(ref, ':');
	struct stat st;

	*tag = NULL;
	if (!colon || strchr(colon, '/') || (stat(ref, &st) == 0 && S_ISDIR(st.st_mode))) {
		*dir = strdup(ref);
		return *dir ? 0 : -ENOMEM;
	}
	*dir = strndup(ref, (size_t)(colon - ref));
	*tag = strdup(colon + 1);
	return *dir && *tag ? 0 : -ENOMEM;
}

static int open_layout(struct layout *l, const char *dir, const char *tag)
{
	struct descriptor chosen;
	json_t *index = NULL, *version;
	char *text;
	size_t len, depth;
	int ret;

	l->dir = dir;
	l->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->dirfd < 0)
		return err_fail(l->err, -errno, "%s: %s", l->name, strerror(errno));
	ret = read_small(l, "oci-layout", INDEX_MAX, &text, &len);
	if (ret) {
		char why[EK_ERROR_MESSAGE_MAX];

		snprintf(why, sizeof(why), "%s", l->err->message);
		return err_fail(l->err, ret, "not an OCI image layout (%s)", why);
	}
	ret = parse_json(l, "oci-layout", text, len, &index);
	free(text);
	if (ret)
		return ret;
	version = json_object_get(index, "imageLayoutVersion");
	if (!json_is_string(version) || strncmp(json_string_value(version), "1.", 2))
		ret = err_fail(l->err, -EUCLEAN, "%s: oci-layout: imageLayoutVersion is not 1.x",
			       l->name);
	json_decref(index);
	index = NULL;
	if (!ret)
		ret = read_small(l, "index.json", INDEX_MAX, &text, &len);
	if (ret)
		return ret;
	ret = parse_json(l, "index.json", text, len, &index);
	free(text);
	if (!ret)
		ret = choose_manifest(l, index, tag, "index.json", false, &chosen);
	json_decref(index);
	/* An image index (several platforms): the entry for this one. */
	for (depth = 0; !ret && chosen.kind == BLOB_INDEX; depth++) {
		if (depth == NESTED_INDEX_MAX)
			return err_fail(l->err, -EUCLEAN, "%s: indexes nested more than %d deep",
					l->name, NESTED_INDEX_MAX);
		ret = read_json_blob(l, &chosen, INDEX_MAX, &index);
		if (!ret)
			ret = choose_manifest(l, index, NULL, "the image index", true, &chosen);
		json_decref(index);
	}
	return ret ? ret : load_manifest(l, &chosen);
}

static void close_layout(struct layout *l)
{
	if (l->dirfd >= 0)
		close(l->dirfd);
	pullahead_stop(l->ahead);
	if (l->remote)
		ocipull_close(&l->pull);
	pthread_mutex_destroy(&l->progress_lock);
	json_decref(l->manifest);
	free(l->layers);
	free(l->diff_ids);
}

/* The tar reader's view of layer i (a registry's as it comes down), its
 * name and path newly allocated (free them with layer_source_free). */
static int layer_source(struct layout *l, size_t i, struct tar_layer *t)
{
	const struct descriptor *d = &l->layers[i];
	char *name = NULL, *path = NULL;

	memset(t, 0, sizeof(*t));
	if (l->remote)
		t->feed = pullahead_feed(l->ahead, i);
	if (asprintf(&name, "%s: layer %zu of %zu (sha256:%.12s)", l->name, l->first + i + 1,
		     l->total, d->hex) < 0)
		return err_fail(l->err, -ENOMEM, "out of memory");
	if (asprintf(&path, "%s/" OCI_BLOBS "/%s", l->dir, d->hex) < 0) {
		free(name);
		return err_fail(l->err, -ENOMEM, "out of memory");
	}
	t->path = path;
	t->name = name;
	t->verify = true;
	memcpy(t->expect.digest, d->digest, DIGEST_SIZE);
	t->expect.size = d->size;
	t->expect.check_diff_id = l->diff_ids != NULL;
	if (l->diff_ids)
		memcpy(t->expect.diff_id, l->diff_ids[i], DIGEST_SIZE);
	return 0;
}

static void layer_source_free(struct tar_layer *t)
{
	free((char *)t->name);
	free((char *)t->path);
}

/* The layout ref names ("DIR[:TAG]", or an image in a registry,
 * "oci://..."), opened; close_layout and free(*dir) after, either way. */
static int with_layout(const char *ref, const ek_build_options *opts, ek_error *err,
		       struct layout *l, char **dir)
{
	char *tag = NULL;
	int ret;

	memset(l, 0, sizeof(*l));
	l->dirfd = -1;
	l->err = err;
	pthread_mutex_init(&l->progress_lock, NULL);
	l->name = ref;
	l->opts = opts;
	*dir = NULL;
	ret = parse_platform(l, opts ? opts->platform : NULL, &l->platform);
	if (ret)
		return ret;
	if (!strncmp(ref, "oci://", 6)) {
		l->remote = true;
		ret = ocipull_open(&l->pull, ref, opts ? opts->http : NULL, err);
		/* Said here, where the scratch index.json would only skip it. */
		if (!ret && kind_of(l->pull.top.media_type) != BLOB_MANIFEST &&
		    kind_of(l->pull.top.media_type) != BLOB_INDEX)
			ret = err_fail(err, -EUCLEAN, "%s: a manifest of media type '%s', not an "
				       "image (an OCI or Docker v2 manifest or index)", ref,
				       l->pull.top.media_type);
		if (!ret && ocipull_tag(&l->pull) && !(tag = strdup(ocipull_tag(&l->pull))))
			ret = err_fail(err, -ENOMEM, "out of memory");
		if (!ret && !(*dir = strdup(l->pull.dir)))
			ret = err_fail(err, -ENOMEM, "out of memory");
	} else {
		ret = split_reference(ref, dir, &tag);
		if (ret)
			ret = err_fail(err, ret, "out of memory");
		else
			l->name = *dir;
	}
	if (!ret)
		ret = open_layout(l, *dir, tag);
	free(tag);
	return ret;
}

/* What a build of layers as overlayfs stacks them refuses (each image
 * its layer's data, whiteouts kept). */
static int refuse_for_layers(const ek_build_options *opts, ek_error *err)
{
	if (opts->tar_index)
		return err_fail(err, -EINVAL, "a layer's image holds its data: index mode "
				"(--tar=i) is for one tar archive");
	if (opts->tar_copy)
		return err_fail(err, -EINVAL, "--tar-copy copies one tar archive: not an OCI "
				"image's layers");
	if (opts->ovlfs_strip)
		return err_fail(err, -EINVAL, "a layer's image keeps its whiteouts for overlayfs: "
				"not with --ovlfs-strip");
	return 0;
}

/* The layout narrowed to the one layer opts names (by number or by
 * digest): a registry's others are never fetched. */
static int pick_layer(struct layout *l, const ek_build_options *opts)
{
	const char *digest = opts->oci_layer_digest;
	uint8_t want[DIGEST_SIZE];
	size_t k;

	if (opts->oci_layer && digest)
		return err_fail(l->err, -EINVAL, "a layer by its number or by its digest, "
				"not both");
	if (digest) {
		if (strncmp(digest, "sha256:", 7) || digest_from_hex(digest + 7, want))
			return err_fail(l->err, -EINVAL, "layer '%.80s': expected sha256: and "
					"64 lower-case hex digits", digest);
		for (k = 0; k < l->nlayers; k++)
			if (!memcmp(l->layers[k].digest, want, DIGEST_SIZE))
				break;
		if (k == l->nlayers)
			return err_fail(l->err, -ENOENT, "%s: none of its %zu layers is %.80s",
					l->name, l->nlayers, digest);
	} else {
		if (opts->oci_layer > l->nlayers)
			return err_fail(l->err, -ENOENT, "%s: no layer %zu: the image has %zu",
					l->name, opts->oci_layer, l->nlayers);
		k = opts->oci_layer - 1;
	}
	l->layers[0] = l->layers[k];
	if (l->diff_ids)
		memmove(l->diff_ids[0], l->diff_ids[k], DIGEST_SIZE);
	l->first = k;
	l->nlayers = 1;
	return 0;
}

int ek_build_oci(const char *image_path, const char *layout_ref,
		 const ek_build_options *opts, ek_build_stats *stats, ek_error *err)
{
	ek_build_options layer_opts;
	struct layout l;
	struct tar_layer *layers = NULL;
	char *dir = NULL;
	size_t i, made = 0;
	bool one = opts && (opts->oci_layer || opts->oci_layer_digest);
	int ret = with_layout(layout_ref, opts, err, &l, &dir);

	layer_options(&l, &layer_opts);
	if (one) {
		/* Built as ek_build_oci_layers builds each. */
		layer_opts.aufs = true;
		if (!ret)
			ret = refuse_for_layers(opts, err);
		if (!ret)
			ret = pick_layer(&l, opts);
	} else if (!ret && opts && opts->tar_index) {
		ret = err_fail(err, -EINVAL, "an OCI image cannot be indexed (--tar=i): its "
			       "layers are not one tar");
	}
	if (!ret) {
		/* No layers: an empty root. */
		layers = calloc(l.nlayers ? l.nlayers : 1, sizeof(*layers));
		if (!layers)
			ret = err_fail(err, -ENOMEM, "out of memory");
	}
	/* Every layer may be on disk at once: flattening reads them twice. */
	if (!ret && l.remote)
		ret = start_fetching(&l, 0);
	for (; !ret && made < l.nlayers; made++)
		ret = layer_source(&l, made, &layers[made]);
	if (!ret)
		ret = tar_build_layers(image_path, layers, l.nlayers, !one, &layer_opts, stats,
				       err);
	for (i = 0; i < made; i++)
		layer_source_free(&layers[i]);
	free(layers);
	close_layout(&l);
	free(dir);
	return ret;
}

/* out_dir's image of layer i, newly allocated; NULL when out of memory. */
static char *layer_image_path(const char *out_dir, const struct layout *l, size_t i)
{
	char *image;

	return asprintf(&image, "%s/%03zu-%s.erofs", out_dir, i + 1, l->layers[i].hex) < 0 ?
	       NULL : image;
}

int ek_build_oci_layers(const char *out_dir, const char *layout_ref,
			const ek_build_options *opts, ek_layer_done_fn done, void *ctx,
			ek_error *err)
{
	ek_build_options layer_opts;
	struct layout l;
	char *dir = NULL, *image;
	size_t i, made = 0;
	int ret = with_layout(layout_ref, opts, err, &l, &dir);

	if (!ret && opts)
		ret = refuse_for_layers(opts, err);
	if (!ret && opts && opts->blob_path)
		ret = err_fail(err, -EINVAL, "--blobdev: not with --oci-layers (one blob, an image "
			       "per layer)");
	if (!ret && opts && (opts->oci_layer || opts->oci_layer_digest))
		ret = err_fail(err, -EINVAL, "--oci-layers builds every layer: a layer is picked "
			       "(--oci-layer) for one image");
	if (!ret && mkdir(out_dir, 0755) < 0 && errno != EEXIST)
		ret = err_fail(err, -errno, "%s: %s", out_dir, strerror(errno));
	/* The layer being built and the next on disk at once, no more. */
	if (!ret && l.remote)
		ret = start_fetching(&l, 2);
	layer_options(&l, &layer_opts);
	layer_opts.aufs = true;     /* each layer keeps its whiteouts */
	for (i = 0; !ret && i < l.nlayers; i++) {
		ek_build_stats stats;
		struct tar_layer t;

		memset(&stats, 0, sizeof(stats));
		image = layer_image_path(out_dir, &l, i);
		if (!image) {
			ret = err_fail(err, -ENOMEM, "out of memory");
			break;
		}
		ret = layer_source(&l, i, &t);
		if (!ret)
			ret = tar_build_layers(image, &t, 1, false, &layer_opts, &stats, err);
		layer_source_free(&t);
		/* A registry's layer, built: its disk space back. */
		if (l.remote)
			pullahead_drop(l.ahead, i);
		if (!ret) {
			made = i + 1;
			if (done)
				done(ctx, i, l.nlayers, image, &stats);
		}
		free(image);
	}
	/* All of them or none: a partial stack is a different image. */
	for (i = 0; ret && i < made; i++) {
		image = layer_image_path(out_dir, &l, i);
		if (image)
			unlink(image);
		free(image);
	}
	close_layout(&l);
	free(dir);
	return ret;
}
