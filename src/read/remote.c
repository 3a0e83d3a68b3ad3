/* Images over the network: an http(s) URL, or an oci:// reference
 * resolved to its blob's URL; either read through a cache of its blocks
 * (io/blockcache.c over io/http.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/registry.h"
#include "read/internal.h"
#include "read/remote.h"
#include "util/error.h"

#define DEFAULT_CACHE_MAX ((uint64_t)2 << 30)

int ek_is_url(const char *name)
{
	return io_is_url(name) || !strncmp(name, "oci://", 6);
}

/* The cache over an opened back end: in the directory asked for, else
 * the default one, else (the default unusable, or none asked for) a
 * private file.  Takes http, closed on failure. */
static int with_cache(const ek_http_options *o, const char *digest, struct io *http,
		      struct io **out, ek_error *err)
{
	const char *dir = o ? o->cache_dir : NULL;
	uint64_t max = o && o->cache_max ? o->cache_max : DEFAULT_CACHE_MAX;
	bool all = o && o->prefetch_all;
	char def[4096];
	int ret;

	if (dir && !strcmp(dir, "none"))
		dir = NULL;
	else if (!dir && !io_cache_default_dir(def, sizeof(def)) &&
		 !io_open_cache(http, def, max, all, digest, out, NULL))
		return 0;   /* the default */
	ret = io_open_cache(http, dir, max, all, digest, out, err);
	if (ret)
		io_close(http);
	return ret;
}

int remote_open(const char *name, const ek_http_options *o, struct io **out, ek_error *err)
{
	struct oci_blob *blob = NULL;
	struct io_http_extra x = { 0 };
	char identity[128];
	const char *url = name, *digest = NULL;
	struct io *http;
	int ret;

	if (!strncmp(name, "oci://", 6)) {
		blob = malloc(sizeof(*blob));
		if (!blob)
			return err_fail(err, -ENOMEM, "out of memory");
		ret = oci_resolve(name, o, blob, err);
		if (ret)
			goto out;
		snprintf(identity, sizeof(identity), "oci-blob %s", blob->digest);
		x = (struct io_http_extra){ .auth = blob->auth, .identity = identity,
					    .size = blob->size, .renew = oci_renew,
					    .release = oci_release, .ctx = blob->renew_ctx };
		url = blob->url;
		digest = blob->digest;
	}
	ret = io_open_http(url, o, &x, &http, err);
	if (!ret)
		ret = with_cache(o, digest, http, out, err);
	if (ret && blob)
		err_prefix(err, "%s: ", name);
out:
	free(blob);
	return ret;
}

int ek_push(const char *image, const char *ref, const ek_http_options *o,
	    char *digest_out, size_t digest_size, ek_error *err)
{
	return oci_push(image, ref, o, digest_out, digest_size, err);
}

int ek_verify_source(ek_image *img, ek_error *err)
{
	char why[256];
	int ret = img->io->ops->verify ? img->io->ops->verify(img->io, why, sizeof(why)) : -ENODATA;

	if (ret == -ENODATA)
		return err_fail(err, ret, "no digest to check the image against");
	if (ret)
		return err_fail(err, ret, "the image's blob: %s", why);
	return 0;
}
