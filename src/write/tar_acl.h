/* A tar entry's POSIX ACLs as the xattrs that hold them on Linux. */
#ifndef EK_WRITE_TAR_ACL_H
#define EK_WRITE_TAR_ACL_H

#include <stddef.h>

struct archive_entry;
struct build;
struct tnode;

/* The entry's system.posix_acl_access and _default xattrs as the archive
 * holds them (in that order; NULL: none), read with its other xattrs. */
struct tar_acl_xattrs {
	const void *value[2];
	size_t size[2];
};

/* The slot in struct tar_acl_xattrs of the xattr name, or -1. */
int tar_acl_xattr_slot(const char *name);

/* system.posix_acl_access / _default on n for e's ACLs, from libarchive's
 * list or else from raw (may be NULL); what names the entry in errors. */
int tar_acl_attach(struct build *b, struct tnode *n, struct archive_entry *e,
		   const struct tar_acl_xattrs *raw, const char *what);

#endif
