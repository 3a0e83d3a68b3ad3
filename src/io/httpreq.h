/*
 * One HTTP request to the end (httpreq.c): for a registry's manifests,
 * tokens and uploads, where the image back end (http.c) reads ranges.
 * Transport failures and 5xx answers are tried again with backoff.
 */
#ifndef EK_IO_HTTPREQ_H
#define EK_IO_HTTPREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/curlx.h"

struct httpreq {
	const char *method;          /* "GET", "HEAD", "PUT", "POST", "PATCH" */
	const char *url;
	const char *const *headers;  /* "Name: value", NULL-terminated */
	const char *auth;            /* an "Authorization: ..." header or NULL */
	const void *body;            /* sent from memory, or ... */
	size_t body_len;
	int body_fd;                 /* ... from this file when >= 0 */
	uint64_t body_fd_len;
	size_t max_answer;           /* answer bytes kept; more is an error */
	/* The answer's body goes to answer_fd (a new, empty file; a blob's
	 * download) instead of memory: ans->body stays NULL, ans->body_len
	 * counts the bytes in the file.  Only a 200 or 206 answer's body is
	 * written; a try that fails part way leaves its bytes, and the next
	 * asks for the rest with a Range (a server that answers 200 to it
	 * sends the whole again, from the file's start). */
	bool answer_to_fd;
	int answer_fd;
	/* Called as the answer lands in answer_fd, with its bytes so far
	 * (from 0 again on a retry); false stops the request (-ECANCELED,
	 * not tried again).  NULL: not. */
	bool (*on_answer)(void *ctx, uint64_t bytes);
	void *on_answer_ctx;
	const struct curlx_conf *conf;
};

struct httpans {
	long status;
	char *body;                  /* NUL terminated; free with httpans_free */
	size_t body_len;
	char www_authenticate[1024];
	char location[2048];
	char content_type[256];
	char docker_digest[160];
	long long content_length;    /* -1: not given */
	char why[CURL_ERROR_SIZE + 64];  /* a transport failure, in words */
};

/* 0 when an answer came (of any status; see ans->status), else -errno
 * with ans->why saying why.  ans is filled either way. */
int httpreq_run(const struct httpreq *rq, struct httpans *ans);
void httpans_free(struct httpans *ans);

#endif
