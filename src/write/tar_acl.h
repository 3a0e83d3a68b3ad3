/* A tar entry's POSIX ACLs as the xattrs that hold them on Linux. */
#ifndef EK_WRITE_TAR_ACL_H
#define EK_WRITE_TAR_ACL_H

struct archive_entry;
struct build;
struct tnode;

/* system.posix_acl_access / _default on n for e's ACLs, if it has any;
 * what names the entry in errors. */
int tar_acl_attach(struct build *b, struct tnode *n, struct archive_entry *e,
		   const char *what);

#endif
