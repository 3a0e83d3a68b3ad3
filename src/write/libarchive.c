/* libarchive, loaded on first use; see libarchive.h. */
#include <stdio.h>
#include <string.h>

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

/* ------------------------------------------------ negative pax times */

/* A pax time is a decimal number of seconds, "-1.5" one and a half before
 * the epoch (POSIX.1-2008, pax, "mtime"; GNU tar and Python write and read
 * them so).  libarchive 3.6.2, and later sources too, read "-S.F" as -S
 * seconds plus F: a second late whenever F is not zero.
 * Which reading this libarchive has is asked of it once, with a pax
 * header of its own, so that one that reads them right is left alone. */
static bool pax_minus_plus_fraction;

struct memory_archive {
	const uint8_t *bytes;
	size_t size;
	bool read;
};

static la_ssize_t read_memory(struct archive *a, void *client, const void **buf)
{
	struct memory_archive *m = client;

	(void)a;
	if (m->read)
		return 0;
	m->read = true;
	*buf = m->bytes;
	return (la_ssize_t)m->size;
}

/* A ustar header: mode 0644, owner 0:0, time 0. */
static void ustar_header(uint8_t h[512], const char *name, char type, size_t size)
{
	unsigned int sum = 0;
	size_t i;

	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	snprintf((char *)h + 124, 12, "%011zo", size);
	memcpy(h + 136, "00000000000", 12);
	memset(h + 148, ' ', 8);        /* the checksum counts its field as spaces */
	h[156] = (uint8_t)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 7, "%06o", sum);
}

/* The setup: never fails the load (libarchive is then trusted). */
static int check_pax_times(char *why, size_t why_size)
{
	static const char record[] = "14 mtime=-1.5\n";
	uint8_t tar[5 * 512] = { 0 };   /* pax header, its record, the file, the end */
	struct memory_archive m = { tar, sizeof(tar), false };
	struct archive_entry *e = libarchive.entry_new();
	struct archive *a = libarchive.read_new();

	(void)why;
	(void)why_size;
	ustar_header(tar, "PaxHeaders/probe", 'x', sizeof(record) - 1);
	memcpy(tar + 512, record, sizeof(record) - 1);
	ustar_header(tar + 1024, "probe", '0', 0);
	if (a && e && libarchive.read_support_format_tar(a) == ARCHIVE_OK &&
	    libarchive.read_open2(a, &m, NULL, read_memory, NULL, NULL) == ARCHIVE_OK &&
	    libarchive.read_next_header2(a, e) == ARCHIVE_OK && libarchive.entry_mtime_is_set(e))
		pax_minus_plus_fraction = libarchive.entry_mtime(e) == -1 &&
					  libarchive.entry_mtime_nsec(e) == 500000000;
	if (a)
		libarchive.read_free(a);
	if (e)
		libarchive.entry_free(e);
	return 0;
}

bool libarchive_entry_mtime(struct archive_entry *e, int64_t *sec, uint32_t *nsec)
{
	int64_t s;
	long ns;

	if (!libarchive.entry_mtime_is_set(e))
		return false;
	s = libarchive.entry_mtime(e);
	ns = libarchive.entry_mtime_nsec(e);
	if (ns < 0 || ns > 999999999)
		ns = 0;
	/* Only a pax time gives a fraction; -0.F is lost (read as 0.F). */
	if (pax_minus_plus_fraction && s < 0 && ns > 0) {
		s -= 1;
		ns = 1000000000 - ns;
	}
	*sec = s;
	*nsec = (uint32_t)ns;
	return true;
}

static struct dynlib lib = DYNLIB_INIT("tar input needs libarchive", "libarchive13", sonames,
					 symbols, &libarchive, check_pax_times);

int libarchive_load(ek_error *err)
{
	return dynlib_use(&lib, err);
}
