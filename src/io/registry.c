/*
 * OCI registries (the distribution API): an image stored as an artifact,
 * found by oci://REGISTRY/REPO:TAG or oci://REGISTRY/REPO@sha256:DIGEST,
 * read by Range from its blob URL like any HTTP image; and the upload of
 * an image as such an artifact (erofskit push).
 *
 * Authentication follows the registry's challenge: Basic (with the
 * credentials given) or the token flow (a token fetched from the realm it
 * names, anonymously or with the credentials).  Everything a registry
 * sends is checked: manifests fetched by digest must hash to it, sizes and
 * digests are validated before use, and the blob's digest is verified
 * once the whole blob has been read (blockcache.c, fsck).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/httpparse.h"
#include "io/httpreq.h"
#include "io/registry.h"
#include "util/cancel.h"
#include "util/digest.h"
#include "util/error.h"
#include "util/fdio.h"

#define MANIFEST_MAX ((size_t)4 << 20)
#define ANSWER_MAX ((size_t)64 << 10)     /* other answers: status pages */
#define TOKEN_ANSWER_MAX ((size_t)64 << 10)
#define AUTH_MAX 8192
#define INDEX_CHILDREN_MAX 16
#define EMPTY_JSON "{}"
#define EMPTY_MEDIA_TYPE "application/vnd.oci.empty.v1+json"
#define MANIFEST_MEDIA_TYPE "application/vnd.oci.image.manifest.v1+json"
#define INDEX_MEDIA_TYPE "application/vnd.oci.image.index.v1+json"

static const char ACCEPT[] =
	"Accept: " MANIFEST_MEDIA_TYPE ", " INDEX_MEDIA_TYPE ", "
	"application/vnd.docker.distribution.manifest.v2+json, "
	"application/vnd.docker.distribution.manifest.list.v2+json";

struct registry {
	struct oci_ref ref;
	struct curlx_conf conf;
	const char *scheme;          /* "https", or "http" with plain_http */
	char *credentials;           /* "user:password" or NULL */
	char auth[AUTH_MAX];         /* "Authorization: ..." or "" */
	const char *actions;         /* the token scope: "pull" or "pull,push" */
	ek_error *err;
};

/* ------------------------------------------------------------ references */

static bool repo_ok(const char *s)
{
	/* Lower-case components of [a-z0-9] joined by [._-], split by '/'. */
	bool after_sep = true;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (islower((unsigned char)*s) || isdigit((unsigned char)*s)) {
			after_sep = false;
		} else if (*s == '.' || *s == '_' || *s == '-' || *s == '/') {
			if (after_sep)
				return false;
			after_sep = true;
		} else {
			return false;
		}
	}
	return !after_sep;
}

static bool tag_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 128 || !(isalnum((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-')
			return false;
	return true;
}

static bool digest_ok(const char *s)
{
	uint8_t raw[DIGEST_SIZE];

	return !strncmp(s, "sha256:", 7) && !digest_from_hex(s + 7, raw);
}

/* Docker Hub as people name it (docker.io/debian) is not where its API
 * is (registry-1.docker.io), and its official images are under library/. */
static void docker_hub(struct oci_ref *r)
{
	static const char *const names[] = { "docker.io", "index.docker.io",
					     "registry-1.docker.io" };
	size_t i, len = strlen(r->repo);

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(r->host, names[i]))
			break;
	if (i == sizeof(names) / sizeof(names[0]))
		return;
	snprintf(r->host, sizeof(r->host), "registry-1.docker.io");
	if (!strchr(r->repo, '/') && len + 8 < sizeof(r->repo)) {
		memmove(r->repo + 8, r->repo, len + 1);
		memcpy(r->repo, "library/", 8);
	}
}

int oci_parse_ref(const char *s, struct oci_ref *r, ek_error *err)
{
	const char *rest, *slash, *at, *colon;
	size_t host_len, repo_len;

	memset(r, 0, sizeof(*r));
	if (strncmp(s, "oci://", 6))
		return err_fail(err, -EINVAL, "%s: not an oci:// reference", s);
	rest = s + 6;
	slash = strchr(rest, '/');
	if (!slash || slash == rest)
		return err_fail(err, -EINVAL, "%s: expected oci://REGISTRY/REPO:TAG or "
				"oci://REGISTRY/REPO@sha256:DIGEST", s);
	host_len = (size_t)(slash - rest);
	if (host_len >= sizeof(r->host) || strcspn(rest, "/?#@ ") < host_len)
		return err_fail(err, -EINVAL, "%s: bad registry name", s);
	memcpy(r->host, rest, host_len);
	rest = slash + 1;
	at = strchr(rest, '@');
	colon = strrchr(rest, ':');
	if (at) {
		repo_len = (size_t)(at - rest);
		if (strlen(at + 1) >= sizeof(r->digest) || !digest_ok(at + 1))
			return err_fail(err, -EINVAL, "%s: the digest is not sha256:<64 hex digits>", s);
		strcpy(r->digest, at + 1);
	} else if (colon && !strchr(colon, '/')) {
		repo_len = (size_t)(colon - rest);
		if (strlen(colon + 1) >= sizeof(r->tag) || !tag_ok(colon + 1))
			return err_fail(err, -EINVAL, "%s: bad tag", s);
		strcpy(r->tag, colon + 1);
	} else {
		repo_len = strlen(rest);
		strcpy(r->tag, "latest");
	}
	if (repo_len >= sizeof(r->repo))
		return err_fail(err, -EINVAL, "%s: repository name too long", s);
	memcpy(r->repo, rest, repo_len);
	if (!repo_ok(r->repo))
		return err_fail(err, -EINVAL, "%s: bad repository name '%s'", s, r->repo);
	docker_hub(r);
	return 0;
}

/* ------------------------------------------------------------ auth */

/* "Authorization: Basic <base64 of user:password>" into out. */
static int basic_auth(struct registry *r, char *out, size_t size)
{
	static const char prefix[] = "Authorization: Basic ";
	size_t len = strlen(r->credentials);

	if (sizeof(prefix) + 4 * ((len + 2) / 3) > size)
		return err_fail(r->err, -EINVAL, "credentials too long");
	memcpy(out, prefix, sizeof(prefix) - 1);
	base64_encode_raw(out + sizeof(prefix) - 1, len, (const uint8_t *)r->credentials);
	out[sizeof(prefix) - 1 + BASE64_ENCODE_RAW_LENGTH(len)] = '\0';
	return 0;
}

/* SCHEME://HOST/v2/REPO/KIND/NAME: the distribution API's address of a
 * manifest or blob (kind "manifests", "blobs"; "blobs/uploads" with
 * name "" for a new upload). */
static void api_url(const struct registry *r, char *out, size_t size, const char *kind,
		    const char *name)
{
	snprintf(out, size, "%s://%s/v2/%s/%s/%s", r->scheme, r->ref.host, r->ref.repo, kind, name);
}

/* A token from the realm, for the token flow. */
static int fetch_token(struct registry *r, const char *challenge)
{
	char realm[1024], service[256] = "", scope[600], url[3072], basic[AUTH_MAX];
	struct httpreq rq = { .method = "GET", .url = url, .max_answer = TOKEN_ANSWER_MAX,
			      .conf = &r->conf, .body_fd = -1 };
	struct httpans ans;
	json_t *doc = NULL;
	const char *token;
	char *esc_service, *esc_scope;
	CURL *c;
	int ret;

	if (!http_challenge_param(challenge, "realm", realm, sizeof(realm)) ||
	    (strncasecmp(realm, "https://", 8) && strncasecmp(realm, "http://", 7)))
		return err_fail(r->err, -EPROTO, "%s: a token challenge without an http(s) realm: %.200s",
				r->ref.host, challenge);
	http_challenge_param(challenge, "service", service, sizeof(service));
	if (!http_challenge_param(challenge, "scope", scope, sizeof(scope)))
		snprintf(scope, sizeof(scope), "repository:%s:%s", r->ref.repo, r->actions);
	c = libcurl.easy_init();
	if (!c)
		return err_fail(r->err, -ENOMEM, "out of memory");
	esc_service = libcurl.easy_escape(c, service, 0);
	esc_scope = libcurl.easy_escape(c, scope, 0);
	snprintf(url, sizeof(url), "%s%sservice=%s&scope=%s", realm, strchr(realm, '?') ? "&" : "?",
		 esc_service ? esc_service : "", esc_scope ? esc_scope : "");
	libcurl.free(esc_service);
	libcurl.free(esc_scope);
	libcurl.easy_cleanup(c);
	if (r->credentials) {
		ret = basic_auth(r, basic, sizeof(basic));
		if (ret)
			return ret;
		rq.auth = basic;
	}
	ret = httpreq_run(&rq, &ans);
	if (ret) {
		err_fail(r->err, ret, "%s: token from %s: %s", r->ref.host, realm, ans.why);
		goto out;
	}
	if (ans.status != 200) {
		const char *hint = " (credentials needed? -o credentials=FILE, or $"
				   EK_REGISTRY_AUTH_ENV ")";

		ret = err_fail(r->err, ans.status == 401 || ans.status == 403 ? -EACCES : -EIO,
			       "%s: token from %s: HTTP status %ld%s", r->ref.host, realm, ans.status,
			       r->credentials ? "" : hint);
		goto out;
	}
	doc = json_loadb(ans.body ? ans.body : "", ans.body_len, 0, NULL);
	token = json_string_value(json_object_get(doc, "token"));
	if (!token)
		token = json_string_value(json_object_get(doc, "access_token"));
	if (!token || !*token || strpbrk(token, "\r\n") ||
	    strlen(token) + 32 > sizeof(r->auth)) {
		ret = err_fail(r->err, -EPROTO, "%s: token from %s: no usable token in the answer",
			       r->ref.host, realm);
		goto out;
	}
	snprintf(r->auth, sizeof(r->auth), "Authorization: Bearer %s", token);
out:
	json_decref(doc);
	httpans_free(&ans);
	return ret;
}

/* Meet a 401's challenge: Basic with the credentials, or a token. */
static int authorize(struct registry *r, const char *challenge)
{
	if (!strncasecmp(challenge, "Bearer ", 7))
		return fetch_token(r, challenge);
	if (!strncasecmp(challenge, "Basic", 5)) {
		if (!r->credentials)
			return err_fail(r->err, -EACCES, "%s asks for a user and password "
					"(-o credentials=FILE, or $" EK_REGISTRY_AUTH_ENV ")",
					r->ref.host);
		return basic_auth(r, r->auth, sizeof(r->auth));
	}
	return err_fail(r->err, -EACCES, "%s: an authentication scheme erofskit does not speak: %.100s",
			r->ref.host, challenge);
}

/* A request with the registry's authorization, met once on a 401. */
static int request(struct registry *r, struct httpreq *rq, struct httpans *ans)
{
	int ret, round;

	for (round = 0;; round++) {
		rq->auth = r->auth[0] ? r->auth : NULL;
		rq->conf = &r->conf;
		ret = httpreq_run(rq, ans);
		if (ret)
			return err_fail(r->err, ret, "%s: %s", rq->url, ans->why);
		if (ans->status != 401 || round)
			break;
		if (!ans->www_authenticate[0])
			return err_fail(r->err, -EACCES, "%s: 401 without a challenge", rq->url);
		ret = authorize(r, ans->www_authenticate);
		httpans_free(ans);
		if (ret)
			return ret;
	}
	if (ans->status == 401 || ans->status == 403)
		return err_fail(r->err, -EACCES, "%s: HTTP status %ld (not allowed)", rq->url, ans->status);
	return 0;
}

/* ------------------------------------------------------------ sessions */

/* "user:password" from the file the options name, else from
 * $EROFSKIT_REGISTRY_AUTH (where CI systems keep secrets), else none. */
static int read_credentials(const char *file, char **out, ek_error *err)
{
	const char *env = getenv(EK_REGISTRY_AUTH_ENV);
	char buf[1024];
	int ret;

	*out = NULL;
	if (!file && !(env && *env))
		return 0;
	if (!file) {
		if (!strchr(env, ':') || strlen(env) >= sizeof(buf))
			return err_fail(err, -EINVAL, "$" EK_REGISTRY_AUTH_ENV ": expected "
					"'user:password'");
		snprintf(buf, sizeof(buf), "%s", env);
	} else {
		ret = curlx_secret_line(file, buf, sizeof(buf), err);
		if (ret)
			return ret;
		if (!strchr(buf, ':'))
			return err_fail(err, -EINVAL, "%s: expected one line 'user:password'",
					file);
	}
	*out = strdup(buf);
	return *out ? 0 : err_fail(err, -ENOMEM, "out of memory");
}

static int registry_begin(struct registry *r, const char *ref, const ek_http_options *o,
			  const char *actions, ek_error *err)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->err = err;
	r->actions = actions;
	ret = curlx_init(err);
	if (!ret)
		ret = oci_parse_ref(ref, &r->ref, err);
	if (ret)
		return ret;
	curlx_conf_from(&r->conf, o);
	r->scheme = o && o->plain_http ? "http" : "https";
	return read_credentials(o ? o->credentials_file : NULL, &r->credentials, err);
}

static void registry_end(struct registry *r)
{
	free(r->credentials);
}

/* ------------------------------------------------------------ resolving */

/* A manifest's bytes by tag or digest (into ans: 200 or an error);
 * fetched by digest, they must hash to it. */
static int fetch_manifest(struct registry *r, const char *reference, struct httpans *ans)
{
	char url[1200];
	const char *headers[] = { ACCEPT, NULL };
	struct httpreq rq = { .method = "GET", .url = url, .headers = headers,
			      .max_answer = MANIFEST_MAX, .body_fd = -1 };
	uint8_t d[DIGEST_SIZE];
	char hex[2 * DIGEST_SIZE + 1];
	int ret;

	api_url(r, url, sizeof(url), "manifests", reference);
	ret = request(r, &rq, ans);
	if (ret)
		return ret;
	if (ans->status == 404)
		return err_fail(r->err, -ENOENT, "%s: HTTP status 404: %s/%s has no manifest '%s'",
				url, r->ref.host, r->ref.repo, reference);
	if (ans->status != 200)
		return err_fail(r->err, -EIO, "%s: HTTP status %ld", url, ans->status);
	if (!strncmp(reference, "sha256:", 7)) {
		digest_of(ans->body ? ans->body : "", ans->body_len, d);
		digest_to_hex(d, hex);
		if (strcmp(hex, reference + 7))
			return err_fail(r->err, -EUCLEAN, "%s: the manifest does not match its "
					"digest (sha256:%s)", url, hex);
	}
	return 0;
}

/* A manifest by tag or digest, parsed. */
static int get_manifest(struct registry *r, const char *reference, json_t **out)
{
	struct httpans ans;
	json_error_t why;
	int ret = fetch_manifest(r, reference, &ans);

	*out = NULL;
	if (!ret) {
		*out = json_loadb(ans.body ? ans.body : "", ans.body_len, JSON_REJECT_DUPLICATES,
				  &why);
		if (!json_is_object(*out)) {
			json_decref(*out);
			*out = NULL;
			ret = err_fail(r->err, -EUCLEAN, "%s/%s: %s: not a JSON manifest: %s",
				       r->ref.host, r->ref.repo, reference, why.text);
		}
	}
	httpans_free(&ans);
	return ret;
}

static bool is_erofs_type(const char *t)
{
	/* application/vnd.erofs, or a version of it (.layer.v1); not a
	 * compressed blob (+zstd), which cannot be read by Range. */
	return t && (!strcmp(t, OCI_EROFS_MEDIA_TYPE) ||
		     !strncmp(t, OCI_EROFS_MEDIA_TYPE ".", sizeof(OCI_EROFS_MEDIA_TYPE)));
}

/* The manifest's EROFS layer: 1 when found (into blob), 0 when it has
 * none. */
static int erofs_layer(struct registry *r, json_t *manifest, struct oci_blob *blob)
{
	json_t *layers = json_object_get(manifest, "layers"), *l;
	size_t i;

	json_array_foreach(layers, i, l) {
		const char *type = json_string_value(json_object_get(l, "mediaType"));
		const char *digest = json_string_value(json_object_get(l, "digest"));
		json_t *size = json_object_get(l, "size");

		if (!is_erofs_type(type))
			continue;
		if (!digest || !digest_ok(digest) || !json_is_integer(size) ||
		    json_integer_value(size) <= 0)
			return err_fail(r->err, -EUCLEAN, "%s/%s: the EROFS layer's descriptor is "
					"not valid (digest, size)", r->ref.host, r->ref.repo);
		snprintf(blob->digest, sizeof(blob->digest), "%s", digest);
		blob->size = (uint64_t)json_integer_value(size);
		return 1;
	}
	return 0;
}

int oci_renew(void *ctx, const char *challenge, char *out, size_t size)
{
	struct registry *r = ctx;
	ek_error err;
	int ret;

	r->err = &err;
	r->auth[0] = '\0';
	ret = challenge[0] ? authorize(r, challenge)
			   : err_fail(&err, -EACCES, "%s: a 401 without a challenge", r->ref.host);
	snprintf(out, size, "%s", ret ? err.message : r->auth);
	return ret;
}

void oci_release(void *ctx)
{
	struct registry *r = ctx;

	if (r) {
		free(r->credentials);
		free(r);
	}
}

int oci_resolve(const char *ref, const ek_http_options *o, struct oci_blob *blob,
		ek_error *err)
{
	struct registry *r = malloc(sizeof(*r));
	json_t *top = NULL, *child = NULL, *list, *entry;
	size_t i;
	int ret;

	memset(blob, 0, sizeof(*blob));
	if (!r)
		return err_fail(err, -ENOMEM, "out of memory");
	ret = registry_begin(r, ref, o, "pull", err);
	if (ret)
		goto out;
	ret = get_manifest(r, r->ref.digest[0] ? r->ref.digest : r->ref.tag, &top);
	if (ret)
		goto out;
	ret = erofs_layer(r, top, blob);
	/* An index: the first manifest in it with an EROFS layer. */
	list = json_object_get(top, "manifests");
	json_array_foreach(list, i, entry) {
		const char *d = json_string_value(json_object_get(entry, "digest"));

		if (ret || i >= INDEX_CHILDREN_MAX)
			break;
		if (!d || !digest_ok(d)) {
			ret = err_fail(err, -EUCLEAN, "%s: an index entry without a valid digest", ref);
			break;
		}
		ret = get_manifest(r, d, &child);
		if (!ret)
			ret = erofs_layer(r, child, blob);
		json_decref(child);
		child = NULL;
	}
	if (ret == 0)
		ret = err_fail(err, -ENOENT, "%s: no layer of media type %s", ref, OCI_EROFS_MEDIA_TYPE);
	if (ret < 0)
		goto out;
	ret = 0;
	api_url(r, blob->url, sizeof(blob->url), "blobs", blob->digest);
	snprintf(blob->auth, sizeof(blob->auth), "%s", r->auth);
	/* Kept to renew the authorization when it expires. */
	blob->renew_ctx = r;
	r = NULL;
out:
	json_decref(top);
	oci_release(r);
	return ret;
}

/* ------------------------------------------------------------ pulling */

struct oci_pull {
	struct registry reg;
};

int oci_pull_begin(const char *ref, const ek_http_options *o, struct oci_pull **out,
		   ek_error *err)
{
	struct oci_pull *p = malloc(sizeof(*p));
	int ret;

	*out = NULL;
	if (!p)
		return err_fail(err, -ENOMEM, "out of memory");
	ret = registry_begin(&p->reg, ref, o, "pull", err);
	if (ret) {
		oci_pull_end(p);
		return ret;
	}
	*out = p;
	return 0;
}

void oci_pull_end(struct oci_pull *p)
{
	if (p)
		registry_end(&p->reg);
	free(p);
}

const char *oci_pull_tag(const struct oci_pull *p)
{
	return p->reg.ref.digest[0] ? NULL : p->reg.ref.tag;
}

/* The media type a manifest says it is: its own mediaType, else the
 * answer's Content-Type (without parameters), else what its members
 * make it: "manifests" an index, anything else an image manifest. */
static void manifest_media_type(const struct httpans *ans, char *out, size_t size)
{
	json_t *doc = json_loadb(ans->body ? ans->body : "", ans->body_len, 0, NULL);
	const char *own = json_string_value(json_object_get(doc, "mediaType"));

	if (own && *own)
		snprintf(out, size, "%s", own);
	else if (ans->content_type[0] && strncasecmp(ans->content_type, "application/json", 16))
		snprintf(out, size, "%.*s", (int)strcspn(ans->content_type, "; "),
			 ans->content_type);
	else
		snprintf(out, size, "%s", json_object_get(doc, "manifests") ? INDEX_MEDIA_TYPE :
					   MANIFEST_MEDIA_TYPE);
	json_decref(doc);
}

int oci_pull_top(struct oci_pull *p, int fd, struct oci_pulled *top, ek_error *err)
{
	struct registry *r = &p->reg;
	struct httpans ans;
	uint8_t d[DIGEST_SIZE];
	int ret;

	r->err = err;
	ret = fetch_manifest(r, r->ref.digest[0] ? r->ref.digest : r->ref.tag, &ans);
	if (!ret && fd_pwrite_full(fd, ans.body ? ans.body : "", ans.body_len, 0))
		ret = err_fail(err, -EIO, "cannot store the manifest of %s/%s", r->ref.host,
			       r->ref.repo);
	if (!ret) {
		digest_of(ans.body ? ans.body : "", ans.body_len, d);
		digest_to_hex(d, top->hex);
		top->size = ans.body_len;
		manifest_media_type(&ans, top->media_type, sizeof(top->media_type));
	}
	httpans_free(&ans);
	return ret;
}

int oci_pull_blob(struct oci_pull *p, const char *hex, bool manifest, uint64_t size, int fd,
		  const struct oci_pull_progress *progress, ek_error *err)
{
	struct registry *r = &p->reg;
	const char *headers[] = { ACCEPT, NULL };
	char url[1200], digest[OCI_DIGEST_MAX];
	struct httpreq rq = { .method = "GET", .url = url, .headers = manifest ? headers : NULL,
			      .max_answer = (size_t)size, .body_fd = -1, .answer_to_fd = true,
			      .answer_fd = fd, .on_answer = progress ? progress->fn : NULL,
			      .on_answer_ctx = progress ? progress->ctx : NULL };
	struct httpans ans;
	int ret;

	/* (A 32-bit size_t cuts a bound past 4 GiB: such a blob then fails
	 * as too long, never silently.) */
	r->err = err;
	snprintf(digest, sizeof(digest), "sha256:%s", hex);
	api_url(r, url, sizeof(url), manifest ? "manifests" : "blobs", digest);
	ret = request(r, &rq, &ans);
	if (ret == -ECANCELED)
		ret = err_fail(err, ret, CANCEL_MESSAGE);
	else if (ret == -EFBIG)
		ret = err_fail(err, -EUCLEAN, "%s: the registry sends more than the %llu bytes "
			       "its descriptor says", url, (unsigned long long)size);
	else if (!ret && ans.status != 200 && ans.status != 206)   /* 206: resumed */
		ret = err_fail(err, ans.status == 404 ? -ENOENT : -EIO, "%s: HTTP status %ld", url,
			       ans.status);
	/* Shorter: the reader's digest check says so, naming the blob. */
	httpans_free(&ans);
	return ret;
}

/* ------------------------------------------------------------ pushing */

/* A blob, unless the registry has it: POST for an upload URL, then one
 * PUT of the whole blob with its digest. */
static int push_blob(struct registry *r, const char *digest, int fd, const void *mem, uint64_t size)
{
	char url[3072];
	const char *octet[] = { "Content-Type: application/octet-stream", NULL };
	struct httpreq rq = { .method = "HEAD", .url = url, .max_answer = ANSWER_MAX, .body_fd = -1 };
	struct httpans ans;
	int ret;

	api_url(r, url, sizeof(url), "blobs", digest);
	ret = request(r, &rq, &ans);
	httpans_free(&ans);
	if (ret || ans.status == 200)
		return ret;
	api_url(r, url, sizeof(url), "blobs/uploads", "");
	rq = (struct httpreq){ .method = "POST", .url = url, .max_answer = ANSWER_MAX, .body_fd = -1 };
	ret = request(r, &rq, &ans);
	if (!ret && (ans.status != 202 || !ans.location[0]))
		ret = err_fail(r->err, -EIO, "%s: HTTP status %ld, no upload location", url, ans.status);
	if (ret) {
		httpans_free(&ans);
		return ret;
	}
	/* Location may be a path on the registry, and may carry a query. */
	if (ans.location[0] == '/')
		snprintf(url, sizeof(url), "%s://%s%s%sdigest=%s", r->scheme, r->ref.host, ans.location,
			 strchr(ans.location, '?') ? "&" : "?", digest);
	else
		snprintf(url, sizeof(url), "%s%sdigest=%s", ans.location,
			 strchr(ans.location, '?') ? "&" : "?", digest);
	httpans_free(&ans);
	rq = (struct httpreq){ .method = "PUT", .url = url, .headers = octet, .max_answer = ANSWER_MAX,
			       .body = mem, .body_len = (size_t)size, .body_fd = fd,
			       .body_fd_len = size };
	ret = request(r, &rq, &ans);
	if (!ret && ans.status != 201)
		ret = err_fail(r->err, -EIO, "uploading %s to %s/%s: HTTP status %ld", digest,
			       r->ref.host, r->ref.repo, ans.status);
	httpans_free(&ans);
	return ret;
}

static int file_digest(int fd, uint64_t size, char out[OCI_DIGEST_MAX], ek_error *err,
		       const char *path)
{
	struct digest_state *d = digest_begin();
	uint8_t buf[1 << 16], raw[DIGEST_SIZE];
	char hex[2 * DIGEST_SIZE + 1];
	uint64_t off = 0;

	if (!d)
		return err_fail(err, -ENOMEM, "out of memory");
	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);

		if (n <= 0) {
			digest_end(d, raw);
			return err_fail(err, n < 0 ? -errno : -EIO, "%s: cannot read it", path);
		}
		digest_add(d, buf, (size_t)n);
		off += (uint64_t)n;
	}
	digest_end(d, raw);
	digest_to_hex(raw, hex);
	snprintf(out, OCI_DIGEST_MAX, "sha256:%s", hex);
	return 0;
}

int oci_push(const char *image, const char *ref, const ek_http_options *o,
	     char *manifest_digest, size_t digest_size, ek_error *err)
{
	struct registry r;
	struct stat st;
	char blob_digest[OCI_DIGEST_MAX], empty_digest[OCI_DIGEST_MAX], url[1200];
	const char *slash = strrchr(image, '/');
	const char *headers[] = { "Content-Type: " MANIFEST_MEDIA_TYPE, NULL };
	struct httpreq rq = { .method = "PUT", .url = url, .headers = headers, .max_answer = ANSWER_MAX,
			      .body_fd = -1 };
	struct httpans ans = { 0 };
	uint8_t raw[DIGEST_SIZE];
	char hex[2 * DIGEST_SIZE + 1];
	char *manifest = NULL;
	json_t *doc = NULL;
	int fd = -1, ret = registry_begin(&r, ref, o, "pull,push", err);

	if (ret)
		goto out;
	if (!r.ref.tag[0] || r.ref.digest[0]) {
		ret = err_fail(err, -EINVAL, "%s: push needs a tag (oci://REGISTRY/REPO:TAG)", ref);
		goto out;
	}
	fd = open(image, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		ret = err_fail(err, fd < 0 ? -errno : -EINVAL, "%s: %s", image,
			       fd < 0 ? strerror(errno) : "not a regular file with data");
		goto out;
	}
	ret = file_digest(fd, (uint64_t)st.st_size, blob_digest, err, image);
	if (ret)
		goto out;
	digest_of(EMPTY_JSON, 2, raw);
	digest_to_hex(raw, hex);
	snprintf(empty_digest, sizeof(empty_digest), "sha256:%s", hex);
	ret = push_blob(&r, blob_digest, fd, NULL, (uint64_t)st.st_size);
	if (!ret)
		ret = push_blob(&r, empty_digest, -1, EMPTY_JSON, 2);
	if (ret)
		goto out;
	doc = json_pack("{s:i, s:s, s:s, s:{s:s, s:s, s:i}, s:[{s:s, s:s, s:I, s:{s:s}}]}",
			"schemaVersion", 2, "mediaType", MANIFEST_MEDIA_TYPE,
			"artifactType", OCI_EROFS_MEDIA_TYPE,
			"config", "mediaType", EMPTY_MEDIA_TYPE, "digest", empty_digest, "size", 2,
			"layers", "mediaType", OCI_EROFS_MEDIA_TYPE, "digest", blob_digest,
			"size", (json_int_t)st.st_size, "annotations",
			"org.opencontainers.image.title", slash ? slash + 1 : image);
	manifest = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	if (!manifest) {
		ret = err_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	api_url(&r, url, sizeof(url), "manifests", r.ref.tag);
	rq.body = manifest;
	rq.body_len = strlen(manifest);
	ret = request(&r, &rq, &ans);
	if (!ret && ans.status != 201)
		ret = err_fail(err, -EIO, "%s: HTTP status %ld%s%.200s", url, ans.status,
			       ans.body ? ": " : "", ans.body ? ans.body : "");
	if (ret)
		goto out;
	digest_of(manifest, strlen(manifest), raw);
	digest_to_hex(raw, hex);
	snprintf(manifest_digest, digest_size, "sha256:%s", hex);
out:
	httpans_free(&ans);
	free(manifest);
	json_decref(doc);
	if (fd >= 0)
		close(fd);
	registry_end(&r);
	return ret;
}
