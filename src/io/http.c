/*
 * HTTP(S) back end (libcurl): the image is one object on a web server,
 * read with Range requests.
 *
 * Every read is a ranged GET whose answer is checked before a byte of it
 * lands in a caller's buffer: status 206, a Content-Range that is exactly
 * the range asked for and the object's size, and the validator (ETag,
 * else Last-Modified) of the first answer.  A server that ignores Range or
 * an object that changed is an error (EIO), never a mix of two versions.
 * Dropped connections, stalls past the timeout and 5xx answers are tried
 * again with backoff.
 *
 * Each concurrent caller takes a session (a multi handle with its own
 * connections, kept alive between calls) from a pool: libcurl does not let
 * threads share connections, only DNS and TLS sessions, which they do.  A
 * batch becomes ranges of neighbouring requests, fetched in parallel on
 * the session's connections (several TCP connections, or streams of one
 * HTTP/2 connection).
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/curlx.h"
#include "io/httpparse.h"
#include "io/io.h"
#include "util/ctxpool.h"
#include "util/error.h"

#define PARALLEL 4u                 /* ranges in flight per caller */
#define HEAD_BYTES ((size_t)64 << 10)  /* fetched at open, kept */
#define VALIDATOR_MAX 160
#define TOKEN_MAX 8192
#define RENEWALS_MAX 64u             /* header lists kept until close */
#define ERROR_PAGE_MAX ((uint64_t)1 << 20)

struct http_io {
	struct io base;
	char *url;
	struct curl_slist *headers;
	CURLSH *share;
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
	struct ctxpool sessions;
	struct curlx_conf conf;  /* conf.cacert: a copy, owned */
	/* The first answer's identity of the object, which every later
	 * answer must repeat. */
	char etag[VALIDATOR_MAX];
	char last_modified[VALIDATOR_MAX];
	uint8_t *head;           /* the object's first head_len bytes */
	size_t head_len;
	char *identity;          /* URL, validator and size */
	/* An authorization that expires: on a 401 the list is rebuilt with
	 * a renewed first line; lists other transfers may still use are
	 * kept until close.  Sessions compare headers_gen with theirs. */
	int (*renew)(void *ctx, const char *challenge, char *out, size_t size);
	void (*release)(void *ctx);
	void *renew_ctx;
	pthread_mutex_t headers_lock;
	unsigned int headers_gen;
	struct curl_slist *retired[RENEWALS_MAX];
	unsigned int nretired;
};

/* One caller's connections. */
struct session {
	CURLM *multi;
	CURL *easy[PARALLEL];
	unsigned int headers_gen[PARALLEL];   /* of the list each was given */
};

/* One ranged GET: [offset, offset + len) into a run of requests that
 * follow each other in the object. */
struct transfer {
	struct http_io *h;
	struct io_req *reqs;
	size_t nreqs;
	bool head_only;          /* a HEAD: size and validators only */
	curl_off_t content_length;
	uint64_t offset, len;
	uint64_t got;            /* bytes placed so far */
	uint64_t discarded;      /* of an error page */
	size_t cur;              /* request being filled */
	size_t cur_off;
	/* From the answer's headers (the last response, after redirects). */
	long status;
	bool has_range;
	uint64_t range_first, range_last, range_total;
	char etag[VALIDATOR_MAX];
	char last_modified[VALIDATOR_MAX];
	char challenge[512];     /* WWW-Authenticate of a 401 */
	unsigned int headers_gen;   /* of the headers it was sent with */
	bool wants_auth;         /* a 401 that a renewal may answer */
	bool checked;            /* headers validated before the first byte */
	int fatal;               /* -errno: not worth another try */
	char why[CURL_ERROR_SIZE];
	char curl_why[CURL_ERROR_SIZE];
};

/* Why the calling thread's last read failed, for the error message. */
static _Thread_local char last_why[CURL_ERROR_SIZE + 64];

/* ------------------------------------------------------------ sessions */

static void *session_new(void)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->multi = libcurl.multi_init();
	if (!s->multi) {
		free(s);
		return NULL;
	}
	libcurl.multi_setopt(s->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)PARALLEL);
	return s;
}

static void session_free(void *p)
{
	struct session *s = p;
	size_t i;

	for (i = 0; i < PARALLEL; i++)
		if (s->easy[i])
			libcurl.easy_cleanup(s->easy[i]);
	libcurl.multi_cleanup(s->multi);
	free(s);
}

static void share_lock(CURL *c, curl_lock_data data, curl_lock_access a, void *user)
{
	struct http_io *h = user;

	(void)c;
	(void)a;
	pthread_mutex_lock(&h->share_locks[data]);
}

static void share_unlock(CURL *c, curl_lock_data data, void *user)
{
	struct http_io *h = user;

	(void)c;
	pthread_mutex_unlock(&h->share_locks[data]);
}

/* ------------------------------------------------------------ answers */

static bool parse_content_range(const char *v, struct transfer *t)
{
	return http_content_range(v, &t->range_first, &t->range_last, &t->range_total);
}

static size_t on_header(char *line, size_t size, size_t n, void *user)
{
	struct transfer *t = user;
	size_t len = size * n;
	char value[VALIDATOR_MAX];

	if (len > 5 && !strncmp(line, "HTTP/", 5)) {
		/* A new response (after a redirect or 100): forget the last. */
		const char *sp = memchr(line, ' ', len);

		t->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		t->has_range = false;
		t->etag[0] = t->last_modified[0] = t->challenge[0] = '\0';
		return len;
	}
	if (len > 14 && !strncasecmp(line, "content-range:", 14)) {
		http_header_value(line + 14, len - 14, value, sizeof(value));
		t->has_range = parse_content_range(value, t);
	} else if (len > 5 && !strncasecmp(line, "etag:", 5)) {
		http_header_value(line + 5, len - 5, t->etag, sizeof(t->etag));
	} else if (len > 14 && !strncasecmp(line, "last-modified:", 14)) {
		http_header_value(line + 14, len - 14, t->last_modified, sizeof(t->last_modified));
	} else if (len > 17 && !strncasecmp(line, "www-authenticate:", 17)) {
		http_header_value(line + 17, len - 17, t->challenge, sizeof(t->challenge));
	}
	return len;
}

static int transfer_fail(struct transfer *t, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int transfer_fail(struct transfer *t, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
	t->fatal = code;
	return code;
}

/* The answer's headers, checked before its body is taken: the right
 * range of the same object.  h->base.size is 0 while opening. */
static int check_answer(struct transfer *t)
{
	struct http_io *h = t->h;

	if (t->status == 200)
		return transfer_fail(t, -EIO, "the server ignores Range requests (200 instead of 206)");
	if (t->status != 206)
		return -EAGAIN;   /* an error status: judged when it ends */
	if (!t->has_range)
		return transfer_fail(t, -EIO, "206 answer without a valid Content-Range");
	if (h->base.size && t->range_total != h->base.size)
		return transfer_fail(t, -EIO,
				     "the image changed on the server (%" PRIu64 " bytes, was %" PRIu64 ")",
				     t->range_total, h->base.size);
	if (t->range_first != t->offset ||
	    (h->base.size && t->range_last != t->offset + t->len - 1) ||
	    (!h->base.size && t->range_last > t->offset + t->len - 1))
		return transfer_fail(t, -EIO, "asked for bytes %" PRIu64 "-%" PRIu64 ", got %" PRIu64 "-%" PRIu64,
				     t->offset, t->offset + t->len - 1, t->range_first, t->range_last);
	if (h->etag[0] && strcmp(h->etag, t->etag))
		return transfer_fail(t, -EIO, "the image changed on the server (ETag %s, was %s)",
				     t->etag[0] ? t->etag : "none", h->etag);
	if (!h->etag[0] && h->last_modified[0] && strcmp(h->last_modified, t->last_modified))
		return transfer_fail(t, -EIO, "the image changed on the server (Last-Modified %s, was %s)",
				     t->last_modified[0] ? t->last_modified : "none", h->last_modified);
	if (!h->base.size)   /* opening: the object is as long as it says */
		t->len = t->range_last - t->range_first + 1;
	return 0;
}

/* Scatter the body over the run's requests. */
static size_t on_body(char *data, size_t size, size_t n, void *user)
{
	struct transfer *t = user;
	size_t len = size * n, left = len;

	if (!t->checked) {
		int ret = check_answer(t);

		/* An error page: not ours to keep, nor to read for ever. */
		if (ret == -EAGAIN) {
			t->discarded += len;
			return t->discarded <= ERROR_PAGE_MAX ? len : 0;
		}
		if (ret)
			return 0;     /* abort the transfer */
		t->checked = true;
	}
	if (len > t->len - t->got) {
		transfer_fail(t, -EIO, "the server sent more than the %" PRIu64 " bytes asked for", t->len);
		return 0;
	}
	while (left) {
		struct io_req *r = &t->reqs[t->cur];
		size_t take = r->len - t->cur_off;

		if (take > left)
			take = left;
		memcpy((char *)r->buf + t->cur_off, data, take);
		data += take;
		left -= take;
		t->cur_off += take;
		if (t->cur_off == r->len) {
			t->cur++;
			t->cur_off = 0;
		}
	}
	t->got += len;
	return len;
}

/* ------------------------------------------------------------ transfers */

static void transfer_reset(struct transfer *t)
{
	t->got = 0;
	t->discarded = 0;
	t->cur = 0;
	t->cur_off = 0;
	t->status = 0;
	t->has_range = false;
	t->checked = false;
	t->etag[0] = t->last_modified[0] = t->challenge[0] = '\0';
	t->why[0] = t->curl_why[0] = '\0';
	t->wants_auth = false;
}

static int easy_setup(struct http_io *h, CURL *c)
{
	CURLcode e = CURLE_OK;

	if (curlx_apply(c, &h->conf))
		return -EINVAL;
#define SET(opt, val) do { if (e == CURLE_OK) e = libcurl.easy_setopt(c, opt, val); } while (0)
	SET(CURLOPT_URL, h->url);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_SHARE, h->share);
#undef SET
	return e == CURLE_OK ? 0 : -EINVAL;
}

/* How a finished transfer went: 0, -EAGAIN (try again) or -errno with
 * t->why saying why. */
static int transfer_result(struct transfer *t, CURLcode e)
{
	if (t->fatal)
		return t->fatal;
	if (t->head_only && e == CURLE_OK && t->status == 200)
		return t->content_length >= 0 ? 0 : transfer_fail(t, -EIO, "no Content-Length");
	if (e == CURLE_OK && t->status == 206 && !t->checked && t->len)
		check_answer(t);   /* an empty body: still the right object? */
	if (t->fatal)
		return t->fatal;
	if (e != CURLE_OK) {
		snprintf(t->why, sizeof(t->why), "%s",
			 t->curl_why[0] ? t->curl_why : libcurl.easy_strerror(e));
		return curlx_retryable(e) ? -EAGAIN : -EIO;
	}
	if (curlx_retryable_status(t->status)) {
		snprintf(t->why, sizeof(t->why), "HTTP status %ld", t->status);
		return -EAGAIN;
	}
	if (t->status == 401 && t->h->renew) {
		snprintf(t->why, sizeof(t->why), "HTTP status 401");
		t->wants_auth = true;
		return -EAGAIN;
	}
	if (t->status != 206)
		return transfer_fail(t, t->status == 404 || t->status == 410 ? -ENOENT :
					t->status == 401 || t->status == 403 ? -EACCES : -EIO,
				     "HTTP status %ld", t->status);
	if (t->got != t->len) {
		snprintf(t->why, sizeof(t->why), "the answer ended after %" PRIu64 " of %" PRIu64 " bytes",
			 t->got, t->len);
		return -EAGAIN;
	}
	return 0;
}

/* One round: every transfer in ts[] once, PARALLEL at a time; results
 * in res[]. */
static void run_round(struct session *s, struct transfer **ts, int *res, size_t n)
{
	size_t next = 0, active = 0, done = 0, i;
	CURL *busy[PARALLEL] = { 0 };
	size_t slot_of[PARALLEL];

	while (done < n) {
		CURLMsg *msg;
		int left, running;

		for (i = 0; i < PARALLEL && next < n; i++) {
			struct transfer *t = ts[next];
			char range[48];

			if (busy[i])
				continue;
			if (!s->easy[i]) {
				s->easy[i] = libcurl.easy_init();
				if (!s->easy[i] || easy_setup(t->h, s->easy[i])) {
					if (s->easy[i])
						libcurl.easy_cleanup(s->easy[i]);
					s->easy[i] = NULL;
					res[next++] = transfer_fail(t, -ENOMEM, "cannot set up a connection");
					done++;
					continue;
				}
			}
			transfer_reset(t);
			/* The current headers (an authorization renewed since
			 * this handle last went out). */
			pthread_mutex_lock(&t->h->headers_lock);
			if (s->headers_gen[i] != t->h->headers_gen || !s->headers_gen[i]) {
				libcurl.easy_setopt(s->easy[i], CURLOPT_HTTPHEADER, t->h->headers);
				s->headers_gen[i] = t->h->headers_gen;
			}
			t->headers_gen = t->h->headers_gen;
			pthread_mutex_unlock(&t->h->headers_lock);
			snprintf(range, sizeof(range), "%" PRIu64 "-%" PRIu64,
				 t->offset, t->offset + t->len - 1);
			libcurl.easy_setopt(s->easy[i], CURLOPT_NOBODY, (long)t->head_only);
			libcurl.easy_setopt(s->easy[i], CURLOPT_RANGE, t->head_only ? NULL : range);
			libcurl.easy_setopt(s->easy[i], CURLOPT_HEADERDATA, t);
			libcurl.easy_setopt(s->easy[i], CURLOPT_WRITEDATA, t);
			libcurl.easy_setopt(s->easy[i], CURLOPT_ERRORBUFFER, t->curl_why);
			libcurl.easy_setopt(s->easy[i], CURLOPT_PRIVATE, (void *)i);
			libcurl.multi_add_handle(s->multi, s->easy[i]);
			busy[i] = s->easy[i];
			slot_of[i] = next++;
			active++;
		}
		if (!active)
			continue;
		libcurl.multi_perform(s->multi, &running);
		while ((msg = libcurl.multi_info_read(s->multi, &left))) {
			void *priv = NULL;
			size_t slot;

			if (msg->msg != CURLMSG_DONE)
				continue;
			libcurl.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
			slot = (size_t)priv;
			if (ts[slot_of[slot]]->head_only)
				libcurl.easy_getinfo(msg->easy_handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
						  &ts[slot_of[slot]]->content_length);
			res[slot_of[slot]] = transfer_result(ts[slot_of[slot]], msg->data.result);
			libcurl.multi_remove_handle(s->multi, msg->easy_handle);
			busy[slot] = NULL;
			active--;
			done++;
		}
		if (active)
			libcurl.multi_poll(s->multi, NULL, 0, 1000, NULL);
	}
}

/* Answer a 401: a renewed authorization, unless another thread renewed it
 * since t went out.  0, or -errno with t->why saying why. */
static int renew_auth(struct http_io *h, struct transfer *t)
{
	char auth[TOKEN_MAX + 32];
	struct curl_slist *fresh = NULL, *l, *old;
	int ret = 0;

	pthread_mutex_lock(&h->headers_lock);
	if (h->headers_gen != t->headers_gen)
		goto out;
	if (h->nretired == RENEWALS_MAX) {
		ret = transfer_fail(t, -EACCES, "HTTP status 401 (the authorization was renewed %u times)",
				    RENEWALS_MAX);
		goto out;
	}
	ret = h->renew(h->renew_ctx, t->challenge, auth, sizeof(auth));
	if (ret) {
		transfer_fail(t, ret, "HTTP status 401, and a new authorization failed: %s", auth);
		goto out;
	}
	/* The first line is the authorization; the user's headers follow. */
	old = h->headers;
	fresh = libcurl.slist_append(NULL, auth);
	for (l = old ? old->next : NULL; fresh && l; l = l->next) {
		struct curl_slist *grown = libcurl.slist_append(fresh, l->data);

		if (!grown) {
			libcurl.slist_free_all(fresh);
			fresh = NULL;
		} else {
			fresh = grown;
		}
	}
	if (!fresh) {
		ret = transfer_fail(t, -ENOMEM, "out of memory");
		goto out;
	}
	h->retired[h->nretired++] = old;
	h->headers = fresh;
	h->headers_gen++;
out:
	pthread_mutex_unlock(&h->headers_lock);
	return ret;
}

/* Every transfer to the end, with retries; 0 or the first failure. */
static int run_transfers(struct http_io *h, struct transfer *ts, size_t n)
{
	struct session *s = ctxpool_get(&h->sessions);
	struct transfer *stack_ptrs[16], **todo = stack_ptrs;
	int stack_res[16], *res = stack_res;
	unsigned int attempt;
	size_t pending = n, i, k;
	int ret = 0;

	if (!s) {
		snprintf(last_why, sizeof(last_why), "out of memory");
		return -ENOMEM;
	}
	if (n > 16) {
		todo = malloc(n * sizeof(*todo));
		res = malloc(n * sizeof(*res));
		if (!todo || !res) {
			ret = -ENOMEM;
			snprintf(last_why, sizeof(last_why), "out of memory");
			goto out;
		}
	}
	for (i = 0; i < n; i++)
		todo[i] = &ts[i];
	for (attempt = 0;; attempt++) {
		run_round(s, todo, res, pending);
		for (i = k = 0; i < pending; i++) {
			if (res[i] == -EAGAIN && todo[i]->wants_auth)
				res[i] = renew_auth(h, todo[i]) ? todo[i]->fatal : -EAGAIN;
			if (res[i] == -EAGAIN && attempt < h->conf.retries) {
				todo[k++] = todo[i];
			} else if (res[i] && !ret) {
				ret = res[i] == -EAGAIN ? -EIO : res[i];
				snprintf(last_why, sizeof(last_why), "%s%s",
					 todo[i]->why, res[i] == -EAGAIN ? " (gave up after retries)" : "");
			}
		}
		pending = k;
		if (!pending || ret)
			break;
		curlx_backoff(attempt);
	}
out:
	if (todo != stack_ptrs)
		free(todo);
	if (res != stack_res)
		free(res);
	ctxpool_put(&h->sessions, s);
	return ret;
}

/* ------------------------------------------------------------ io ops */

/* Requests that lie in the bytes fetched at open are served from them. */
static bool from_head(struct http_io *h, struct io_req *r)
{
	if (r->offset > h->head_len || r->len > h->head_len - r->offset)
		return false;
	memcpy(r->buf, h->head + r->offset, r->len);
	r->result = 0;
	return true;
}

static void http_read_batch(struct io *io, struct io_req *reqs, size_t n)
{
	struct http_io *h = (struct http_io *)io;
	struct transfer stack[8], *ts = stack;
	size_t nt = 0, i, j;
	int ret;

	/* Runs of neighbours: as many transfers as runs at most. */
	if (n > 8) {
		ts = calloc(n, sizeof(*ts));
		if (!ts) {
			for (i = 0; i < n; i++)
				reqs[i].result = -ENOMEM;
			return;
		}
	}
	for (i = 0; i < n; i = j) {
		if (from_head(h, &reqs[i])) {
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < n && reqs[j].offset == reqs[j - 1].offset + reqs[j - 1].len &&
				reqs[j].len; j++)
			;
		memset(&ts[nt], 0, sizeof(ts[nt]));
		ts[nt] = (struct transfer){
			.h = h, .reqs = &reqs[i], .nreqs = j - i,
			.offset = reqs[i].offset,
			.len = reqs[j - 1].offset + reqs[j - 1].len - reqs[i].offset,
		};
		if (ts[nt].len)
			nt++;
		else
			reqs[i].result = 0;
	}
	ret = nt ? run_transfers(h, ts, nt) : 0;
	/* One transfer failing fails the batch: its reader reports the
	 * first; the others are read again when asked. */
	for (i = 0; i < nt; i++)
		for (j = 0; j < ts[i].nreqs; j++)
			ts[i].reqs[j].result = ret;
	if (ts != stack)
		free(ts);
}

static int http_read(struct io *io, void *buf, size_t len, uint64_t off)
{
	struct io_req r = { .buf = buf, .len = len, .offset = off };

	http_read_batch(io, &r, 1);
	return r.result;
}

static const char *http_why(struct io *io)
{
	(void)io;
	return last_why[0] ? last_why : NULL;
}

static void http_close(struct io *io)
{
	struct http_io *h = (struct http_io *)io;
	int i;

	ctxpool_fini(&h->sessions);
	if (h->share)
		libcurl.share_cleanup(h->share);
	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&h->share_locks[i]);
	libcurl.slist_free_all(h->headers);
	while (h->nretired)
		libcurl.slist_free_all(h->retired[--h->nretired]);
	if (h->release)
		h->release(h->renew_ctx);
	pthread_mutex_destroy(&h->headers_lock);
	free(h->url);
	free((char *)h->conf.cacert);
	free(h->head);
	free(h->identity);
	free(h);
}

static const struct io_ops http_ops = {
	.read = http_read,
	.read_batch = http_read_batch,
	.why = http_why,
	.close = http_close,
};

/* ------------------------------------------------------------ opening */

/* "Authorization: Bearer <first line of the file>". */
static int add_token(struct http_io *h, const char *file, ek_error *err)
{
	char token[TOKEN_MAX], header[TOKEN_MAX + 32];
	struct curl_slist *l;
	int ret = curlx_secret_line(file, token, sizeof(token), err);

	if (ret)
		return ret;
	snprintf(header, sizeof(header), "Authorization: Bearer %s", token);
	l = libcurl.slist_append(h->headers, header);
	if (!l)
		return err_fail(err, -ENOMEM, "out of memory");
	h->headers = l;
	return 0;
}

static int add_headers(struct http_io *h, const ek_http_options *o,
		       const struct io_http_extra *x, ek_error *err)
{
	const char *const *hd;

	/* First, so that a renewal replaces it; "Authorization:" alone
	 * (no value) sends nothing, keeping its place. */
	if ((x && x->auth && *x->auth) || h->renew) {
		struct curl_slist *l = libcurl.slist_append(h->headers,
							 x && x->auth && *x->auth ? x->auth : "Authorization:");

		if (!l)
			return err_fail(err, -ENOMEM, "out of memory");
		h->headers = l;
	}
	for (hd = o->headers; hd && *hd; hd++) {
		struct curl_slist *l;

		if (!strchr(*hd, ':') || strpbrk(*hd, "\r\n"))
			return err_fail(err, -EINVAL, "header '%s': not 'Name: value' on one line", *hd);
		l = libcurl.slist_append(h->headers, *hd);
		if (!l)
			return err_fail(err, -ENOMEM, "out of memory");
		h->headers = l;
	}
	return o->token_file ? add_token(h, o->token_file, err) : 0;
}

/* The object's size and validators: from a HEAD, which fetches no byte
 * of the image (a second mount with a warm cache fetches none at all);
 * where HEAD fails (a URL signed for GET only), from a ranged GET of the
 * first bytes, which are then kept. */
static int fetch_head(struct http_io *h, const struct io_http_extra *x, ek_error *err)
{
	struct transfer t = { .h = h, .head_only = true };
	struct io_req r;
	int ret = run_transfers(h, &t, 1);

	if (!ret) {
		h->base.size = (uint64_t)t.content_length;
	} else {
		h->head = malloc(HEAD_BYTES);
		if (!h->head)
			return err_fail(err, -ENOMEM, "out of memory");
		r = (struct io_req){ .buf = h->head, .len = HEAD_BYTES, .offset = 0 };
		/* No validator yet: the answer sets it.  check_answer
		 * shortens t.len to an object smaller than HEAD_BYTES. */
		t = (struct transfer){ .h = h, .reqs = &r, .nreqs = 1, .offset = 0, .len = HEAD_BYTES };
		ret = run_transfers(h, &t, 1);
		if (ret)
			return err_fail(err, ret, "%s: %s", h->url, last_why);
		h->base.size = t.range_total;
		h->head_len = (size_t)t.got;
	}
	snprintf(h->etag, sizeof(h->etag), "%s", t.etag);
	if (!h->etag[0])
		snprintf(h->last_modified, sizeof(h->last_modified), "%s", t.last_modified);
	if (x && x->size && h->base.size != x->size)
		return err_fail(err, -EUCLEAN, "%s: %" PRIu64 " bytes, where %" PRIu64 " were announced",
				h->url, h->base.size, x->size);
	if (x && x->identity) {
		/* Content addressed: the same bytes wherever they are. */
		h->identity = strdup(x->identity);
		if (!h->identity)
			return err_fail(err, -ENOMEM, "out of memory");
		h->base.identity = h->identity;
		return 0;
	}
	/* Without a validator a changed object cannot be told: no identity,
	 * so no cache keeps its bytes beyond this open. */
	if (h->etag[0] || h->last_modified[0]) {
		size_t len = strlen(h->url) + VALIDATOR_MAX + 32;

		h->identity = malloc(len);
		if (!h->identity)
			return err_fail(err, -ENOMEM, "out of memory");
		snprintf(h->identity, len, "%s\n%s\n%" PRIu64, h->url,
			 h->etag[0] ? h->etag : h->last_modified, h->base.size);
		h->base.identity = h->identity;
	}
	return 0;
}

bool io_is_url(const char *name)
{
	return !strncasecmp(name, "http://", 7) || !strncasecmp(name, "https://", 8);
}

int io_open_http(const char *url, const ek_http_options *o,
		 const struct io_http_extra *x, struct io **out, ek_error *err)
{
	static const ek_http_options defaults;
	struct http_io *h;
	int i, ret;

	if (!o)
		o = &defaults;
	ret = curlx_init(err);
	if (ret) {
		if (x && x->release)
			x->release(x->ctx);
		return ret;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		if (x && x->release)
			x->release(x->ctx);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	pthread_mutex_init(&h->headers_lock, NULL);
	h->headers_gen = 1;
	if (x && x->renew) {
		h->renew = x->renew;
		h->release = x->release;
		h->renew_ctx = x->ctx;
	}
	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&h->share_locks[i], NULL);
	ctxpool_init(&h->sessions, session_new, session_free);
	h->base.ops = &http_ops;
	h->base.name = "http";
	curlx_conf_from(&h->conf, o);
	h->conf.cacert = o->cacert ? strdup(o->cacert) : NULL;
	h->url = strdup(url);
	h->share = libcurl.share_init();
	if (!h->url || (o->cacert && !h->conf.cacert) || !h->share) {
		ret = err_fail(err, -ENOMEM, "out of memory");
		goto fail;
	}
	libcurl.share_setopt(h->share, CURLSHOPT_USERDATA, h);
	libcurl.share_setopt(h->share, CURLSHOPT_LOCKFUNC, share_lock);
	libcurl.share_setopt(h->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	libcurl.share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	libcurl.share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	ret = add_headers(h, o, x, err);
	if (ret)
		goto fail;
	ret = fetch_head(h, x, err);
	if (ret)
		goto fail;
	*out = &h->base;
	return 0;
fail:
	http_close(&h->base);
	return ret;
}
