/*
 * What every libcurl handle of erofskit shares (curlx.c): one global
 * initialisation, the options that make a transfer safe and bounded, and
 * which failures are worth another try.
 */
#ifndef EK_IO_CURLX_H
#define EK_IO_CURLX_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "erofskit/erofskit.h"

#define CURLX_TIMEOUT_MS 30000u
#define CURLX_RETRIES 5u
#define CURLX_BACKOFF_FIRST_MS 100u
#define CURLX_BACKOFF_MAX_MS 3000u

struct curlx_conf {
	bool insecure;           /* no TLS verification */
	const char *cacert;      /* CA bundle, NULL = the system's */
	long timeout_ms;         /* connect and stall */
	unsigned int retries;
};

/* curl_global_init, once per process; -EIO with err filled on failure. */
int curlx_init(ek_error *err);
/* The options of ek_http_options o (NULL: defaults), resolved. */
void curlx_conf_from(struct curlx_conf *conf, const ek_http_options *o);
/* http(s) only, redirects followed (to http(s) only), HTTP/2 over TLS,
 * the timeouts, TLS verification as conf says, no signals. */
int curlx_apply(CURL *c, const struct curlx_conf *conf);
/* A failure of the transport that another try may not repeat. */
bool curlx_retryable(CURLcode e);
/* An HTTP status that another try may not repeat (5xx, 408, 429). */
bool curlx_retryable_status(long status);
/* Sleep the backoff of try number attempt (0, 1, ...). */
void curlx_backoff(unsigned int attempt);

/* The first line of a file holding a secret (a token, user:password);
 * -errno with err naming the file, -EINVAL when the line is empty. */
int curlx_secret_line(const char *file, char *buf, size_t size, ek_error *err);

#endif
