/* libarchive, loaded on first use; see libarchive.h. */
#include "util/dynlib.h"
#include "write/libarchive.h"

struct libarchive_api libarchive;

#define SYMBOL(name) DYNLIB_SYMBOL(struct libarchive_api, "archive_", name)
static const struct dynlib_symbol symbols[] = {
	SYMBOL(read_new), SYMBOL(read_free), SYMBOL(read_support_format_tar),
	SYMBOL(read_support_format_gnutar), SYMBOL(read_support_filter_all),
	SYMBOL(read_open2), SYMBOL(read_next_header2), SYMBOL(read_header_position),
	SYMBOL(read_data_block), SYMBOL(filter_bytes), SYMBOL(filter_count),
	SYMBOL(filter_name), SYMBOL(error_string), SYMBOL(set_error),
	/* errno is a macro: the field has another name */
	{ "archive_errno", offsetof(struct libarchive_api, errno_of) },
	SYMBOL(entry_new), SYMBOL(entry_free), SYMBOL(entry_clear), SYMBOL(entry_pathname),
	SYMBOL(entry_hardlink), SYMBOL(entry_symlink), SYMBOL(entry_filetype),
	SYMBOL(entry_perm), SYMBOL(entry_uid), SYMBOL(entry_gid),
	SYMBOL(entry_size), SYMBOL(entry_size_is_set), SYMBOL(entry_mtime),
	SYMBOL(entry_mtime_nsec), SYMBOL(entry_mtime_is_set), SYMBOL(entry_rdevmajor),
	SYMBOL(entry_rdevminor), SYMBOL(entry_sparse_count), SYMBOL(entry_xattr_reset),
	SYMBOL(entry_xattr_next), SYMBOL(entry_acl_reset), SYMBOL(entry_acl_next),
};
#undef SYMBOL

static const char *const sonames[] = { "libarchive.so.13" };

static struct dynlib lib = DYNLIB_INIT("tar input needs libarchive", "libarchive13", sonames,
					 symbols, &libarchive, NULL);

int libarchive_load(ek_error *err)
{
	return dynlib_use(&lib, err);
}
