/*
 * Leaving entries out of a directory source.  Both kinds of rule see a
 * path relative to the source, without a leading '/': --exclude-path
 * compares it whole, --exclude-regex searches it (unanchored, as regexec
 * does), which is how mkfs.erofs reads the same options.  A directory
 * left out takes everything under it along.
 */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/warn.h"
#include "write/exclude.h"

struct exclude {
	bool has_image;
	dev_t image_dev;
	ino_t image_ino;
	const char *const *paths;   /* borrowed from the options */
	bool *path_used;
	size_t npaths;
	regex_t *regexes;
	size_t nregexes;
};

static size_t count(const char *const *list)
{
	size_t n = 0;

	while (list && list[n])
		n++;
	return n;
}

int exclude_open(const ek_build_options *o, const char *image_path, struct exclude **out,
		 ek_error *err)
{
	size_t npaths = count(o->exclude_paths), nregexes = count(o->exclude_regexes), i;
	struct stat st;
	struct exclude *x;
	bool image = image_path && stat(image_path, &st) == 0 && S_ISREG(st.st_mode);

	*out = NULL;
	if (!image && !npaths && !nregexes)
		return 0;
	x = calloc(1, sizeof(*x));
	if (!x)
		return err_fail(err, -ENOMEM, "out of memory");
	if (image) {
		x->has_image = true;
		x->image_dev = st.st_dev;
		x->image_ino = st.st_ino;
	}
	x->paths = o->exclude_paths;
	x->npaths = npaths;
	x->path_used = calloc(npaths ? npaths : 1, sizeof(*x->path_used));
	x->regexes = calloc(nregexes ? nregexes : 1, sizeof(*x->regexes));
	if (!x->path_used || !x->regexes) {
		exclude_close(x, NULL);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < nregexes; i++) {
		int code = regcomp(&x->regexes[i], o->exclude_regexes[i], REG_EXTENDED | REG_NOSUB);
		char why[256];

		if (code) {
			regerror(code, &x->regexes[i], why, sizeof(why));
			exclude_close(x, NULL);
			return err_fail(err, -EINVAL, "--exclude-regex '%s': %s",
					o->exclude_regexes[i], why);
		}
		x->nregexes++;
	}
	*out = x;
	return 0;
}

bool exclude_path(struct exclude *x, const char *rel)
{
	size_t i;

	if (!x)
		return false;
	for (i = 0; i < x->npaths; i++)
		if (!strcmp(x->paths[i], rel)) {
			x->path_used[i] = true;
			return true;
		}
	for (i = 0; i < x->nregexes; i++)
		if (!regexec(&x->regexes[i], rel, 0, NULL, 0))
			return true;
	return false;
}

bool exclude_file(const struct exclude *x, const struct stat *st)
{
	return x && x->has_image && S_ISREG(st->st_mode) && st->st_dev == x->image_dev &&
	       st->st_ino == x->image_ino;
}

void exclude_close(struct exclude *x, const char *source)
{
	size_t i;

	if (!x)
		return;
	for (i = 0; source && i < x->npaths; i++)
		if (!x->path_used[i])
			warn_user("--exclude-path '%s' matched nothing in %s (paths are relative "
				  "to it, without a leading '/')", x->paths[i], source);
	for (i = 0; i < x->nregexes; i++)
		regfree(&x->regexes[i]);
	free(x->regexes);
	free(x->path_used);
	free(x);
}
