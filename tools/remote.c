/* The options of images at http:// and https:// URLs, one spelling for
 * every subcommand: mount takes them among its -o, fsck and dump in a -o
 * of their own. */
#include <stdint.h>
#include <stdlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define HEADERS_MAX 16
#define KEPT_MAX 64

/* The values live as long as the process (the callers' option strings
 * may not): copies, held here. */
static const char *headers[HEADERS_MAX + 1];
static size_t nheaders;
static char *kept[KEPT_MAX];
static size_t nkept;

static const char *keep(const char *s)
{
	char *copy = nkept < KEPT_MAX ? strdup(s) : NULL;

	if (copy)
		kept[nkept++] = copy;
	return copy;
}

static bool parse_seconds(const char *s, unsigned int *ms)
{
	uint32_t v;

	if (!cli_parse_count(s, 1, 86400, &v))
		return false;
	*ms = v * 1000u;
	return true;
}

/* dir after the working directory (it need not exist yet). */
static char *realpath_dir(const char *dir)
{
	char cwd[PATH_MAX], *out;

	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	out = malloc(strlen(cwd) + strlen(dir) + 2);
	if (out)
		sprintf(out, "%s/%s", cwd, dir);
	return out;
}

int cli_remote_option(const char *cmd, const char *tok, ek_open_options *oo)
{
	uint64_t v;
	uint32_t count;

	if (!strcmp(tok, "insecure")) {
		oo->http.insecure = 1;
	} else if (!strncmp(tok, "cacert=", 7) && tok[7]) {
		oo->http.cacert = keep(tok + 7);
		if (!oo->http.cacert)
			goto no_memory;
	} else if (!strncmp(tok, "token=", 6) && tok[6]) {
		oo->http.token_file = keep(tok + 6);
		if (!oo->http.token_file)
			goto no_memory;
	} else if (!strncmp(tok, "header=", 7)) {
		if (!strchr(tok + 7, ':')) {
			cli_error(cmd, "option '%s': a header is 'Name: value'", tok);
			return -1;
		}
		if (nheaders == HEADERS_MAX) {
			cli_error(cmd, "option '%s': at most %d headers", tok, HEADERS_MAX);
			return -1;
		}
		headers[nheaders] = keep(tok + 7);
		if (!headers[nheaders])
			goto no_memory;
		nheaders++;
		oo->http.headers = headers;
	} else if (!strncmp(tok, "cache_dir=", 10) && tok[10]) {
		/* Absolute: the mount server leaves the working directory. */
		char *abs = strcmp(tok + 10, "none") && tok[10] != '/'
			? realpath_dir(tok + 10) : NULL;

		oo->http.cache_dir = keep(abs ? abs : tok + 10);
		free(abs);
		if (!oo->http.cache_dir)
			goto no_memory;
	} else if (!strncmp(tok, "credentials=", 12) && tok[12]) {
		oo->http.credentials_file = keep(tok + 12);
		if (!oo->http.credentials_file)
			goto no_memory;
	} else if (!strcmp(tok, "plain_http")) {
		oo->http.plain_http = 1;
	} else if (!strcmp(tok, "prefetch=all")) {
		oo->http.prefetch_all = 1;
	} else if (!strncmp(tok, "cache_max=", 10)) {
		if (ek_parse_size(tok + 10, &v) || v < ((uint64_t)1 << 20)) {
			cli_error(cmd, "option '%s': a size of at least 1M", tok);
			return -1;
		}
		oo->http.cache_max = v;
	} else if (!strncmp(tok, "timeout=", 8)) {
		if (!parse_seconds(tok + 8, &oo->http.timeout_ms)) {
			cli_error(cmd, "option '%s': seconds from 1 to 86400", tok);
			return -1;
		}
	} else if (!strncmp(tok, "downloads=", 10)) {
		if (!cli_parse_count(tok + 10, 1, EK_HTTP_DOWNLOADS_MAX, &count)) {
			cli_error(cmd, "option '%s': a count from 1 to %d", tok,
				  EK_HTTP_DOWNLOADS_MAX);
			return -1;
		}
		oo->http.downloads = count;
	} else if (!strncmp(tok, "retries=", 8)) {
		if (!cli_parse_count(tok + 8, 0, 100, &count)) {
			cli_error(cmd, "option '%s': a count from 0 to 100", tok);
			return -1;
		}
		oo->http.retries = count ? count : EK_HTTP_NO_RETRIES;
	} else {
		return 0;
	}
	return 1;
no_memory:
	cli_error(cmd, "option '%s': out of memory", tok);
	return -1;
}

int cli_remote_options(const char *cmd, const char *list, ek_open_options *oo)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int ret = 0;

	if (!copy) {
		cli_error(cmd, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		ret = cli_remote_option(cmd, tok, oo);
		if (ret == 0)
			cli_error(cmd, "unknown option '%s' in -o (they are: insecure, "
				  "cacert=FILE, header=H, token=FILE, timeout=S, retries=N, "
				  "cache_dir=DIR, cache_max=SIZE, prefetch=all, credentials=FILE, "
				  "plain_http, downloads=N)", tok);
		ret = ret == 1 ? 0 : -1;
	}
	free(copy);
	return ret;
}
