/* Loading a library on first use; see dynlib.h. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util/dynlib.h"

int dynlib_load(const char *const *sonames, size_t nsonames, const char *package,
		const struct dynlib_symbol *symbols, size_t nsymbols, void *table,
		char *why, size_t why_size)
{
	void *lib = NULL;
	size_t i;

	for (i = 0; i < nsonames && !lib; i++) {
		lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
		if (!lib && !i)   /* the first one's reason is the one to tell */
			snprintf(why, why_size, "%s (Debian's %s) did not load: %s",
				 sonames[0], package, dlerror());
	}
	if (!lib)
		return -1;
	for (i = 0; i < nsymbols; i++) {
		void *sym = dlsym(lib, symbols[i].name);

		if (!sym) {
			snprintf(why, why_size, "%s lacks %s: it is too old", sonames[0],
				 symbols[i].name);
			return -1;
		}
		/* POSIX: a function's address round-trips through void *. */
		memcpy((char *)table + symbols[i].offset, &sym, sizeof(sym));
	}
	return 0;
}
