/*
 * libarchive, loaded when the first archive is read (libarchive.c): a
 * process that builds from a directory or reads images never maps it and
 * what it brings (libxml2 and ICU among them: 5 ms of every start).  Its
 * functions go by their names without "archive_", called only after
 * libarchive_load() succeeded.
 */
#ifndef EK_WRITE_LIBARCHIVE_H
#define EK_WRITE_LIBARCHIVE_H

#include <stdbool.h>
#include <stdint.h>

#include <archive.h>
#include <archive_entry.h>

#include "erofskit/erofskit.h"

struct libarchive_api {
	struct archive *(*read_new)(void);
	int (*read_free)(struct archive *a);
	int (*read_support_format_tar)(struct archive *a);
	int (*read_support_format_gnutar)(struct archive *a);
	int (*read_support_filter_all)(struct archive *a);
	int (*read_open2)(struct archive *a, void *client, archive_open_callback *open,
			  archive_read_callback *read, archive_skip_callback *skip,
			  archive_close_callback *close);
	int (*read_next_header2)(struct archive *a, struct archive_entry *entry);
	la_int64_t (*read_header_position)(struct archive *a);
	int (*read_data_block)(struct archive *a, const void **buf, size_t *size,
			       la_int64_t *offset);
	la_int64_t (*filter_bytes)(struct archive *a, int n);
	int (*filter_count)(struct archive *a);
	const char *(*filter_name)(struct archive *a, int n);
	const char *(*error_string)(struct archive *a);
	int (*errno_of)(struct archive *a);     /* archive_errno() */
	void (*set_error)(struct archive *a, int code, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));

	struct archive_entry *(*entry_new)(void);
	void (*entry_free)(struct archive_entry *e);
	struct archive_entry *(*entry_clear)(struct archive_entry *e);
	const char *(*entry_pathname)(struct archive_entry *e);
	const char *(*entry_hardlink)(struct archive_entry *e);
	const char *(*entry_symlink)(struct archive_entry *e);
	mode_t (*entry_filetype)(struct archive_entry *e);
	mode_t (*entry_perm)(struct archive_entry *e);
	la_int64_t (*entry_uid)(struct archive_entry *e);
	la_int64_t (*entry_gid)(struct archive_entry *e);
	la_int64_t (*entry_size)(struct archive_entry *e);
	int (*entry_size_is_set)(struct archive_entry *e);
	time_t (*entry_mtime)(struct archive_entry *e);
	long (*entry_mtime_nsec)(struct archive_entry *e);
	int (*entry_mtime_is_set)(struct archive_entry *e);
	dev_t (*entry_rdevmajor)(struct archive_entry *e);
	dev_t (*entry_rdevminor)(struct archive_entry *e);
	int (*entry_sparse_count)(struct archive_entry *e);
	int (*entry_xattr_reset)(struct archive_entry *e);
	int (*entry_xattr_next)(struct archive_entry *e, const char **name,
				const void **value, size_t *size);
	int (*entry_acl_reset)(struct archive_entry *e, int want_type);
	int (*entry_acl_next)(struct archive_entry *e, int want_type, int *type,
			      int *permset, int *tag, int *qual, const char **name);
};
extern struct libarchive_api libarchive;

/* Load it, once per process; -EIO with err saying what is missing. */
int libarchive_load(ek_error *err);

/* The entry's mtime as the archive means it (a pax time before the epoch
 * with a fraction, which libarchive reads a second late: libarchive.c);
 * false when it has none.  nsec is below 10^9. */
bool libarchive_entry_mtime(struct archive_entry *e, int64_t *sec, uint32_t *nsec);

#endif
