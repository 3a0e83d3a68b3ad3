/* The options of images at http:// and https:// URLs and of registries,
 * one spelling for every subcommand: mount takes them among its -o, fsck,
 * dump, mkfs --oci and push in a -o of their own, each those it uses. */
#include <stddef.h>
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

/* Setters of the options with a value: the value after '='; -1 after
 * printing why it is wrong. */
#define SETTER(name) static int name(const char *cmd, const char *tok, const char *val, \
				     ek_http_options *h)

static int no_memory(const char *cmd, const char *tok)
{
	cli_error(cmd, "option '%s': out of memory", tok);
	return -1;
}

/* A file's or directory's name, kept. */
static int set_name(const char *cmd, const char *tok, const char *val, const char **out)
{
	if (!*val) {
		cli_error(cmd, "option '%s': a name is missing", tok);
		return -1;
	}
	*out = keep(val);
	return *out ? 0 : no_memory(cmd, tok);
}

SETTER(set_cacert)
{
	return set_name(cmd, tok, val, &h->cacert);
}

SETTER(set_token)
{
	return set_name(cmd, tok, val, &h->token_file);
}

SETTER(set_credentials)
{
	return set_name(cmd, tok, val, &h->credentials_file);
}

SETTER(set_header)
{
	if (!strchr(val, ':')) {
		cli_error(cmd, "option '%s': a header is 'Name: value'", tok);
		return -1;
	}
	if (nheaders == HEADERS_MAX) {
		cli_error(cmd, "option '%s': at most %d headers", tok, HEADERS_MAX);
		return -1;
	}
	headers[nheaders] = keep(val);
	if (!headers[nheaders])
		return no_memory(cmd, tok);
	nheaders++;
	h->headers = headers;
	return 0;
}

SETTER(set_cache_dir)
{
	/* Absolute: the mount server leaves the working directory. */
	char *abs = *val && strcmp(val, "none") && val[0] != '/' ? realpath_dir(val) : NULL;
	int ret = set_name(cmd, tok, abs ? abs : val, &h->cache_dir);

	free(abs);
	return ret;
}

SETTER(set_cache_max)
{
	uint64_t v;

	if (ek_parse_size(val, &v) || v < ((uint64_t)1 << 20)) {
		cli_error(cmd, "option '%s': a size of at least 1M", tok);
		return -1;
	}
	h->cache_max = v;
	return 0;
}

SETTER(set_timeout)
{
	if (!parse_seconds(val, &h->timeout_ms)) {
		cli_error(cmd, "option '%s': seconds from 1 to 86400", tok);
		return -1;
	}
	return 0;
}

SETTER(set_retries)
{
	uint32_t count;

	if (!cli_parse_count(val, 0, 100, &count)) {
		cli_error(cmd, "option '%s': a count from 0 to 100", tok);
		return -1;
	}
	h->retries = count ? count : EK_HTTP_NO_RETRIES;
	return 0;
}

SETTER(set_downloads)
{
	uint32_t count;

	if (!cli_parse_count(val, 1, EK_HTTP_DOWNLOADS_MAX, &count)) {
		cli_error(cmd, "option '%s': a count from 1 to %d", tok, EK_HTTP_DOWNLOADS_MAX);
		return -1;
	}
	h->downloads = count;
	return 0;
}

#define ALL (CLI_REMOTE_READ | CLI_REMOTE_PULL | CLI_REMOTE_PUSH)

/*
 * Every option, and which commands take it: one that a command would
 * only ignore (a cache for push, layers at once for fsck) is refused
 * there by name, not accepted for nothing.
 */
static const struct remote_option {
	const char *name;       /* "insecure"; "cacert=" takes a value */
	const char *shown;      /* as the list of options names it */
	unsigned int takers;    /* CLI_REMOTE_* */
	/* A value's setter, or the flag set to 1 (an int of ek_http_options). */
	int (*set)(const char *cmd, const char *tok, const char *val, ek_http_options *h);
	size_t flag;
} options[] = {
#define FLAG(name, takers, field) { name, name, takers, NULL, offsetof(ek_http_options, field) }
#define VALUE(name, shown, takers, set) { name, shown, takers, set, 0 }
	FLAG("insecure", ALL, insecure),
	VALUE("cacert=", "cacert=FILE", ALL, set_cacert),
	VALUE("header=", "header=H", ALL, set_header),
	VALUE("token=", "token=FILE", CLI_REMOTE_READ, set_token),
	VALUE("timeout=", "timeout=S", ALL, set_timeout),
	VALUE("retries=", "retries=N", ALL, set_retries),
	VALUE("cache_dir=", "cache_dir=DIR", CLI_REMOTE_READ, set_cache_dir),
	VALUE("cache_max=", "cache_max=SIZE", CLI_REMOTE_READ, set_cache_max),
	FLAG("prefetch=all", CLI_REMOTE_READ, prefetch_all),
	VALUE("credentials=", "credentials=FILE", ALL, set_credentials),
	FLAG("plain_http", ALL, plain_http),
	VALUE("downloads=", "downloads=N", CLI_REMOTE_PULL, set_downloads),
#undef FLAG
#undef VALUE
};

/* Who takes an option, in words, for the message of one refused. */
static void takers_named(unsigned int takers, char *out, size_t size)
{
	/* By bit: CLI_REMOTE_READ, _PULL, _PUSH. */
	static const char *const words[] = { "fsck, dump and mount", "mkfs --oci", "push" };
	size_t i, len = 0;
	unsigned int n = 0;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (takers & (1u << i) && len < size)
			len += (size_t)snprintf(out + len, size - len, "%s%s", n++ ? " and " : "",
						words[i]);
	/* "mkfs --oci takes it", "fsck, dump and mount take it" */
	snprintf(out + len, len < size ? size - len : 0, " take%s it",
		 n == 1 && !(takers & CLI_REMOTE_READ) ? "s" : "");
}

static const struct remote_option *find_option(const char *tok)
{
	size_t i, len;

	for (i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		len = strlen(options[i].name);
		if (options[i].name[len - 1] == '=' ? !strncmp(tok, options[i].name, len)
						    : !strcmp(tok, options[i].name))
			return &options[i];
	}
	return NULL;
}

int cli_remote_option(const char *cmd, unsigned int taker, const char *tok,
		      ek_open_options *oo)
{
	const struct remote_option *o = find_option(tok);

	if (!o)
		return 0;
	if (!(o->takers & taker)) {
		char who[128];

		takers_named(o->takers, who, sizeof(who));
		cli_error(cmd, "option '%s': only %s", tok, who);
		return -1;
	}
	if (!o->set) {
		*(int *)((char *)&oo->http + o->flag) = 1;
		return 1;
	}
	return o->set(cmd, tok, tok + strlen(o->name), &oo->http) ? -1 : 1;
}

/* The options a taker takes, as a list in words. */
static void names_taken(unsigned int taker, char *out, size_t size)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < sizeof(options) / sizeof(options[0]) && len < size; i++)
		if (options[i].takers & taker)
			len += (size_t)snprintf(out + len, size - len, "%s%s", len ? ", " : "",
						options[i].shown);
}

int cli_remote_options(const char *cmd, unsigned int taker, const char *list,
		       ek_open_options *oo)
{
	char *copy = strdup(list), *tok, *save = NULL;
	char names[512];
	int ret = 0;

	if (!copy) {
		cli_error(cmd, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		ret = cli_remote_option(cmd, taker, tok, oo);
		if (ret == 0) {
			names_taken(taker, names, sizeof(names));
			cli_error(cmd, "unknown option '%s' in -o (they are: %s)", tok, names);
		}
		ret = ret == 1 ? 0 : -1;
	}
	free(copy);
	return ret;
}
