/*
 * An archive entry's POSIX ACLs (pax SCHILY.acl.*, which libarchive parses
 * into its own ACL list rather than xattrs) as the xattrs a filesystem
 * keeps them in: system.posix_acl_access and system.posix_acl_default,
 * each a version 2 header and {le16 tag, le16 perm, le32 id} entries
 * sorted by tag, then id (what the kernel validates when it reads one).
 * With a mask, the mode's group bits are the mask's, as on any Linux
 * filesystem (libarchive gives the owning group's there).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "format/ondisk.h"
#include "util/error.h"
#include "write/internal.h"
#include "write/libarchive.h"
#include "write/tar_acl.h"

#define ACL_XATTR_VERSION 2u
#define ACL_NO_ID 0xFFFFFFFFu

/* libarchive's tags, and POSIX's for them (their order is the sort). */
static const struct {
	int archive_tag;
	uint16_t posix_tag;
	bool has_id;
} tags[] = {
	{ ARCHIVE_ENTRY_ACL_USER_OBJ, 0x01, false },
	{ ARCHIVE_ENTRY_ACL_USER, 0x02, true },
	{ ARCHIVE_ENTRY_ACL_GROUP_OBJ, 0x04, false },
	{ ARCHIVE_ENTRY_ACL_GROUP, 0x08, true },
	{ ARCHIVE_ENTRY_ACL_MASK, 0x10, false },
	{ ARCHIVE_ENTRY_ACL_OTHER, 0x20, false },
};

/* The number this system has for an ACL entry's user or group name, or -1.
 * GNU tar writes "user:NAME:rw-" without the number when the archiving
 * system had a name for it; tar -x then takes the extracting system's
 * number for NAME, and so does this. */
static int64_t id_of_name(bool is_user, const char *name)
{
	size_t size = 4096;
	int64_t id = -1;

	while (name && *name && size <= (1u << 20)) {
		char *buf = malloc(size);
		struct passwd pw, *pwp = NULL;
		struct group gr, *grp = NULL;
		int err;

		if (!buf)
			break;
		err = is_user ? getpwnam_r(name, &pw, buf, size, &pwp)
			      : getgrnam_r(name, &gr, buf, size, &grp);
		if (!err && pwp)
			id = pwp->pw_uid;
		else if (!err && grp)
			id = grp->gr_gid;
		free(buf);
		if (err != ERANGE)
			break;
		size *= 4;
	}
	return id;
}

struct acl_item {
	uint16_t tag, perm;
	uint32_t id;
};

static int cmp_item(const void *a, const void *b)
{
	const struct acl_item *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* One ACL type of the entry as an xattr on n (none when it has none). */
static int attach_type(struct build *b, struct tnode *n, struct archive_entry *e,
		       int type, const char *xattr, const char *what)
{
	int count = libarchive.entry_acl_reset(e, type), got_type, perm, tag, id, ret;
	struct acl_item *items;
	const char *name;
	uint8_t *value;
	size_t k = 0, i;
	int64_t number;

	if (count <= 0)
		return 0;
	items = calloc((size_t)count, sizeof(*items));
	if (!items)
		return err_fail(b->err, -ENOMEM, "out of memory");
	while ((size_t)count > k &&
	       libarchive.entry_acl_next(e, type, &got_type, &perm, &tag, &id, &name) == ARCHIVE_OK) {
		for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
			if (tags[i].archive_tag == tag)
				break;
		if (i == sizeof(tags) / sizeof(tags[0])) {
			free(items);
			return err_fail(b->err, -EUCLEAN,
					"%s: an ACL entry of a kind POSIX ACLs do not have", what);
		}
		number = id >= 0 || !tags[i].has_id
			 ? id : id_of_name(tags[i].archive_tag == ARCHIVE_ENTRY_ACL_USER, name);
		if (tags[i].has_id && number < 0) {
			free(items);
			return err_fail(b->err, -EUCLEAN,
					"%s: its ACL names %s '%s', who has no number in the archive or on this system",
					what, tags[i].archive_tag == ARCHIVE_ENTRY_ACL_USER ? "user" : "group",
					name ? name : "");
		}
		items[k].tag = tags[i].posix_tag;
		items[k].perm = (uint16_t)(perm & 7);
		items[k].id = tags[i].has_id ? (uint32_t)number : ACL_NO_ID;
		k++;
	}
	qsort(items, k, sizeof(*items), cmp_item);
	for (i = 0; i < k && type == ARCHIVE_ENTRY_ACL_TYPE_ACCESS; i++)
		if (items[i].tag == 0x10)
			n->mode = (n->mode & ~070u) | (uint32_t)items[i].perm << 3;
	value = malloc(4 + 8 * k);
	if (!value) {
		free(items);
		return err_fail(b->err, -ENOMEM, "out of memory");
	}
	put_le32(value, ACL_XATTR_VERSION);
	for (i = 0; i < k; i++) {
		put_le16(value + 4 + 8 * i, items[i].tag);
		put_le16(value + 6 + 8 * i, items[i].perm);
		put_le32(value + 8 + 8 * i, items[i].id);
	}
	ret = xattr_attach(b, n, xattr, value, 4 + 8 * k, what);
	free(value);
	free(items);
	return ret;
}

int tar_acl_attach(struct build *b, struct tnode *n, struct archive_entry *e,
		   const char *what)
{
	int ret = attach_type(b, n, e, ARCHIVE_ENTRY_ACL_TYPE_ACCESS,
			      "system.posix_acl_access", what);

	if (!ret)
		ret = attach_type(b, n, e, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT,
				  "system.posix_acl_default", what);
	return ret;
}
