/* What every libcurl handle of erofskit shares, and libcurl itself,
 * loaded on first use. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "io/curlx.h"
#include "util/dynlib.h"
#include "util/error.h"

struct curlx_lib libcurl;

#define SYMBOL(name) DYNLIB_SYMBOL(struct curlx_lib, "curl_", name)
static const struct dynlib_symbol symbols[] = {
	SYMBOL(global_init), SYMBOL(easy_strerror), SYMBOL(easy_init),
	SYMBOL(easy_setopt), SYMBOL(easy_perform), SYMBOL(easy_getinfo),
	SYMBOL(easy_cleanup), SYMBOL(easy_escape), SYMBOL(free),
	SYMBOL(slist_append), SYMBOL(slist_free_all), SYMBOL(share_init),
	SYMBOL(share_setopt), SYMBOL(share_cleanup), SYMBOL(multi_init),
	SYMBOL(multi_setopt), SYMBOL(multi_add_handle), SYMBOL(multi_remove_handle),
	SYMBOL(multi_perform), SYMBOL(multi_poll), SYMBOL(multi_info_read),
	SYMBOL(multi_cleanup),
};
#undef SYMBOL

/* Debian's libcurl4 (OpenSSL), then libcurl3-gnutls: the same API. */
static const char *const sonames[] = { "libcurl.so.4", "libcurl-gnutls.so.4" };

/* libcurl cannot be unloaded once initialised: it stays. */
static int global_init(char *why, size_t size)
{
	CURLcode e = libcurl.global_init(CURL_GLOBAL_DEFAULT);

	if (e == CURLE_OK)
		return 0;
	snprintf(why, size, "its global init failed: %s", libcurl.easy_strerror(e));
	return -1;
}

static struct dynlib lib = DYNLIB_INIT("images at URLs need libcurl", "libcurl4", sonames,
				       symbols, &libcurl, global_init);

int curlx_init(ek_error *err)
{
	return dynlib_use(&lib, err);
}

void curlx_conf_from(struct curlx_conf *conf, const ek_http_options *o)
{
	*conf = (struct curlx_conf){
		.insecure = o && o->insecure,
		.cacert = o ? o->cacert : NULL,
		.timeout_ms = o && o->timeout_ms ? (long)o->timeout_ms : (long)CURLX_TIMEOUT_MS,
		.retries = !o || !o->retries ? CURLX_RETRIES :
			   o->retries == EK_HTTP_NO_RETRIES ? 0 : o->retries,
		.headers = o ? o->headers : NULL,
	};
}

int curlx_apply(CURL *c, const struct curlx_conf *conf)
{
	CURLcode e = CURLE_OK;

#define SET(opt, val) do { if (e == CURLE_OK) e = libcurl.easy_setopt(c, opt, val); } while (0)
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_FOLLOWLOCATION, 1L);
	SET(CURLOPT_MAXREDIRS, 8L);
	SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	SET(CURLOPT_CONNECTTIMEOUT_MS, conf->timeout_ms);
	/* A stall: under a byte a second for the whole timeout. */
	SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
	SET(CURLOPT_LOW_SPEED_TIME, (conf->timeout_ms + 999) / 1000);
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
	if (conf->insecure) {
		SET(CURLOPT_SSL_VERIFYPEER, 0L);
		SET(CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (conf->cacert)
		SET(CURLOPT_CAINFO, conf->cacert);
#undef SET
	return e == CURLE_OK ? 0 : -EINVAL;
}

bool curlx_retryable(CURLcode e)
{
	switch (e) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

bool curlx_retryable_status(long status)
{
	return status >= 500 || status == 408 || status == 429;
}

void curlx_backoff(unsigned int attempt)
{
	unsigned int ms = CURLX_BACKOFF_FIRST_MS;
	struct timespec ts;

	while (attempt-- && ms < CURLX_BACKOFF_MAX_MS)
		ms *= 2;
	if (ms > CURLX_BACKOFF_MAX_MS)
		ms = CURLX_BACKOFF_MAX_MS;
	ts = (struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int curlx_secret_line(const char *file, char *buf, size_t size, ek_error *err)
{
	FILE *f = fopen(file, "re");
	size_t n;

	if (!f)
		return err_fail(err, -errno, "%s: %s", file, strerror(errno));
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!buf[0])
		return err_fail(err, -EINVAL, "%s: the first line is empty", file);
	return 0;
}
