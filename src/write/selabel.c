/* SELinux labels from a file_contexts file; see selabel.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <selinux/label.h>

#include "util/dynlib.h"
#include "util/error.h"
#include "write/selabel.h"

struct selabel_api {
	struct selabel_handle *(*selabel_open)(unsigned int backend, const struct selinux_opt *opts,
					       unsigned int nopts);
	int (*selabel_lookup)(struct selabel_handle *h, char **con, const char *key, int type);
	void (*selabel_close)(struct selabel_handle *h);
	void (*freecon)(char *con);
};

static struct selabel_api api;

#define SYMBOL(name) DYNLIB_SYMBOL(struct selabel_api, "", name)
static const struct dynlib_symbol symbols[] = {
	SYMBOL(selabel_open), SYMBOL(selabel_lookup), SYMBOL(selabel_close), SYMBOL(freecon),
};
#undef SYMBOL

static const char *const sonames[] = { "libselinux.so.1" };
static struct dynlib lib = DYNLIB_INIT("--file-contexts needs libselinux", "libselinux1",
				       sonames, symbols, &api, NULL);

struct selabels {
	struct selabel_handle *handle;
};

int selabels_open(const char *path, struct selabels **out, ek_error *err)
{
	const struct selinux_opt opts[] = { { SELABEL_OPT_PATH, path } };
	struct selabels *s;
	int ret = dynlib_use(&lib, err);

	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return err_fail(err, -ENOMEM, "out of memory");
	errno = 0;
	s->handle = api.selabel_open(SELABEL_CTX_FILE, opts, 1);
	if (!s->handle) {
		int e = errno ? errno : EINVAL;

		free(s);
		return err_fail(err, -e, "%s: libselinux cannot read it as file_contexts: %s", path,
				strerror(e));
	}
	*out = s;
	return 0;
}

void selabels_close(struct selabels *s)
{
	if (!s)
		return;
	api.selabel_close(s->handle);
	free(s);
}

int selabels_lookup(struct selabels *s, const char *path, uint32_t mode, char **out,
		    ek_error *err)
{
	char *context = NULL;

	*out = NULL;
	if (api.selabel_lookup(s->handle, &context, path, (int)mode) < 0) {
		if (errno == ENOENT)
			return 0;       /* no rule: no label */
		return err_fail(err, -errno, "%s: SELinux label lookup failed: %s", path,
				strerror(errno));
	}
	/* A copy of our own, so that the caller frees it as it frees
	 * everything else (libselinux's wants freecon). */
	*out = strdup(context);
	api.freecon(context);
	return *out ? 0 : err_fail(err, -ENOMEM, "out of memory");
}
