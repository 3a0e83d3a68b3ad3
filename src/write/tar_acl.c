/*
 * An archive entry's POSIX ACLs as the xattrs a filesystem keeps them in:
 * system.posix_acl_access and system.posix_acl_default, each a version 2
 * header and {le16 tag, le16 perm, le32 id} entries sorted by tag, then id
 * (what the kernel validates when it reads one).  They come two ways:
 * - pax SCHILY.acl.* text, which libarchive parses into its own ACL list
 *   (GNU tar --acls, bsdtar);
 * - those xattrs' bytes in SCHILY.xattr.system.posix_acl_* (GNU tar
 *   --xattrs-include='*' without --acls, and tools that archive every
 *   xattr a file has).
 * Where both are there the records win, as GNU tar -x --acls takes only
 * those (without --acls, --xattrs sets the bytes).  Either
 * way the list is sorted and checked for the shape the kernel takes, and
 * with a mask the mode's group bits are the mask's, as on any Linux
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
#define ACL_HEADER_SIZE 4u
#define ACL_ENTRY_SIZE 8u
#define ACL_NO_ID 0xFFFFFFFFu

enum { ACL_USER_OBJ = 0x01, ACL_USER = 0x02, ACL_GROUP_OBJ = 0x04, ACL_GROUP = 0x08,
       ACL_MASK = 0x10, ACL_OTHER = 0x20 };

/* libarchive's tags, and POSIX's for them (their order is the sort). */
static const struct {
	int archive_tag;
	uint16_t posix_tag;
	bool has_id;
} tags[] = {
	{ ARCHIVE_ENTRY_ACL_USER_OBJ, ACL_USER_OBJ, false },
	{ ARCHIVE_ENTRY_ACL_USER, ACL_USER, true },
	{ ARCHIVE_ENTRY_ACL_GROUP_OBJ, ACL_GROUP_OBJ, false },
	{ ARCHIVE_ENTRY_ACL_GROUP, ACL_GROUP, true },
	{ ARCHIVE_ENTRY_ACL_MASK, ACL_MASK, false },
	{ ARCHIVE_ENTRY_ACL_OTHER, ACL_OTHER, false },
};
#define NTAGS (sizeof(tags) / sizeof(tags[0]))

/* The two ACLs a file may have: libarchive's type, and the xattr. */
static const struct {
	int archive_type;
	const char *xattr;
} types[] = {
	{ ARCHIVE_ENTRY_ACL_TYPE_ACCESS, "system.posix_acl_access" },
	{ ARCHIVE_ENTRY_ACL_TYPE_DEFAULT, "system.posix_acl_default" },
};

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

/* libarchive's list of one type into items[*count] (room for count). */
static int items_from_archive(struct build *b, struct archive_entry *e, int type,
			      struct acl_item *items, size_t *count, const char *what)
{
	int got_type, perm, tag, id;
	const char *name;
	size_t k = 0, i;
	int64_t number;

	while (k < *count &&
	       libarchive.entry_acl_next(e, type, &got_type, &perm, &tag, &id, &name) == ARCHIVE_OK) {
		for (i = 0; i < NTAGS && tags[i].archive_tag != tag; i++)
			;
		if (i == NTAGS)
			return err_fail(b->err, -EUCLEAN,
					"%s: an ACL entry of a kind POSIX ACLs do not have", what);
		number = id >= 0 || !tags[i].has_id
			 ? id : id_of_name(tags[i].archive_tag == ARCHIVE_ENTRY_ACL_USER, name);
		if (tags[i].has_id && number < 0)
			return err_fail(b->err, -EUCLEAN,
					"%s: its ACL names %s '%s', who has no number in the archive or on this system",
					what, tags[i].archive_tag == ARCHIVE_ENTRY_ACL_USER ? "user" : "group",
					name ? name : "");
		items[k].tag = tags[i].posix_tag;
		items[k].perm = (uint16_t)(perm & 7);
		items[k].id = tags[i].has_id ? (uint32_t)number : ACL_NO_ID;
		k++;
	}
	*count = k;
	return 0;
}

/* An xattr's bytes into items (room for (size - 4) / 8). */
static int items_from_xattr(struct build *b, const uint8_t *value, size_t size,
			    struct acl_item *items, size_t *count, const char *xattr,
			    const char *what)
{
	size_t k, i;

	if (size < ACL_HEADER_SIZE || (size - ACL_HEADER_SIZE) % ACL_ENTRY_SIZE ||
	    get_le32(value) != ACL_XATTR_VERSION)
		return err_fail(b->err, -EUCLEAN, "%s: xattr %s of %zu bytes is not a POSIX ACL",
				what, xattr, size);
	k = (size - ACL_HEADER_SIZE) / ACL_ENTRY_SIZE;
	for (i = 0; i < k; i++) {
		const uint8_t *p = value + ACL_HEADER_SIZE + ACL_ENTRY_SIZE * i;
		uint16_t tag = get_le16(p), perm = get_le16(p + 2);
		size_t t;

		for (t = 0; t < NTAGS && tags[t].posix_tag != tag; t++)
			;
		if (t == NTAGS || perm > 7)
			return err_fail(b->err, -EUCLEAN,
					"%s: xattr %s holds an entry (tag %#x, permissions %#x) POSIX ACLs do not have",
					what, xattr, tag, perm);
		items[i].tag = tag;
		items[i].perm = perm;
		items[i].id = tags[t].has_id ? get_le32(p + 4) : ACL_NO_ID;
	}
	*count = k;
	return 0;
}

/* Sorted items as the kernel takes them: one owner, owning group and
 * other entry; a mask, and one at most, where any user or group is named;
 * no user or group named twice, nor as -1 (no one, to the kernel). */
static bool shaped(const struct acl_item *items, size_t count)
{
	size_t seen[ACL_OTHER + 1] = { 0 }, i;

	for (i = 0; i < count; i++) {
		if (i && !cmp_item(&items[i - 1], &items[i]))
			return false;
		if ((items[i].tag == ACL_USER || items[i].tag == ACL_GROUP) &&
		    items[i].id == ACL_NO_ID)
			return false;
		seen[items[i].tag]++;
	}
	return seen[ACL_USER_OBJ] == 1 && seen[ACL_GROUP_OBJ] == 1 && seen[ACL_OTHER] == 1 &&
	       seen[ACL_MASK] == (seen[ACL_USER] || seen[ACL_GROUP] ? 1u : 0u);
}

/* items (sorted here) as the xattr on n. */
static int attach_items(struct build *b, struct tnode *n, struct acl_item *items, size_t count,
			bool access, const char *xattr, const char *what)
{
	size_t size = ACL_HEADER_SIZE + ACL_ENTRY_SIZE * count, i;
	uint8_t *value;
	int ret;

	qsort(items, count, sizeof(*items), cmp_item);
	if (!shaped(items, count))
		return err_fail(b->err, -EUCLEAN,
				"%s: its %s ACL lacks an owner, group, other or mask entry, or names one twice or as -1",
				what, access ? "access" : "default");
	for (i = 0; i < count && access; i++)
		if (items[i].tag == ACL_MASK)
			n->mode = (n->mode & ~070u) | (uint32_t)items[i].perm << 3;
	value = malloc(size);
	if (!value)
		return err_fail(b->err, -ENOMEM, "out of memory");
	put_le32(value, ACL_XATTR_VERSION);
	for (i = 0; i < count; i++) {
		uint8_t *p = value + ACL_HEADER_SIZE + ACL_ENTRY_SIZE * i;

		put_le16(p, items[i].tag);
		put_le16(p + 2, items[i].perm);
		put_le32(p + 4, items[i].id);
	}
	ret = xattr_attach(b, n, xattr, value, size, what);
	free(value);
	return ret;
}

int tar_acl_attach(struct build *b, struct tnode *n, struct archive_entry *e,
		   const struct tar_acl_xattrs *raw, const char *what)
{
	size_t t;

	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		int listed = libarchive.entry_acl_reset(e, types[t].archive_type), ret;
		const uint8_t *value = raw ? raw->value[t] : NULL;
		struct acl_item *items;
		size_t count;

		if (listed > 0)
			count = (size_t)listed;
		else if (value)
			count = raw->size[t] / ACL_ENTRY_SIZE;
		else
			continue;
		items = calloc(count ? count : 1, sizeof(*items));
		if (!items)
			return err_fail(b->err, -ENOMEM, "out of memory");
		ret = listed > 0
		      ? items_from_archive(b, e, types[t].archive_type, items, &count, what)
		      : items_from_xattr(b, value, raw->size[t], items, &count, types[t].xattr, what);
		/* A header alone is no ACL, as the kernel reads one (and as
		 * tar -x sets it: the file keeps none). */
		if (!ret && count)
			ret = attach_items(b, n, items, count, t == 0, types[t].xattr, what);
		free(items);
		if (ret)
			return ret;
	}
	return 0;
}

int tar_acl_xattr_slot(const char *name)
{
	size_t t;

	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		if (!strcmp(name, types[t].xattr))
			return (int)t;
	return -1;
}
