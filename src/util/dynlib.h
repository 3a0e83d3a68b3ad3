/*
 * Libraries loaded when first needed (dynlib.c): the ones only some
 * commands use (libcurl for URLs, libarchive for tar input) cost every
 * start of erofskit their mapping and that of the libraries they bring,
 * 14 and 5 ms of a 23 ms `erofskit --version`.  A table of function
 * pointers is filled from the first of a few sonames that loads.
 */
#ifndef EK_UTIL_DYNLIB_H
#define EK_UTIL_DYNLIB_H

#include <pthread.h>
#include <stddef.h>

#include "erofskit/erofskit.h"

struct dynlib_symbol {
	const char *name;
	size_t offset;          /* of its pointer in the table */
};

/* The table entry of a member `name` of a table struct `type` whose
 * symbol is prefix##name. */
#define DYNLIB_SYMBOL(type, prefix, name) { prefix #name, offsetof(type, name) }

/* One library: what to load, where its functions go, and (filled by
 * dynlib_use) how loading went.  Define it statically with DYNLIB_INIT. */
struct dynlib {
	const char *purpose;              /* "tar input needs libarchive" */
	const char *package;              /* Debian's package that has it */
	const char *const *sonames;       /* tried in order */
	size_t nsonames;
	const struct dynlib_symbol *symbols;
	size_t nsymbols;
	void *table;
	/* Optional: once loaded, set the library up (libcurl's global
	 * init); 0, or -1 with why filled. */
	int (*setup)(char *why, size_t size);

	pthread_mutex_t lock;
	int state;                        /* 0 not tried, 1 usable, -1 failed */
	char error[512];
};

#define DYNLIB_INIT(purpose_, package_, sonames_, symbols_, table_, setup_)       \
	{ .purpose = (purpose_), .package = (package_),                           \
	  .sonames = (sonames_), .nsonames = sizeof(sonames_) / sizeof((sonames_)[0]), \
	  .symbols = (symbols_), .nsymbols = sizeof(symbols_) / sizeof((symbols_)[0]), \
	  .table = (table_), .setup = (setup_), .lock = PTHREAD_MUTEX_INITIALIZER }

/*
 * Load lib on its first call (by any thread) and say how that went on
 * every call: 0, or -EIO with err saying what a user needs (the purpose,
 * the library and its package, why it did not load).  A library loaded
 * stays for the life of the process.
 */
int dynlib_use(struct dynlib *lib, ek_error *err);

#endif
