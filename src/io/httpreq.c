/* One HTTP request to the end: for a registry's manifests, tokens and
 * uploads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "io/httpparse.h"
#include "io/httpreq.h"
#include "util/fdio.h"

struct exchange {
	const struct httpreq *rq;
	struct httpans *ans;
	uint64_t sent;
	bool too_long;
	int write_error;             /* answer_fd refused a write: -errno */
	bool stopped;                /* on_answer said stop */
	long status;                 /* of the response whose headers came last */
	/* answer_fd: bytes of the body an earlier try left there, asked
	 * for from this offset on (Range); placed: the first byte of this
	 * try's body has decided where it goes. */
	uint64_t resume_at;
	bool placed;
};

static size_t on_header(char *line, size_t size, size_t n, void *user)
{
	struct exchange *x = user;
	struct httpans *a = x->ans;
	size_t len = size * n;
	static const struct {
		const char *name;
		size_t off, size;
	} wanted[] = {
		{ "www-authenticate:", offsetof(struct httpans, www_authenticate),
		  sizeof(((struct httpans *)0)->www_authenticate) },
		{ "location:", offsetof(struct httpans, location),
		  sizeof(((struct httpans *)0)->location) },
		{ "content-type:", offsetof(struct httpans, content_type),
		  sizeof(((struct httpans *)0)->content_type) },
		{ "docker-content-digest:", offsetof(struct httpans, docker_digest),
		  sizeof(((struct httpans *)0)->docker_digest) },
	};
	size_t i;

	if (len > 5 && !strncmp(line, "HTTP/", 5)) {
		const char *code = memchr(line, ' ', len);

		x->status = code ? strtol(code + 1, NULL, 10) : 0;
		/* A new response (after a redirect): forget the last one's. */
		a->www_authenticate[0] = a->location[0] = a->content_type[0] = '\0';
		a->docker_digest[0] = '\0';
		a->content_length = -1;
		return len;
	}
	if (len > 15 && !strncasecmp(line, "content-length:", 15)) {
		char v[32];

		http_header_value(line + 15, len - 15, v, sizeof(v));
		a->content_length = strtoll(v, NULL, 10);
		return len;
	}
	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		size_t nl = strlen(wanted[i].name);

		if (len > nl && !strncasecmp(line, wanted[i].name, nl))
			http_header_value(line + nl, len - nl, (char *)a + wanted[i].off, wanted[i].size);
	}
	return len;
}

/*
 * Where a body bound for answer_fd goes (false: nowhere).  An error
 * page's is not the blob's: dropped.  A 206 continues what the last try
 * left; a 200 (the server ignored the range, or there was none) starts
 * the file again.
 */
static bool place_answer(struct exchange *x)
{
	if (x->status != 200 && x->status != 206)
		return false;
	if (x->placed)
		return true;
	x->placed = true;
	if (x->status == 206 && x->resume_at) {
		x->ans->body_len = x->resume_at;
		return true;
	}
	x->ans->body_len = 0;
	if (x->resume_at && ftruncate(x->rq->answer_fd, 0) < 0) {
		x->write_error = -errno;
		x->placed = false;
	}
	return x->placed;
}

static size_t on_body(char *data, size_t size, size_t n, void *user)
{
	struct exchange *x = user;
	struct httpans *a = x->ans;
	size_t len = size * n;
	char *grown;

	if (x->rq->answer_to_fd && !place_answer(x))
		return x->write_error ? 0 : len;     /* an error page goes nowhere */
	if (a->body_len + len > x->rq->max_answer) {
		x->too_long = true;
		return 0;
	}
	if (x->rq->answer_to_fd) {
		x->write_error = fd_pwrite_full(x->rq->answer_fd, data, len, a->body_len);
		if (x->write_error)
			return 0;
		a->body_len += len;
		if (x->rq->on_answer && !x->rq->on_answer(x->rq->on_answer_ctx, a->body_len)) {
			x->stopped = true;
			return 0;
		}
		return len;
	}
	grown = realloc(a->body, a->body_len + len + 1);
	if (!grown)
		return 0;
	a->body = grown;
	memcpy(a->body + a->body_len, data, len);
	a->body_len += len;
	a->body[a->body_len] = '\0';
	return len;
}

static size_t on_upload(char *buf, size_t size, size_t n, void *user)
{
	struct exchange *x = user;
	const struct httpreq *rq = x->rq;
	uint64_t total = rq->body_fd >= 0 ? rq->body_fd_len : rq->body_len;
	size_t want = size * n;
	ssize_t got;

	if (want > total - x->sent)
		want = (size_t)(total - x->sent);
	if (!want)
		return 0;
	if (rq->body_fd < 0) {
		memcpy(buf, (const char *)rq->body + x->sent, want);
		got = (ssize_t)want;
	} else {
		got = pread(rq->body_fd, buf, want, (off_t)x->sent);
		if (got <= 0)
			return CURL_READFUNC_ABORT;
	}
	x->sent += (uint64_t)got;
	return (size_t)got;
}

/* libcurl's progress callback: about once a second while nothing comes,
 * and as bytes do, so that a caller who stops waiting (a cancel, a build
 * that failed) is heard without the next byte of a server gone quiet. */
static int on_progress(void *user, curl_off_t down_total, curl_off_t down_now,
		       curl_off_t up_total, curl_off_t up_now)
{
	struct exchange *x = user;

	(void)down_total, (void)down_now, (void)up_total, (void)up_now;
	if (x->rq->on_answer(x->rq->on_answer_ctx, x->ans->body_len))
		return 0;
	x->stopped = true;
	return 1;
}

static CURLcode perform(CURL *c, const struct httpreq *rq, struct exchange *x,
			struct curl_slist *headers)
{
	CURLcode e = CURLE_OK;
	uint64_t body = rq->body_fd >= 0 ? rq->body_fd_len : rq->body_len;
	bool sends = !strcmp(rq->method, "PUT") || !strcmp(rq->method, "POST") ||
		     !strcmp(rq->method, "PATCH");

	if (curlx_apply(c, rq->conf))
		return CURLE_FAILED_INIT;
#define SET(opt, val) do { if (e == CURLE_OK) e = libcurl.easy_setopt(c, opt, val); } while (0)
	SET(CURLOPT_URL, rq->url);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, x);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, x);
	SET(CURLOPT_HTTPHEADER, headers);
	SET(CURLOPT_ERRORBUFFER, x->ans->why);
	if (rq->on_answer) {
		SET(CURLOPT_XFERINFOFUNCTION, on_progress);
		SET(CURLOPT_XFERINFODATA, x);
		SET(CURLOPT_NOPROGRESS, 0L);
	}
	if (x->resume_at) {
		char range[32];

		snprintf(range, sizeof(range), "%llu-", (unsigned long long)x->resume_at);
		SET(CURLOPT_RANGE, range);      /* curl copies it */
	}
	if (!strcmp(rq->method, "HEAD")) {
		SET(CURLOPT_NOBODY, 1L);
	} else if (sends) {
		SET(CURLOPT_UPLOAD, 1L);
		SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t)body);
		SET(CURLOPT_READFUNCTION, on_upload);
		SET(CURLOPT_READDATA, x);
		SET(CURLOPT_CUSTOMREQUEST, rq->method);
	}
#undef SET
	if (e != CURLE_OK)
		return e;
	e = libcurl.easy_perform(c);
	if (e == CURLE_OK)
		libcurl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x->ans->status);
	return e;
}

static bool append_headers(struct curl_slist **list, const char *const *h)
{
	struct curl_slist *l;

	for (; h && *h; h++) {
		l = libcurl.slist_append(*list, *h);
		if (!l)
			return false;
		*list = l;
	}
	return true;
}

int httpreq_run(const struct httpreq *rq, struct httpans *ans)
{
	struct curl_slist *headers = NULL, *l;
	unsigned int attempt;
	uint64_t resume_at = 0;      /* answer_fd: bytes a try left there */
	CURLcode e = CURLE_FAILED_INIT;
	int ret = 0;

	memset(ans, 0, sizeof(*ans));
	ans->content_length = -1;
	/* The request's own headers, then the user's. */
	if (!append_headers(&headers, rq->headers) ||
	    !append_headers(&headers, rq->conf->headers))
		goto no_memory;
	if (rq->auth) {
		l = libcurl.slist_append(headers, rq->auth);
		if (!l)
			goto no_memory;
		headers = l;
	}
	/* No "Expect: 100-continue" round trip before an upload. */
	l = libcurl.slist_append(headers, "Expect:");
	if (!l)
		goto no_memory;
	headers = l;
	for (attempt = 0;; attempt++) {
		struct exchange x = { .rq = rq, .ans = ans, .resume_at = resume_at };
		CURL *c = libcurl.easy_init();

		if (!c)
			goto no_memory;
		free(ans->body);
		ans->body = NULL;
		ans->body_len = rq->answer_to_fd ? resume_at : 0;
		ans->status = 0;
		ans->why[0] = '\0';
		e = perform(c, rq, &x, headers);
		libcurl.easy_cleanup(c);
		/* A blob's bytes that came before a failure stay: the next try
		 * asks for the rest.  A range past them (416: the last try had
		 * them all, or the blob shrank) starts again from nothing. */
		if (rq->answer_to_fd && (x.status == 200 || x.status == 206))
			resume_at = ans->body_len;
		if (rq->answer_to_fd && x.status == 416 && resume_at) {
			resume_at = 0;
			if (ftruncate(rq->answer_fd, 0) < 0)
				x.write_error = -errno;
			else if (attempt < rq->conf->retries)
				continue;
		}
		if (x.stopped) {
			snprintf(ans->why, sizeof(ans->why), "stopped by its caller");
			ret = -ECANCELED;
			break;
		}
		if (x.write_error) {
			ret = x.write_error;
			snprintf(ans->why, sizeof(ans->why), "writing what it sent: %s",
				 strerror(-ret));
			break;
		}
		if (x.too_long) {
			snprintf(ans->why, sizeof(ans->why), "an answer longer than %zu bytes",
				 rq->max_answer);
			ret = -EFBIG;
			break;
		}
		if (e == CURLE_OK && !curlx_retryable_status(ans->status))
			break;
		if (attempt >= rq->conf->retries ||
		    (e != CURLE_OK && !curlx_retryable(e))) {
			if (e != CURLE_OK) {
				if (!ans->why[0])
					snprintf(ans->why, sizeof(ans->why), "%s", libcurl.easy_strerror(e));
				ret = -EIO;
			}
			break;
		}
		curlx_backoff(attempt);
	}
	libcurl.slist_free_all(headers);
	return ret;
no_memory:
	libcurl.slist_free_all(headers);
	snprintf(ans->why, sizeof(ans->why), "out of memory");
	return -ENOMEM;
}

void httpans_free(struct httpans *ans)
{
	free(ans->body);
	ans->body = NULL;
}
