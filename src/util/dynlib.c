/* Loading a library on first use; see dynlib.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/dynlib.h"
#include "util/error.h"

/* 0, or -1 with why filled. */
static int load(const struct dynlib *lib, char *why, size_t why_size)
{
	void *handle = NULL;
	size_t i;

	for (i = 0; i < lib->nsonames && !handle; i++) {
		handle = dlopen(lib->sonames[i], RTLD_NOW | RTLD_LOCAL);
		if (!handle && !i)   /* the first one's reason is the one to tell */
			snprintf(why, why_size, "%s (Debian's %s) did not load: %s",
				 lib->sonames[0], lib->package, dlerror());
	}
	if (!handle)
		return -1;
	for (i = 0; i < lib->nsymbols; i++) {
		void *sym = dlsym(handle, lib->symbols[i].name);

		if (!sym) {
			snprintf(why, why_size, "%s lacks %s: it is too old", lib->sonames[0],
				 lib->symbols[i].name);
			return -1;
		}
		/* POSIX: a function's address round-trips through void *. */
		memcpy((char *)lib->table + lib->symbols[i].offset, &sym, sizeof(sym));
	}
	return lib->setup ? lib->setup(why, why_size) : 0;
}

int dynlib_use(struct dynlib *lib, ek_error *err)
{
	int state;

	pthread_mutex_lock(&lib->lock);
	if (!lib->state) {
		char why[400] = "";

		lib->state = load(lib, why, sizeof(why)) ? -1 : 1;
		if (lib->state < 0)
			snprintf(lib->error, sizeof(lib->error), "%s: %s", lib->purpose, why);
	}
	state = lib->state;
	pthread_mutex_unlock(&lib->lock);
	return state > 0 ? 0 : err_fail(err, -EIO, "%s", lib->error);
}
