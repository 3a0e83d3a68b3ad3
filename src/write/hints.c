/*
 * Per-file physical cluster sizes, as mkfs.erofs's --compress-hints reads
 * them: a file of rules "SIZE [ALGORITHM] REGEX", one a line.  A
 * compressed file takes the first rule whose pattern (POSIX extended,
 * unanchored, as --exclude-regex's) is found in its path under the
 * source, "usr/lib/libc.so.6", and its pclusters hold at most SIZE bytes
 * instead of -C's: small clusters where reads are random and small, big
 * ones where files are read whole, compressed with ALGORITHM, a place in
 * -z's list of algorithms (0, the first, when not given): a fast one for
 * what is read often, a strong one for the rest.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "util/error.h"
#include "write/hints.h"

struct hint {
	uint32_t cluster;
	unsigned int algorithm;
	regex_t pattern;
};

/* Each rule in an allocation of its own: a compiled regex_t is not
 * promised to survive being moved, as a growing array would move it. */
struct hints {
	struct hint **rules;
	unsigned int count;
	uint32_t largest;
};

void hints_close(struct hints *h)
{
	unsigned int i;

	if (!h)
		return;
	for (i = 0; i < h->count; i++) {
		regfree(&h->rules[i]->pattern);
		free(h->rules[i]);
	}
	free(h->rules);
	free(h);
}

/* Split line at blanks into at most `max` words; how many there were. */
static unsigned int split_words(char *line, char **words, unsigned int max)
{
	unsigned int n = 0;
	char *save = NULL, *w;

	for (w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		if (n < max)
			words[n] = w;
		n++;
	}
	return n;
}

/* One rule from a line of 2 or 3 words; errors without the place. */
static int parse_rule(char **words, unsigned int n, hints_check_fn check, const void *ctx,
		      struct hint *rule, ek_error *err)
{
	const char *pattern;
	uint64_t size;
	unsigned long algorithm = 0;
	int code;

	if (n < 2 || n > 3)
		return err_fail(err, -EINVAL, "expected SIZE [ALGORITHM] REGEX, found %u words", n);
	pattern = words[n - 1];
	if (ek_parse_size(words[0], &size) || size > UINT32_MAX)
		return err_fail(err, -EINVAL, "'%s' is not a cluster size", words[0]);
	if (n == 3) {
		char *end;

		/* Digits only: strtoul would take "-1" and " 1". */
		algorithm = strtoul(words[1], &end, 10);
		if (words[1][0] < '0' || words[1][0] > '9' || *end || algorithm > EK_CODECS_MAX)
			return err_fail(err, -EINVAL, "algorithm '%s': a place in -z's list "
					"(0 for the first)", words[1]);
	}
	code = check(ctx, (uint32_t)size, (unsigned int)algorithm, err);
	if (code)
		return code;
	code = regcomp(&rule->pattern, pattern, REG_EXTENDED | REG_NOSUB);
	if (code) {
		char why[128];

		regerror(code, &rule->pattern, why, sizeof(why));
		return err_fail(err, -EINVAL, "pattern '%s': %s", pattern, why);
	}
	rule->cluster = (uint32_t)size;
	rule->algorithm = (unsigned int)algorithm;
	return 0;
}

static int add_rule(struct hints *h, unsigned int *cap, struct hint *rule)
{
	if (h->count == *cap) {
		unsigned int grown = *cap ? 2 * *cap : 8;
		struct hint **r = realloc(h->rules, grown * sizeof(*r));

		if (!r)
			return -ENOMEM;
		h->rules = r;
		*cap = grown;
	}
	h->rules[h->count++] = rule;
	if (h->largest < rule->cluster)
		h->largest = rule->cluster;
	return 0;
}

int hints_open(const char *path, hints_check_fn check, const void *ctx, struct hints **out,
	       ek_error *err)
{
	struct hints *h = calloc(1, sizeof(*h));
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t line_cap = 0;
	unsigned int cap = 0, lineno = 0;
	int ret = 0;

	*out = NULL;
	if (!f) {
		ret = err_fail(err, -errno, "%s: %s", path, strerror(errno));
		free(h);
		return ret;
	}
	if (!h)
		ret = err_fail(err, -ENOMEM, "out of memory");
	while (!ret) {
		ssize_t len = getline(&line, &line_cap, f);
		char *words[3];
		unsigned int n;
		struct hint *rule;

		if (len < 0)
			break;
		lineno++;
		/* The words end at a NUL: what follows one would be lost. */
		if (strlen(line) != (size_t)len) {
			ret = err_fail(err, -EINVAL, "%s:%u: a NUL byte in the line", path, lineno);
			break;
		}
		n = split_words(line, words, 3);
		if (!n || words[0][0] == '#')
			continue;
		rule = malloc(sizeof(*rule));
		if (!rule) {
			ret = err_fail(err, -ENOMEM, "out of memory");
			break;
		}
		ret = parse_rule(words, n, check, ctx, rule, err);
		if (ret) {
			free(rule);
		} else if (h->count == HINTS_MAX || add_rule(h, &cap, rule)) {
			ret = h->count == HINTS_MAX ?
			      err_fail(err, -EINVAL, "more than %u rules", HINTS_MAX) :
			      err_fail(err, -ENOMEM, "out of memory");
			regfree(&rule->pattern);
			free(rule);
		}
		if (ret)
			err_prefix(err, "%s:%u: ", path, lineno);
	}
	/* A directory opens, and fails at the first read (EISDIR). */
	if (!ret && ferror(f))
		ret = err_fail(err, errno ? -errno : -EIO, "%s: %s", path,
			       errno ? strerror(errno) : "read error");
	free(line);
	fclose(f);
	if (ret) {
		hints_close(h);
		return ret;
	}
	*out = h;
	return 0;
}

unsigned int hints_rule(const struct hints *h, const char *rel)
{
	unsigned int i;

	for (i = 0; h && i < h->count; i++)
		if (!regexec(&h->rules[i]->pattern, rel, 0, NULL, 0))
			return i + 1;
	return 0;
}

uint32_t hints_cluster(const struct hints *h, unsigned int rule)
{
	return h->rules[rule - 1]->cluster;
}

unsigned int hints_algorithm(const struct hints *h, unsigned int rule)
{
	return h->rules[rule - 1]->algorithm;
}

uint32_t hints_largest(const struct hints *h)
{
	return h ? h->largest : 0;
}
