/*
 * Recreating a tree on disk, safely: every file is created relative to an
 * open directory descriptor with O_EXCL/O_NOFOLLOW (or the *at() calls'
 * no-follow flags), directories are reopened with RESOLVE_BENEATH and
 * RESOLVE_NO_SYMLINKS, so nothing is ever written outside the target and
 * no symlink is followed.
 */
#ifndef EK_CHECK_EXTRACT_H
#define EK_CHECK_EXTRACT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "erofskit/erofskit.h"

struct extractor {
	int rootfd;
	const char *dir;            /* its name, for messages (borrowed: the
	                               check's options outlive it) */
	bool overwrite;
	bool owner;
	bool xattrs;
	bool warned_xattr;
	/* What a new file gets without being asked, so that the calls that
	 * would set it again can be skipped (three of the seven per file):
	 * the fields below are reliable while creation_known holds; it is
	 * cleared for good when an existing directory that mkdir would not
	 * have made is reused. */
	atomic_bool creation_known;
	uid_t create_uid;
	gid_t create_gid;
	mode_t umask;
};

struct xattr_list {
	struct xattr_item {
		char *name;
		void *value;
		size_t len;
	} *items;
	size_t n;
};

int extract_init(struct extractor *x, const char *dir, ek_error *err);
void extract_fini(struct extractor *x);

/* Open a directory of the extracted tree ("" is the root). */
int extract_open_dir(struct extractor *x, const char *rel, int *fd,
		     ek_error *err);
int extract_mkdir(struct extractor *x, int dirfd, const char *name,
		  ek_error *err);
/* A regular file, created with its final permission bits when the umask
 * lets them through (extract_set_meta_fd then leaves the mode alone). */
int extract_create(struct extractor *x, int dirfd, const char *name,
		   uint32_t mode, int *fd, ek_error *err);
int extract_symlink(struct extractor *x, int dirfd, const char *name,
		    const char *target, ek_error *err);
int extract_special(struct extractor *x, int dirfd, const char *name,
		    const ek_stat *st, ek_error *err);
/* Hard link to the first extracted name (a path relative to the root). */
int extract_link(struct extractor *x, int dirfd, const char *name,
		 const char *first_rel, ek_error *err);

/* pwrite with holes for all-zero blocks; *data_end is raised to the end
 * of the last byte written (the file needs ftruncate only if short). */
int extract_write(int fd, const void *buf, size_t len, uint64_t off,
		  uint64_t *data_end, ek_error *err);

/* Owner, mode, xattrs, times of an entry created in dirfd. */
int extract_set_meta(struct extractor *x, int dirfd, const char *name,
		     const ek_stat *st, const struct xattr_list *xl,
		     ek_error *err);

/* The same, through a descriptor of the (regular) file itself. */
int extract_set_meta_fd(struct extractor *x, int fd, const char *name,
			const ek_stat *st, const struct xattr_list *xl,
			ek_error *err);

int xattr_list_collect(ek_inode *inode, struct xattr_list *xl, ek_error *err);
void xattr_list_free(struct xattr_list *xl);

#endif
