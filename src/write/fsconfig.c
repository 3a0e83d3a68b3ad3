/* Android's canned fs_config; see fsconfig.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "write/fsconfig.h"

/* More lines than any partition has files is a file that is not one. */
#define FSCONFIG_MAX_LINES (16u << 20)

struct fsconfig_line {
	char *path;
	uint32_t order;         /* line number: the last of equal paths wins */
	struct fsconfig_entry e;
};

struct fsconfig {
	char *file;
	struct fsconfig_line *lines;
	uint32_t count, cap;
};

const char *fsconfig_path(const struct fsconfig *c)
{
	return c->file;
}

void fsconfig_close(struct fsconfig *c)
{
	uint32_t i;

	if (!c)
		return;
	for (i = 0; i < c->count; i++)
		free(c->lines[i].path);
	free(c->lines);
	free(c->file);
	free(c);
}

/* A number in base (8, 10, or 0 for strtoull's 0x hex and 0 octal) no
 * larger than max, and nothing else. */
static int parse_number(const char *word, int base, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull takes blanks and a sign: a number starts with a digit */
	if (!isdigit((unsigned char)word[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(word, &end, base);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The words after the path: UID GID MODE, then optional ones. */
static int parse_attributes(char *rest, struct fsconfig_entry *e, const char **why)
{
	static const char *const names[] = { "owner", "group", "mode" };
	char *save = NULL, *w;
	uint64_t v[3];
	unsigned int n = 0;

	for (w = strtok_r(rest, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (n < 3) {
			int bad = parse_number(w, n == 2 ? 8 : 10, n == 2 ? 07777 : UINT32_MAX,
					       &v[n]);

			if (bad) {
				*why = names[n];
				return -EINVAL;
			}
			n++;
		} else if (!strncmp(w, "capabilities=", 13)) {
			if (parse_number(w + 13, 0, UINT64_MAX, &e->capabilities)) {
				*why = "capabilities";
				return -EINVAL;
			}
		}
	}
	if (n < 3) {
		*why = "fields: expected PATH UID GID MODE";
		return -EINVAL;
	}
	e->uid = (uint32_t)v[0];
	e->gid = (uint32_t)v[1];
	e->mode = (uint32_t)v[2];
	return 0;
}

/* One line: 0 (maybe nothing: a blank line or a comment), or -errno. */
static int parse_line(struct fsconfig *c, char *line, uint32_t lineno, ek_error *err)
{
	struct fsconfig_line *l;
	const char *why = NULL;
	char *path = line, *rest;
	size_t len;

	line[strcspn(line, "\r\n")] = '\0';
	if (!line[strspn(line, " \t")] || line[0] == '#')
		return 0;
	/* The root: a path left empty, or "/"s alone. */
	if (line[0] == ' ' || line[0] == '\t') {
		path = line + strlen(line);
		rest = line;
	} else {
		rest = line + strcspn(line, " \t");
		if (*rest)
			*rest++ = '\0';
		path += strspn(path, "/");
		len = strlen(path);
		while (len && path[len - 1] == '/')
			path[--len] = '\0';
	}
	if (c->count == c->cap) {
		uint32_t grown = c->cap ? 2 * c->cap : 256;
		struct fsconfig_line *g;

		if (c->cap >= FSCONFIG_MAX_LINES)
			return err_fail(err, -EFBIG, "%s: more than %u entries", c->file,
					FSCONFIG_MAX_LINES);
		g = realloc(c->lines, grown * sizeof(*g));
		if (!g)
			return err_fail(err, -ENOMEM, "out of memory");
		c->lines = g;
		c->cap = grown;
	}
	l = &c->lines[c->count];
	memset(l, 0, sizeof(*l));
	if (parse_attributes(rest, &l->e, &why))
		return err_fail(err, -EINVAL, "%s:%u: %s: bad %s", c->file, lineno,
				*path ? path : "(the root)", why);
	l->path = strdup(path);
	if (!l->path)
		return err_fail(err, -ENOMEM, "out of memory");
	l->order = lineno;
	c->count++;
	return 0;
}

static int line_order(const void *a, const void *b)
{
	const struct fsconfig_line *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Sorted by path, each path once: its last line. */
static void sort_lines(struct fsconfig *c)
{
	uint32_t i, kept = 0;

	qsort(c->lines, c->count, sizeof(*c->lines), line_order);
	for (i = 0; i < c->count; i++) {
		if (i + 1 < c->count && !strcmp(c->lines[i].path, c->lines[i + 1].path)) {
			free(c->lines[i].path);
			continue;
		}
		c->lines[kept++] = c->lines[i];
	}
	c->count = kept;
}

int fsconfig_open(const char *path, struct fsconfig **out, ek_error *err)
{
	struct fsconfig *c = calloc(1, sizeof(*c));
	FILE *f = NULL;
	char *line = NULL;
	size_t cap = 0;
	uint32_t lineno = 0;
	ssize_t len;
	int ret = 0;

	*out = NULL;
	if (!c || !(c->file = strdup(path))) {
		free(c);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	f = fopen(path, "re");
	if (!f)
		ret = err_fail(err, -errno, "%s: %s", path, strerror(errno));
	while (!ret && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (strlen(line) != (size_t)len)
			ret = err_fail(err, -EINVAL, "%s:%u: a NUL byte in the line", path, lineno);
		else
			ret = parse_line(c, line, lineno, err);
	}
	if (!ret && f && ferror(f))
		ret = err_fail(err, -EIO, "%s: cannot read it", path);
	free(line);
	if (f)
		fclose(f);
	if (ret) {
		fsconfig_close(c);
		return ret;
	}
	sort_lines(c);
	*out = c;
	return 0;
}

static int key_order(const void *key, const void *elem)
{
	return strcmp(key, ((const struct fsconfig_line *)elem)->path);
}

const struct fsconfig_entry *fsconfig_lookup(const struct fsconfig *c, const char *key)
{
	const struct fsconfig_line *l = bsearch(key, c->lines, c->count, sizeof(*c->lines),
						key_order);

	return l ? &l->e : NULL;
}
