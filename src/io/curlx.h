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
	/* The user's, "Name: value", NULL-terminated: httpreq.c sends them
	 * with every request (http.c keeps a list of its own). */
	const char *const *headers;
};

/*
 * libcurl's functions, loaded by curlx_init() when a URL is first opened:
 * a process that reads local images never maps libcurl and the thirty
 * libraries it brings (TLS, Kerberos, LDAP, ...), which took 14 of the
 * 23 ms an `erofskit --version` spent starting.  Call them only after
 * curlx_init() succeeded.
 */
struct curlx_lib {
	CURLcode (*global_init)(long flags);
	const char *(*easy_strerror)(CURLcode e);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	char *(*easy_escape)(CURL *c, const char *s, int len);
	void (*free)(void *p);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
	CURLSH *(*share_init)(void);
	CURLSHcode (*share_setopt)(CURLSH *sh, CURLSHoption option, ...);
	CURLSHcode (*share_cleanup)(CURLSH *sh);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *m, CURLMoption option, ...);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *c);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *c);
	CURLMcode (*multi_perform)(CURLM *m, int *running);
	CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd *extra, unsigned int nextra,
				int timeout_ms, int *numfds);
	CURLMsg *(*multi_info_read)(CURLM *m, int *left);
	CURLMcode (*multi_cleanup)(CURLM *m);
};
extern struct curlx_lib libcurl;

/* Load libcurl and curl_global_init, once per process; -EIO with err
 * filled on failure (no libcurl installed, one too old). */
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
