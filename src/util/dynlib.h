/*
 * Libraries loaded when first needed (dynlib.c): the ones only some
 * commands use (libcurl for URLs, libarchive for tar input) cost every
 * start of erofskit their mapping and that of the libraries they bring,
 * 14 and 5 ms of a 23 ms `erofskit --version`.  A table of function
 * pointers is filled from the first of a few sonames that loads.
 */
#ifndef EK_UTIL_DYNLIB_H
#define EK_UTIL_DYNLIB_H

#include <stddef.h>

struct dynlib_symbol {
	const char *name;
	size_t offset;          /* of its pointer in the table */
};

/* The table entry of a member `name` of a table struct `type` whose
 * symbol is prefix##name. */
#define DYNLIB_SYMBOL(type, prefix, name) { prefix #name, offsetof(type, name) }

/*
 * Load the first of sonames[0..nsonames) that loads and fill table from
 * it; 0, or -1 with why (what a user needs: the library's name, the
 * package `package` that has it, and why it did not load) filled.  The
 * library stays loaded for the life of the process.
 */
int dynlib_load(const char *const *sonames, size_t nsonames, const char *package,
		const struct dynlib_symbol *symbols, size_t nsymbols, void *table,
		char *why, size_t why_size);

#endif
