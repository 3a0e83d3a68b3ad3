/* libarchive, loaded on first use; see libarchive.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "util/dynlib.h"
#include "util/error.h"
#include "write/libarchive.h"

struct libarchive_api libarchive;

#define SYMBOL(name) DYNLIB_SYMBOL(struct libarchive_api, "archive_", name)
static const struct dynlib_symbol symbols[] = {
	SYMBOL(read_new), SYMBOL(read_free), SYMBOL(read_support_format_tar),
	SYMBOL(read_support_format_gnutar), SYMBOL(read_support_filter_all),
	SYMBOL(read_open), SYMBOL(read_open_filename), SYMBOL(read_next_header),
	SYMBOL(read_header_position), SYMBOL(read_data_block), SYMBOL(filter_count),
	SYMBOL(filter_name), SYMBOL(error_string), SYMBOL(set_error),
	SYMBOL(entry_pathname), SYMBOL(entry_hardlink), SYMBOL(entry_symlink),
	SYMBOL(entry_filetype), SYMBOL(entry_perm), SYMBOL(entry_uid), SYMBOL(entry_gid),
	SYMBOL(entry_size), SYMBOL(entry_size_is_set), SYMBOL(entry_mtime),
	SYMBOL(entry_mtime_nsec), SYMBOL(entry_mtime_is_set), SYMBOL(entry_rdevmajor),
	SYMBOL(entry_rdevminor), SYMBOL(entry_sparse_count), SYMBOL(entry_xattr_reset),
	SYMBOL(entry_xattr_next), SYMBOL(entry_acl_reset), SYMBOL(entry_acl_next),
};
#undef SYMBOL

static const char *const sonames[] = { "libarchive.so.13" };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

static void load_once(void)
{
	char why[400];

	if (dynlib_load(sonames, sizeof(sonames) / sizeof(sonames[0]), "libarchive13", symbols,
			sizeof(symbols) / sizeof(symbols[0]), &libarchive, why, sizeof(why)))
		snprintf(load_error, sizeof(load_error), "tar input needs libarchive: %s", why);
}

int libarchive_load(ek_error *err)
{
	pthread_once(&once, load_once);
	if (load_error[0])
		return err_fail(err, -EIO, "%s", load_error);
	return 0;
}
