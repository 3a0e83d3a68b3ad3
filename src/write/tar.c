/*
 * Tar input: ek_build_tar() reads an archive with libarchive (every tar
 * dialect it knows, compression detected by content) as a stream, one
 * entry at a time, and writes each file's data as it arrives, so the
 * archive is never held whole in memory or on disk.
 *
 * A file's data goes through the spool, an unnamed file beside the image,
 * because the writers read their sources at offsets (and, compressing,
 * some time after queueing them); once a file is in the image its part of
 * the spool is punched out, so the spool holds only the files in flight.
 *
 * Paths are resolved in the tree being built, never on a disk: ".." and
 * absolute names are refused, an entry under a non-directory (a symlink
 * planted by an earlier entry) is refused, a later entry of the same path
 * replaces the earlier one as `tar -x` does (a directory keeps its
 * children and takes the new metadata).  What decides a file's data layout
 * is fixed when the file arrives: its xattrs are stored inline (no shared
 * xattrs: later users are unknown), and the epoch is -T's or else the
 * first entry's mtime.  The inodes are numbered in archive order.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/ondisk.h"
#include "util/cancel.h"
#include "util/error.h"
#include "util/fdio.h"
#include "util/path.h"
#include "write/compress.h"
#include "write/dedupe.h"
#include "write/hints.h"
#include "write/internal.h"
#include "write/libarchive.h"
#include "write/source.h"
#include "write/tar.h"
#include "write/tar_acl.h"
#include "write/tar_ahead.h"
#include "write/writer.h"

#define WHITEOUT_PREFIX ".wh."
#define OPAQUE_NAME ".wh..wh..opq"

/* One name in a directory while the tree grows (directories get their
 * sorted children arrays at the end). */
struct tar_name {
	struct tnode *parent, *child;
	char *name;                 /* NULL once removed */
	uint32_t hash;
	uint32_t layer;             /* the layer that last named it */
	/* The names in one directory, a list through the table (index + 1;
	 * 0 ends it), so that removing a directory costs its own tree, not
	 * a pass over every name of the archive. */
	size_t prev_sibling, next_sibling;
	size_t first_child;         /* a directory's: its names */
};

/* Flattening: a .wh.NAME seen in the current layer, applied at its end. */
struct whiteout {
	struct tnode *dir;
	char *name;
};

/* A hard link whose target had not arrived yet. */
struct deferred_link {
	char *path, *target;
	uint64_t entry_no;
};

struct tar_reader {
	struct build *b;
	struct archive *a;
	const char *source;         /* for messages */
	uint64_t entry_no;          /* 1-based position of the entry */
	const char *entry_path;     /* its name as the archive spells it */
	char *image_path;           /* its path in the image ("/a/b") when rules
	                               look at it (hints, file contexts) */
	size_t image_path_cap;
	/* names: open addressing over v[]; slot 0 empty, 1 removed, else
	 * index + 2 */
	struct tar_name *v;
	size_t n, cap;
	size_t *slots;
	size_t nslots, used_slots;
	size_t root_children;       /* the root's names (see tar_name) */
	struct deferred_link *links;
	size_t nlinks, cap_links;
	struct tnode **opaque;      /* directories a .wh..wh..opq marks */
	size_t nopaque, cap_opaque;
	/* Flattening layers (OCI): whiteouts delete what the layers below
	 * hold instead of being recorded for overlayfs. */
	bool flatten;
	uint32_t layer;             /* 0-based, of the archive being read */
	struct whiteout *whiteouts; /* the current layer's */
	size_t nwhiteouts, cap_whiteouts;
	struct tarstream *stream;   /* the archive's bytes */
	uint64_t input_base;        /* for progress: archives read before it */
	struct tar_ahead *ahead;    /* its headers */
	const char *compressed_as;  /* its compression's name, or NULL */
	/* Flattening several layers: a first pass (the survey) reads every
	 * header and no data to learn which entries' files and symlinks are
	 * still there at the end; the second writes the data of those only
	 * (sorted keys, layer << 40 | entry number; NULL: all). */
	bool survey;
	uint64_t *live;
	size_t nlive;
	uint64_t spool_end;
	bool epoch_set;
	struct writer *copy;         /* tar_copy's file, until committed */
	uint64_t copy_size;
	uint64_t data_start;         /* index mode: where the entry's data starts */
	struct tnode *unplaced;      /* index mode: the last file, whose data
	                                must end before the next header */
};

/* ------------------------------------------------------------ messages */

static int entry_fail(struct tar_reader *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "layer.tar: entry 12 'usr/bin/x'" (without the name when its header
 * did not read): how every message about an entry begins. */
static void entry_label(const struct tar_reader *r, char *out, size_t size)
{
	if (r->entry_path)
		snprintf(out, size, "%s: entry %llu '%s'", r->source,
			 (unsigned long long)r->entry_no, r->entry_path);
	else
		snprintf(out, size, "%s: entry %llu", r->source,
			 (unsigned long long)r->entry_no);
}

/* "layer.tar: entry 12 'usr/bin/x': ..." */
static int entry_fail(struct tar_reader *r, int code, const char *fmt, ...)
{
	char label[EK_ERROR_MESSAGE_MAX], what[EK_ERROR_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	entry_label(r, label, sizeof(label));
	return err_fail(r->b->err, code, "%s: %s", label, what);
}

/* why: libarchive's message (what error_string() said). */
static int archive_fail_why(struct tar_reader *r, const char *doing, const char *why)
{
	if (r->entry_no)
		return entry_fail(r, -EUCLEAN, "%s: %s", doing, why ? why : "unknown error");
	return err_fail(r->b->err, -EUCLEAN, "%s: %s: %s", r->source, doing,
			why ? why : "unknown error");
}

static int archive_fail(struct tar_reader *r, const char *doing)
{
	return archive_fail_why(r, doing, libarchive.error_string(r->a));
}

/* Room for one more element in a doubling array of *cap (n used): the
 * array, moved or not; NULL (and the error set) when memory ran out. */
static void *grow(struct tar_reader *r, void *v, size_t *cap, size_t n, size_t elem)
{
	size_t want = *cap ? *cap * 2 : 16;
	void *grown;

	if (n < *cap)
		return v;
	grown = realloc(v, want * elem);
	if (!grown) {
		err_fail(r->b->err, -ENOMEM, "out of memory");
		return NULL;
	}
	*cap = want;
	return grown;
}

/* ------------------------------------------------------------ names */

static uint32_t name_hash(const struct tnode *parent, const char *name, size_t len)
{
	uint64_t h = (uint64_t)(uintptr_t)parent * 0x9E3779B97F4A7C15ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 0x100000001B3ull;
	return (uint32_t)(h ^ (h >> 32));
}

static size_t *find_slot(struct tar_reader *r, const struct tnode *parent,
			 const char *name, size_t len, uint32_t hash)
{
	size_t i = hash & (r->nslots - 1);

	for (;; i = (i + 1) & (r->nslots - 1)) {
		size_t s = r->slots[i];
		const struct tar_name *e;

		if (s == 0)
			return NULL;
		if (s == 1)
			continue;
		e = &r->v[s - 2];
		if (e->hash == hash && e->parent == parent && !strncmp(e->name, name, len) &&
		    e->name[len] == '\0')
			return &r->slots[i];
	}
}

static struct tar_name *name_find(struct tar_reader *r, const struct tnode *parent,
				  const char *name, size_t len)
{
	size_t *slot;

	if (!r->nslots)
		return NULL;
	slot = find_slot(r, parent, name, len, name_hash(parent, name, len));
	return slot ? &r->v[*slot - 2] : NULL;
}

static void place(struct tar_reader *r, size_t index)
{
	size_t i = r->v[index].hash & (r->nslots - 1);

	while (r->slots[i] > 1)
		i = (i + 1) & (r->nslots - 1);
	r->slots[i] = index + 2;
}

static int grow_slots(struct tar_reader *r)
{
	size_t want = r->nslots ? r->nslots : 1024, i;

	while ((r->n + 1) * 2 > want)
		want *= 2;
	free(r->slots);
	r->slots = calloc(want, sizeof(*r->slots));
	if (!r->slots)
		return -ENOMEM;
	r->nslots = want;
	r->used_slots = 0;
	for (i = 0; i < r->n; i++) {
		if (r->v[i].name) {
			place(r, i);
			r->used_slots++;
		}
	}
	return 0;
}

/* Where the list of dir's names starts. */
static size_t *children_of(struct tar_reader *r, const struct tnode *dir)
{
	return dir->tar_name ? &r->v[dir->tar_name - 1].first_child : &r->root_children;
}

static int name_add(struct tar_reader *r, struct tnode *parent, const char *name,
		    size_t len, struct tnode *child)
{
	struct tar_name *e;
	void *grown;

	grown = grow(r, r->v, &r->cap, r->n, sizeof(*r->v));
	if (!grown)
		return -ENOMEM;
	r->v = grown;
	if ((r->used_slots + 1) * 2 > r->nslots && grow_slots(r))
		return err_fail(r->b->err, -ENOMEM, "out of memory");
	e = &r->v[r->n];
	e->name = strndup(name, len);
	if (!e->name)
		return err_fail(r->b->err, -ENOMEM, "out of memory");
	e->parent = parent;
	e->child = child;
	e->hash = name_hash(parent, name, len);
	e->layer = r->layer;
	e->first_child = 0;
	e->prev_sibling = 0;
	e->next_sibling = *children_of(r, parent);
	if (e->next_sibling)
		r->v[e->next_sibling - 1].prev_sibling = r->n + 1;
	*children_of(r, parent) = r->n + 1;
	if (S_ISDIR(child->mode))
		child->tar_name = r->n + 1;
	place(r, r->n++);
	r->used_slots++;
	child->nlink++;
	return 0;
}

/* Unlink one name; true when its inode has no name left. */
static bool name_unlink(struct tar_reader *r, struct tar_name *e)
{
	size_t *slot = find_slot(r, e->parent, e->name, strlen(e->name), e->hash);

	*slot = 1;
	free(e->name);
	e->name = NULL;
	if (e->prev_sibling)
		r->v[e->prev_sibling - 1].next_sibling = e->next_sibling;
	else
		*children_of(r, e->parent) = e->next_sibling;
	if (e->next_sibling)
		r->v[e->next_sibling - 1].prev_sibling = e->prev_sibling;
	return --e->child->nlink == 0;
}

/* Unlink one name; an inode left without names (a directory with all of
 * its tree) is dropped at the end, its data written in vain. */
static void name_remove(struct tar_reader *r, struct tar_name *e)
{
	struct tnode *child = e->child;
	size_t i, next;

	if (!name_unlink(r, e) || !S_ISDIR(child->mode))
		return;
	for (i = e->first_child; i; i = next) {
		next = r->v[i - 1].next_sibling;
		name_remove(r, &r->v[i - 1]);
	}
}

/* ------------------------------------------------------------ paths */

/*
 * The archive's name as components: "./a//b/" is a/b.  Absolute names and
 * ".." are refused; an empty result is the root.  *out is a copy whose
 * components are separated by NULs, *count of them.
 */
static int split_path(struct tar_reader *r, const char *raw, char **out, size_t *count)
{
	char *copy, *w, *p;
	size_t n = 0;

	if (raw[0] == '/')
		return entry_fail(r, -EUCLEAN, "absolute name: the archive must hold relative paths");
	copy = malloc(strlen(raw) + 1);
	if (!copy)
		return err_fail(r->b->err, -ENOMEM, "out of memory");
	w = copy;
	for (p = (char *)raw; *p;) {
		size_t len = strcspn(p, "/");

		if (len == 2 && p[0] == '.' && p[1] == '.') {
			free(copy);
			return entry_fail(r, -EUCLEAN, "'..' in the name: it would leave the tree");
		}
		if (len > EROFS_NAME_MAX) {
			free(copy);
			return entry_fail(r, -EUCLEAN, "a name of %zu bytes (EROFS holds %u)",
					  len, EROFS_NAME_MAX);
		}
		if (len && !(len == 1 && p[0] == '.')) {
			memcpy(w, p, len);
			w[len] = '\0';
			w += len + 1;
			n++;
		}
		p += len;
		while (*p == '/')
			p++;
	}
	*out = copy;
	*count = n;
	return 0;
}

static const char *type_name(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "regular file";
	case S_IFLNK: return "symlink";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	default: return "directory";
	}
}

static struct tnode *new_node(struct tar_reader *r, uint32_t mode)
{
	struct tnode *n = tree_new_inode(&r->b->tree);

	if (n)
		n->mode = mode;
	return n;
}

/* A directory the archive names only through its children. */
static struct tnode *implicit_dir(struct tar_reader *r, struct tnode *parent)
{
	struct tnode *d = new_node(r, S_IFDIR | 0755);

	if (d) {
		/* 0:0 fits whatever the options (they are checked). */
		(void)build_set_owner_time(r->b, d, 0, 0, r->b->epoch, r->b->fixed_nsec);
		d->parent = parent;
	}
	return d;
}

/* How walk_to_parent treats what is not there as a directory. */
enum walk {
	WALK_CREATE = 1,        /* make missing directories (else: NULL) */
	WALK_SKIP_NONDIR = 2,   /* a non-directory on the way: NULL, no error */
};

/*
 * The entry's path in the image, "/" and its components as split_path()
 * cleaned them ("/a/b", as the file's path under a directory source reads
 * once the archive is extracted), for the rules that match paths (none:
 * not made).  Made for the components a walk creates directories for.
 */
static int make_image_path(struct tar_reader *r, const char *comps, size_t count)
{
	size_t len = 0, i;

	if (!r->b->hints && !path_rules_active(r->b))
		return 0;
	for (i = 0; i < count; i++)
		len += strlen(comps + len) + 1;
	if (len + 2 > r->image_path_cap) {
		char *p = realloc(r->image_path, len + 2);

		if (!p)
			return err_fail(r->b->err, -ENOMEM, "out of memory");
		r->image_path = p;
		r->image_path_cap = len + 2;
	}
	/* The components are NUL-separated: separate them with '/'. */
	r->image_path[0] = '/';
	memcpy(r->image_path + 1, comps, len);
	r->image_path[len ? len : 1] = '\0';
	for (i = 1; i < len; i++)
		if (!r->image_path[i])
			r->image_path[i] = '/';
	return 0;
}

/* The path rules' attributes of n, by its path in the image, the first
 * len bytes of image_path (a directory on the entry's way, or the entry). */
static int label_node(struct tar_reader *r, struct tnode *n, size_t len)
{
	char keep;
	int ret;

	if (!path_rules_active(r->b))
		return 0;
	keep = r->image_path[len];
	r->image_path[len] = '\0';
	ret = path_rules_apply(r->b, n, r->image_path);
	r->image_path[len] = keep;
	return ret;
}

/* The path rules' attributes of the entry's own node. */
static int label_entry(struct tar_reader *r, struct tnode *n)
{
	return path_rules_active(r->b) ? label_node(r, n, strlen(r->image_path)) : 0;
}

/*
 * The directory that holds the last of `count` components, created as
 * needed (WALK_CREATE); every component on the way must be a directory
 * (never a symlink: nothing is followed), else an error, or NULL with
 * WALK_SKIP_NONDIR.  Without WALK_CREATE: NULL when one is missing.  A
 * walk that creates labels what it makes by image_path, made first.
 */
static int walk_to_parent(struct tar_reader *r, const char *comps, size_t count,
			  unsigned int how, struct tnode **out)
{
	struct tnode *dir = r->b->tree.root;
	const char *c = comps;
	size_t i;

	for (i = 0; i + 1 < count; i++, c += strlen(c) + 1) {
		struct tar_name *e = name_find(r, dir, c, strlen(c));
		struct tnode *d;
		int ret;

		if (e && !S_ISDIR(e->child->mode)) {
			*out = NULL;
			if (how & WALK_SKIP_NONDIR)
				return 0;
			return entry_fail(r, -EUCLEAN, "'%s' on its way is a %s, not a directory",
					  c, type_name(e->child->mode));
		}
		if (e) {
			dir = e->child;
			continue;
		}
		if (!(how & WALK_CREATE)) {
			*out = NULL;
			return 0;
		}
		d = implicit_dir(r, dir);
		if (!d)
			return err_fail(r->b->err, -ENOMEM, "out of memory");
		ret = name_add(r, dir, c, strlen(c), d);
		/* Its path: "/" and the components up to c (image_path is
		 * the walk's, made by whoever walks to create). */
		if (!ret)
			ret = label_node(r, d, (size_t)(c - comps) + strlen(c) + 1);
		if (ret)
			return ret;
		dir = d;
	}
	*out = dir;
	return 0;
}

static const char *last_component(const char *comps, size_t count)
{
	const char *c = comps;
	size_t i;

	for (i = 0; i + 1 < count; i++)
		c += strlen(c) + 1;
	return c;
}

/* ------------------------------------------------------------ inodes */

/* The xattrs --ovlfs-strip drops: what overlayfs itself sets. */
static bool overlay_metadata(const char *xattr)
{
	return !strcmp(xattr, "trusted.overlay.opaque") || !strcmp(xattr, "trusted.overlay.origin");
}

static int take_xattrs(struct tar_reader *r, struct tnode *n, struct archive_entry *e)
{
	struct tar_acl_xattrs acls = { { NULL, NULL }, { 0, 0 } };
	char label[EK_ERROR_MESSAGE_MAX];   /* names the entry in errors */
	const char *name;
	const void *value;
	size_t size;
	int ret = 0, slot;

	free(n->xattrs);
	n->xattrs = NULL;
	n->nxattrs = 0;
	if (r->b->o.no_xattrs)
		return 0;
	/* Most entries have neither: no label made for them.  The first
	 * call also rewinds the xattr list for the loop below. */
	if (libarchive.entry_xattr_reset(e) <= 0 &&
	    libarchive.entry_acl_reset(e, ARCHIVE_ENTRY_ACL_TYPE_POSIX1E) <= 0)
		return label_entry(r, n);
	entry_label(r, label, sizeof(label));
	while (!ret && libarchive.entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
		/* ACLs are checked and made with the ACL list, below; no other
		 * system.posix_acl_ name exists on Linux. */
		slot = tar_acl_xattr_slot(name);
		if (slot >= 0) {
			acls.value[slot] = value;
			acls.size[slot] = size;
		} else if (strncmp(name, "system.posix_acl_", strlen("system.posix_acl_")) &&
			   !(r->b->o.ovlfs_strip && overlay_metadata(name)) &&
			   !path_rules_replace_xattr(r->b, name)) {
			ret = xattr_attach(r->b, n, name, value, size, label);
		}
	}
	if (!ret)
		ret = tar_acl_attach(r->b, n, e, &acls, label);
	if (!ret)   /* the path rules replace the archive's label and caps */
		ret = label_entry(r, n);
	/* An xattr EROFS cannot hold is the archive's fault: bad input, as
	 * every other entry error (exit 1), not the user's tree. */
	if (ret == -ENAMETOOLONG || ret == -E2BIG)
		ret = -EUCLEAN;
	if (ret)
		return ret;
	xattr_sort(n);
	return 0;
}

/* Metadata of the entry into n (whose type is set). */
static int take_metadata(struct tar_reader *r, struct tnode *n, struct archive_entry *e)
{
	int64_t uid = libarchive.entry_uid(e), gid = libarchive.entry_gid(e), sec;
	uint32_t nsec;

	if (!libarchive_entry_mtime(e, &sec, &nsec)) {
		sec = r->b->epoch;
		nsec = 0;
	}
	if (uid < 0 || uid > UINT32_MAX || gid < 0 || gid > UINT32_MAX)
		return entry_fail(r, -EUCLEAN, "owner %lld:%lld out of range",
				  (long long)uid, (long long)gid);
	n->mode = (n->mode & S_IFMT) | (libarchive.entry_perm(e) & 07777);
	if (build_set_owner_time(r->b, n, (uint32_t)uid, (uint32_t)gid, sec, nsec))
		return entry_fail(r, -EOVERFLOW, "owner %lld:%lld with the id offsets is over 4294967295",
				  (long long)uid, (long long)gid);
	return take_xattrs(r, n, e);
}

/* The entry's data into the spool; n reads it from there. */
static int spool_data(struct tar_reader *r, struct tnode *n)
{
	struct build *b = r->b;
	uint64_t base = r->spool_end, written_end = 0;

	n->spooled = true;
	n->spool_off = base;
	for (;;) {
		const void *buf;
		size_t size;
		la_int64_t offset;
		int ret = libarchive.read_data_block(r->a, &buf, &size, &offset);

		if (ret == ARCHIVE_EOF)
			break;
		if (ret < ARCHIVE_WARN)
			return archive_fail(r, "reading its data");
		if (offset < 0 || (uint64_t)offset > n->size || size > n->size - (uint64_t)offset)
			return entry_fail(r, -EUCLEAN, "data past its size of %llu bytes",
					  (unsigned long long)n->size);
		ret = fd_pwrite_full(b->spool_fd, buf, size, base + (uint64_t)offset);
		if (ret)
			return err_fail(b->err, ret,
					"%s: cannot keep entry %llu's data while it is written: %s",
					r->source, (unsigned long long)r->entry_no, strerror(-ret));
		offset += (int64_t)size;
		if ((uint64_t)offset > written_end)
			written_end = (uint64_t)offset;
		build_progress(b, 0);
	}
	/* Holes of a sparse entry (and its end) read as zeros. */
	if (written_end < n->size) {
		struct stat st;

		if (fstat(b->spool_fd, &st) < 0 ||
		    ((uint64_t)st.st_size < base + n->size &&
		     ftruncate(b->spool_fd, (off_t)(base + n->size)) < 0))
			return err_fail(b->err, -errno, "%s: spool: %s", r->source, strerror(errno));
	}
	r->spool_end = base + source_spool_span(n);
	return 0;
}

/* A file or symlink is complete: its layout is fixed now, its data goes
 * into the image (or the queue towards it). */
static int write_node(struct tar_reader *r, struct tnode *n)
{
	struct build *b = r->b;
	int ret = plan_node_xattrs(b, n);

	if (ret)
		return ret;
	ret = choose_inode_form(b, n);
	if (ret)
		return ret;
	return b->z ? zbuild_add(b, n) : data_write_one(b, n);
}

static uint64_t entry_key(uint32_t layer, uint64_t entry_no)
{
	return (uint64_t)layer << 40 | entry_no;
}

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_live(const struct tar_reader *r, uint64_t key)
{
	return bsearch(&key, r->live, r->nlive, sizeof(key), cmp_key) != NULL;
}

/* The node an entry of type `type` becomes, with its type's fields. */
static int make_node(struct tar_reader *r, struct archive_entry *e, uint32_t type,
		     struct tnode **out)
{
	struct tnode *n = new_node(r, type);
	int ret;

	if (!n)
		return err_fail(r->b->err, -ENOMEM, "out of memory");
	*out = n;
	n->tar_entry = entry_key(r->layer, r->entry_no);
	n->data_dropped = (type == S_IFREG || type == S_IFLNK) &&
			  (r->survey || (r->live && !is_live(r, n->tar_entry)));
	ret = take_metadata(r, n, e);
	if (ret)
		return ret;
	switch (type) {
	case S_IFREG:
		if (libarchive.entry_size(e) < 0)
			return entry_fail(r, -EUCLEAN, "negative size");
		n->size = libarchive.entry_size_is_set(e) ? (uint64_t)libarchive.entry_size(e) : 0;
		n->src_path = strdup(r->entry_path);
		if (!n->src_path)
			return err_fail(r->b->err, -ENOMEM, "out of memory");
		if (n->data_dropped)
			return 0;   /* libarchive skips it */
		if (!r->b->o.tar_index)
			return spool_data(r, n);
		/* Its data stays in the tar: in one piece, where the next
		 * header's position says (index_previous). */
		if (libarchive.entry_sparse_count(e) > 0)
			return entry_fail(r, -EUCLEAN, "a sparse file cannot be indexed (its data "
					  "is not one run in the tar): use --tar=f");
		n->indexed = true;
		n->layout = EROFS_LAYOUT_FLAT_PLAIN;
		n->tar_off = r->data_start;
		r->unplaced = n;
		return 0;
	case S_IFLNK: {
		const char *target = libarchive.entry_symlink(e);
		size_t len = target ? strlen(target) : 0;

		if (len == 0 || len > 4095)
			return entry_fail(r, -EUCLEAN,
					  "symlink target of %zu bytes (EROFS stores 1..4095)", len);
		n->symlink = strdup(target);
		if (!n->symlink)
			return err_fail(r->b->err, -ENOMEM, "out of memory");
		n->size = len;
		return 0;
	}
	case S_IFCHR:
	case S_IFBLK:
		n->rdev_major = (uint32_t)libarchive.entry_rdevmajor(e);
		n->rdev_minor = (uint32_t)libarchive.entry_rdevminor(e);
		return 0;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------ entries */

static int link_to(struct tar_reader *r, struct tnode *parent, const char *name,
		   struct tnode *target)
{
	struct tar_name *old = name_find(r, parent, name, strlen(name));

	if (S_ISDIR(target->mode))
		return entry_fail(r, -EUCLEAN, "a hard link to a directory");
	if (old && old->child == target)
		return 0;
	if (old)
		name_remove(r, old);
	return name_add(r, parent, name, strlen(name), target);
}

/* The inode at an archive path, or NULL. */
static int find_path(struct tar_reader *r, const char *raw, struct tnode **out)
{
	struct tnode *dir;
	struct tar_name *e;
	size_t count;
	char *comps;
	int ret = split_path(r, raw, &comps, &count);

	*out = NULL;
	if (ret)
		return ret;
	if (!count) {
		*out = r->b->tree.root;
		free(comps);
		return 0;
	}
	ret = walk_to_parent(r, comps, count, 0, &dir);
	if (!ret && dir) {
		const char *last = last_component(comps, count);

		e = name_find(r, dir, last, strlen(last));
		*out = e ? e->child : NULL;
	}
	free(comps);
	return ret;
}

static int defer_link(struct tar_reader *r, const char *target)
{
	struct deferred_link *l;
	void *grown;

	grown = grow(r, r->links, &r->cap_links, r->nlinks, sizeof(*r->links));
	if (!grown)
		return -ENOMEM;
	r->links = grown;
	l = &r->links[r->nlinks];
	l->path = strdup(r->entry_path);
	l->target = strdup(target);
	l->entry_no = r->entry_no;
	if (!l->path || !l->target) {
		free(l->path);
		free(l->target);
		return err_fail(r->b->err, -ENOMEM, "out of memory");
	}
	r->nlinks++;
	return 0;
}

static int mark_opaque(struct tar_reader *r, struct tnode *dir)
{
	void *grown;
	size_t i;

	for (i = 0; i < r->nopaque; i++)
		if (r->opaque[i] == dir)
			return 0;
	grown = grow(r, r->opaque, &r->cap_opaque, r->nopaque, sizeof(*r->opaque));
	if (!grown)
		return -ENOMEM;
	r->opaque = grown;
	r->opaque[r->nopaque++] = dir;
	return 0;
}

/* Flattening: .wh.NAME in dir, applied when the layer ends. */
static int record_whiteout(struct tar_reader *r, struct tnode *dir, const char *name)
{
	struct whiteout *w;

	w = grow(r, r->whiteouts, &r->cap_whiteouts, r->nwhiteouts, sizeof(*w));
	if (!w)
		return -ENOMEM;
	r->whiteouts = w;
	w = &r->whiteouts[r->nwhiteouts];
	w->dir = dir;
	w->name = strdup(name);
	if (!w->name)
		return err_fail(r->b->err, -ENOMEM, "out of memory");
	r->nwhiteouts++;
	return 0;
}

static uint32_t entry_type(struct archive_entry *e)
{
	switch (libarchive.entry_filetype(e)) {
	case AE_IFREG: return S_IFREG;
	case AE_IFDIR: return S_IFDIR;
	case AE_IFLNK: return S_IFLNK;
	case AE_IFCHR: return S_IFCHR;
	case AE_IFBLK: return S_IFBLK;
	case AE_IFIFO: return S_IFIFO;
	case AE_IFSOCK: return S_IFSOCK;
	default: return 0;
	}
}

/* One entry, its path split into comps[count] (count > 0). */
static int add_named(struct tar_reader *r, struct archive_entry *e, const char *comps,
		     size_t count)
{
	const char *name = last_component(comps, count), *hardlink;
	uint32_t type = entry_type(e);
	struct tar_name *old;
	struct tnode *parent, *n = NULL;
	bool whiteout = false;
	bool marker = (r->b->o.aufs || r->flatten) &&
		      !strncmp(name, WHITEOUT_PREFIX, strlen(WHITEOUT_PREFIX));
	int ret;

	/* A whiteout beneath a non-directory hides nothing: that entry hides
	 * all below it already (umoci writes such).  Flattening, one beneath
	 * no directory at all hides nothing either.  (Existing components
	 * come before created ones, so nothing is made for a skipped one.) */
	ret = walk_to_parent(r, comps, count,
			     !marker ? WALK_CREATE :
			     r->flatten ? WALK_SKIP_NONDIR : WALK_CREATE | WALK_SKIP_NONDIR,
			     &parent);
	if (ret || !parent)
		return ret;
	if (marker) {
		if (!strcmp(name, OPAQUE_NAME))
			return r->b->o.ovlfs_strip ? 0 : mark_opaque(r, parent);
		if (!strncmp(name, WHITEOUT_PREFIX WHITEOUT_PREFIX, 2 * strlen(WHITEOUT_PREFIX)))
			return 0;   /* aufs's own bookkeeping (.wh..wh.plnk, ...) */
		name += strlen(WHITEOUT_PREFIX);
		if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
			return entry_fail(r, -EUCLEAN, "a whiteout of no name");
		if (r->flatten)
			return record_whiteout(r, parent, name);
		whiteout = true;
	}
	hardlink = whiteout ? NULL : libarchive.entry_hardlink(e);
	if (hardlink) {
		struct tnode *target;

		ret = find_path(r, hardlink, &target);
		if (ret)
			return ret;
		if (!target)        /* it may come later in the archive */
			return defer_link(r, hardlink);
		return link_to(r, parent, name, target);
	}
	if (whiteout)
		type = S_IFCHR;     /* overlayfs: a 0:0 character device */
	else if (!type)
		return entry_fail(r, -EUCLEAN, "an entry of unknown type 0%o",
				  (unsigned int)libarchive.entry_filetype(e));
	old = name_find(r, parent, name, strlen(name));
	/* Stripped, a whiteout only takes what it names away. */
	if (r->b->o.ovlfs_strip && type == S_IFCHR &&
	    (whiteout || (!libarchive.entry_rdevmajor(e) && !libarchive.entry_rdevminor(e)))) {
		if (old)
			name_remove(r, old);
		return 0;
	}
	if (old && S_ISDIR(old->child->mode) && type == S_IFDIR) {
		old->layer = r->layer;
		return take_metadata(r, old->child, e);   /* tar -x keeps its children */
	}
	if (old)
		name_remove(r, old);
	ret = make_node(r, e, type, &n);
	if (!ret && whiteout)
		n->rdev_major = n->rdev_minor = 0;
	if (!ret && type == S_IFDIR)
		n->parent = parent;
	if (!ret && type == S_IFREG && r->b->hints)
		n->hint = (uint8_t)hints_rule(r->b->hints, r->image_path + 1);
	if (!ret)
		ret = name_add(r, parent, name, strlen(name), n);
	if (!ret && (type == S_IFLNK || (type == S_IFREG && !n->indexed)) && !n->data_dropped)
		ret = write_node(r, n);
	return ret;
}

/* The first entry's time is the epoch, before any directory is made for
 * it: with any luck most inodes share it and stay compact (-T decides
 * otherwise). */
static void choose_epoch_from(struct tar_reader *r, struct archive_entry *e)
{
	struct tnode probe;
	int64_t sec = 0;
	uint32_t nsec = 0;

	memset(&probe, 0, sizeof(probe));
	libarchive_entry_mtime(e, &sec, &nsec);
	(void)build_set_owner_time(r->b, &probe, 0, 0, sec, nsec);
	r->b->epoch = probe.mtime;
	r->b->fixed_nsec = probe.mtime_nsec;
	r->b->tree.root->mtime = probe.mtime;
	r->b->tree.root->mtime_nsec = probe.mtime_nsec;
	r->epoch_set = true;
}

static int add_entry(struct tar_reader *r, struct archive_entry *e)
{
	size_t count;
	char *comps;
	int ret;

	if (!r->epoch_set)
		choose_epoch_from(r, e);
	r->entry_path = libarchive.entry_pathname(e);
	if (!r->entry_path)
		return entry_fail(r, -EUCLEAN, "no name (or one that is not valid in this locale)");
	ret = split_path(r, r->entry_path, &comps, &count);
	if (ret)
		return ret;
	ret = make_image_path(r, comps, count);
	if (!ret && count)
		ret = add_named(r, e, comps, count);
	else if (!ret && entry_type(e) == S_IFDIR)   /* "./": the root's metadata */
		ret = take_metadata(r, r->b->tree.root, e);
	else if (!ret)
		ret = entry_fail(r, -EUCLEAN, "the root must be a directory");
	free(comps);
	return ret;
}

/* ------------------------------------------------------------ the end */

static int resolve_deferred_links(struct tar_reader *r)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < r->nlinks && !ret; i++) {
		struct deferred_link *l = &r->links[i];
		struct tnode *parent, *target;
		size_t count;
		char *comps;

		r->entry_no = l->entry_no;
		r->entry_path = l->path;
		ret = find_path(r, l->target, &target);
		if (!ret && !target)
			ret = entry_fail(r, -EUCLEAN, "a hard link to '%s', which the archive does not hold",
					 l->target);
		if (!ret)
			ret = split_path(r, l->path, &comps, &count);
		if (ret)
			break;
		ret = make_image_path(r, comps, count);
		if (!ret)
			ret = walk_to_parent(r, comps, count, WALK_CREATE, &parent);
		if (!ret)
			ret = link_to(r, parent, last_component(comps, count), target);
		free(comps);
	}
	return ret;
}

/* ------------------------------------------------------------ flattening */

/* A live name by the directory holding it, to walk down a tree. */
struct child_ref {
	uintptr_t parent;
	size_t index;               /* into r->v */
};

static int cmp_child_ref(const void *a, const void *b)
{
	const struct child_ref *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The first of dir's names in refs (sorted), or nrefs. */
static size_t first_child(const struct child_ref *refs, size_t nrefs, const struct tnode *dir)
{
	size_t lo = 0, hi = nrefs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (refs[mid].parent < (uintptr_t)dir)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool hide_lower(struct tar_reader *r, const struct child_ref *refs, size_t nrefs,
		       struct tar_name *e);

/* hide_lower() on each name in dir; whether any is still there. */
static bool hide_lower_children(struct tar_reader *r, const struct child_ref *refs,
				size_t nrefs, const struct tnode *dir)
{
	bool kept = false;
	size_t i;

	for (i = first_child(refs, nrefs, dir); i < nrefs && refs[i].parent == (uintptr_t)dir; i++)
		if (r->v[refs[i].index].name && hide_lower(r, refs, nrefs, &r->v[refs[i].index]))
			kept = true;
	return kept;
}

/*
 * A whiteout of the current layer hides what the layers below it gave
 * (the OCI layer rules): a name a lower layer gave goes, one this layer
 * gave stays, and a lower directory this layer put something in stays
 * with only that.  Returns whether the name is still there.
 */
static bool hide_lower(struct tar_reader *r, const struct child_ref *refs, size_t nrefs,
		       struct tar_name *e)
{
	bool kept_child = S_ISDIR(e->child->mode) && hide_lower_children(r, refs, nrefs, e->child);

	if (e->layer == r->layer || kept_child)
		return true;
	name_unlink(r, e);
	return false;
}

/* The end of a layer being flattened: its whiteouts and opaque
 * directories take away what the layers below it hold. */
static int apply_whiteouts(struct tar_reader *r)
{
	struct child_ref *refs;
	size_t nrefs = 0, i, k;

	if (!r->nwhiteouts && !r->nopaque)
		return 0;
	refs = malloc((r->n ? r->n : 1) * sizeof(*refs));
	if (!refs)
		return err_fail(r->b->err, -ENOMEM, "out of memory");
	for (i = 0; i < r->n; i++)
		if (r->v[i].name)
			refs[nrefs++] = (struct child_ref){ (uintptr_t)r->v[i].parent, i };
	qsort(refs, nrefs, sizeof(*refs), cmp_child_ref);
	for (k = 0; k < r->nwhiteouts; k++) {
		struct whiteout *w = &r->whiteouts[k];
		struct tar_name *e = name_find(r, w->dir, w->name, strlen(w->name));

		if (e)
			hide_lower(r, refs, nrefs, e);
		free(w->name);
	}
	r->nwhiteouts = 0;
	for (k = 0; k < r->nopaque; k++)
		hide_lower_children(r, refs, nrefs, r->opaque[k]);
	r->nopaque = 0;
	free(refs);
	return 0;
}

/* The names become each directory's sorted children; directories count
 * their links. */
static int make_directories(struct tar_reader *r)
{
	struct tnode *n;
	size_t i;

	for (i = 0; i < r->n; i++) {
		struct tar_name *e = &r->v[i];
		struct tnode *dir = e->parent;
		struct tdentry *grown;

		if (!e->name)
			continue;
		grown = realloc(dir->children, (dir->nchildren + 1) * sizeof(*grown));
		if (!grown)
			return err_fail(r->b->err, -ENOMEM, "out of memory");
		dir->children = grown;
		grown[dir->nchildren].name = e->name;
		grown[dir->nchildren].name_len = (uint16_t)strlen(e->name);
		grown[dir->nchildren].inode = e->child;
		dir->nchildren++;
		e->name = NULL;     /* the tree owns it now */
	}
	for (n = r->b->tree.first; n; n = n->next) {
		uint32_t k, subdirs = 0;

		if (!S_ISDIR(n->mode) || !n->nlink)
			continue;
		tree_sort_children(n);
		for (k = 0; k < n->nchildren; k++)
			subdirs += S_ISDIR(n->children[k].inode->mode);
		n->nlink = 2 + subdirs;
	}
	return 0;
}

static int finish_tree(struct tar_reader *r)
{
	struct build *b = r->b;
	struct tnode *n;
	size_t i;
	int ret;

	for (i = 0; i < r->nopaque; i++) {
		if (!r->opaque[i]->nlink)
			continue;
		ret = xattr_attach(b, r->opaque[i], "trusted.overlay.opaque", "y", 1, "(opaque directory)");
		if (ret)
			return ret;
		xattr_sort(r->opaque[i]);
	}
	ret = make_directories(r);
	if (ret)
		return ret;
	tree_drop_unlinked(&b->tree, b->packed_inode);
	/* The survey and this pass read the same headers the same way. */
	for (n = b->tree.first; n; n = n->next)
		if (n->data_dropped)
			return err_fail(b->err, -EIO, "%s: entry %llu of layer %u was found deleted "
					"at first and is not the second time: was an archive "
					"changed while it was read?", n->src_path ? n->src_path : "a symlink",
					(unsigned long long)(n->tar_entry & ((1ull << 40) - 1)),
					(unsigned int)(n->tar_entry >> 40) + 1);
	/* What has no data: its form may still change (a directory's links,
	 * its xattrs from a later entry). */
	for (n = b->tree.first; n && !ret; n = n->next) {
		if ((S_ISREG(n->mode) && !n->indexed) || S_ISLNK(n->mode) ||
		    n == b->packed_inode)
			continue;
		ret = plan_node_xattrs(b, n);
		if (!ret)
			ret = choose_inode_form(b, n);
	}
	for (n = b->tree.first; n && !ret; n = n->next)
		if (n->nlink > 0xFFFF && !n->extended)
			ret = err_fail(b->err, -EMLINK, "%s: %u hard links, more than a file written before its last link can have",
				       n->src_path ? n->src_path : "(file)", n->nlink);
	return ret;
}

/* ------------------------------------------------------------ setup */

static int open_spool(struct build *b)
{
	b->spool_fd = path_scratch_beside(b->image_path);
	if (b->spool_fd < 0)
		return err_fail(b->err, -errno, "%s: cannot make a temporary file beside it: %s",
				b->image_path, strerror(errno));
	return 0;
}

/* (read_layer has stopped the headers' reader.) */
static void close_archive(struct tar_reader *r)
{
	if (r->a)
		libarchive.read_free(r->a);
	r->a = NULL;
	if (r->stream)
		r->input_base += tarstream_consumed(r->stream);
	tarstream_close(r->stream);
	r->stream = NULL;
}

static int open_archive(struct tar_reader *r, const struct tar_layer *l)
{
	int ret;

	r->a = libarchive.read_new();
	if (!r->a)
		return err_fail(r->b->err, -ENOMEM, "out of memory");
	/* tar in all its dialects, behind any compression libarchive reads;
	 * nothing else (a zip or cpio is not a layer). */
	libarchive.read_support_format_tar(r->a);
	libarchive.read_support_format_gnutar(r->a);
	libarchive.read_support_filter_all(r->a);
	/* Index mode reads headers only: it skips the data (unless the
	 * whole tar is copied). */
	ret = tarstream_open(l->path, l->feed, r->source,
			     l->verify && !r->survey ? &l->expect : NULL,
			     r->b->o.tar_index && !r->copy, &r->stream, r->b->err);
	if (!ret && r->copy)
		tarstream_copy_to(r->stream, r->copy);
	/* Decoding beside the parsing, where another core can take it. */
	if (!ret && r->b->workers > 1)
		tarstream_decode_ahead(r->stream);
	if (!ret && libarchive.read_open2(r->a, r->stream, NULL, tarstream_read, tarstream_skip,
					  NULL) != ARCHIVE_OK)
		/* (libarchive would call no bytes at all unrecognised.) */
		ret = tarstream_consumed(r->stream) ? archive_fail(r, "cannot read it") :
			archive_fail_why(r, "cannot read it", "it is empty, not a tar archive");
	if (ret)
		return ret;
	/* Known once open (libarchive has chosen its filters). */
	r->compressed_as = tarstream_compression(r->stream);
	if (!r->compressed_as && libarchive.filter_count(r->a) > 1) {
		r->compressed_as = libarchive.filter_name(r->a, 0);
		if (r->copy)
			return err_fail(r->b->err, -EINVAL, "%s: --tar-copy copies a tar erofskit "
					"decompresses itself (gzip, zstd, xz), and this one is %s",
					r->source, r->compressed_as);
	}
	/* No data is read in index mode and in the survey: the headers can
	 * be parsed ahead, on a core of their own. */
	ret = tar_ahead_start(r->a, (r->b->o.tar_index || r->survey) && r->b->workers > 1,
			      &r->ahead);
	if (ret)
		return err_fail(r->b->err, ret, "%s: cannot read its headers: %s", r->source,
				strerror(-ret));
	return 0;
}

static void reader_free(struct tar_reader *r)
{
	size_t i;

	close_archive(r);
	free(r->live);
	for (i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	free(r->slots);
	for (i = 0; i < r->nlinks; i++) {
		free(r->links[i].path);
		free(r->links[i].target);
	}
	free(r->links);
	free(r->opaque);
	for (i = 0; i < r->nwhiteouts; i++)
		free(r->whiteouts[i].name);
	free(r->whiteouts);
	free(r->image_path);
}

/* Index mode: the file before this header h (or this failure to read
 * one) had all its data in the tar, before h. */
static int index_previous(struct tar_reader *r, const struct tar_header *h)
{
	struct tnode *n = r->unplaced;
	uint64_t end;

	if (!n)
		return 0;
	r->unplaced = NULL;
	end = n->tar_off + n->size;
	/* (Its header is gone: the message takes the name the node kept.) */
	r->entry_path = n->src_path;
	if (h->status < ARCHIVE_WARN && h->status != ARCHIVE_EOF) {
		if (h->data_start < end)
			return entry_fail(r, -EUCLEAN, "its data is cut short: the tar ends after "
					  "%llu bytes, its %llu bytes would end at %llu",
					  (unsigned long long)h->data_start,
					  (unsigned long long)n->size, (unsigned long long)end);
		return 0;   /* the next header is what failed */
	}
	if (h->position < 0 || (uint64_t)h->position < end)
		return entry_fail(r, -EUCLEAN, "its data is not where an indexed tar keeps it");
	return 0;
}

/*
 * libarchive reads on past what it warns of, losing it (a pax attribute
 * it rejects, an ACL it cannot parse): bad input, as bsdtar's exit status
 * says too.  All but one warning: a name it cannot convert to this
 * process's character set (a UTF-8 pax name in the C locale) is kept as
 * its bytes, which is what an EROFS name is.
 */
static bool only_charset(const struct tar_header *h)
{
	return h->errnum == EILSEQ && strstr(h->why, "can't be converted");
}

static int read_entries(struct tar_reader *r)
{
	int ret = 0;

	for (;;) {
		const struct tar_header *h;

		if (cancel_requested(r->b->o.cancel))
			return err_fail(r->b->err, -ECANCELED, CANCEL_MESSAGE);
		h = tar_ahead_next(r->ahead);
		/* No entries at all is a tar too (an empty layer; tar -x
		 * makes nothing of it): the image is the empty root. */
		if (h->status == ARCHIVE_EOF)
			return index_previous(r, h) ? -EUCLEAN : 0;
		ret = index_previous(r, h);
		if (ret)
			return ret;
		r->entry_no++;
		r->entry_path = NULL;
		if (h->status < ARCHIVE_WARN)
			return archive_fail_why(r, r->entry_no == 1 ? "not a tar archive" :
						"reading its header", h->why);
		if (h->status == ARCHIVE_WARN && !only_charset(h)) {
			r->entry_path = libarchive.entry_pathname(h->entry);
			return archive_fail_why(r, "reading its header", h->why);
		}
		if (r->b->o.tar_index && r->entry_no == 1 && r->compressed_as && !r->copy)
			return entry_fail(r, -EUCLEAN, "--tar=i indexes a tar as it is, and this one "
					  "is compressed (%s): decompress it first (--tar-copy FILE "
					  "does, into FILE), or use --tar=f", r->compressed_as);
		r->data_start = h->data_start;
		ret = add_entry(r, h->entry);
		if (ret)
			return ret;
		if (r->b->o.progress) {
			r->b->input_done = r->input_base + tarstream_consumed(r->stream);
			build_progress(r->b, 0);
		}
	}
}

/*
 * The survey reads a layer without checking its digests: the build's
 * pass reads it again and checks what it reads (hashing each blob and
 * its tar in both passes was a fifth of a three-layer root filesystem's
 * build).  A layer the survey fails on is checked then, so that a blob
 * that is not what its digest names says so first, as in the build's.
 */
static int survey_blame(struct tar_reader *r, const struct tar_layer *l, int ret)
{
	struct tarstream *s = NULL;
	ek_error why = { 0, "" };
	int checked;

	if (!l->verify || ret == -ECANCELED || ret == -ENOMEM)
		return ret;
	/* (A blob its manifest names and the layout lacks fails the open.) */
	checked = tarstream_open(l->path, l->feed, r->source, &l->expect, false, &s, &why);
	if (!checked)
		checked = tarstream_finish(s, true, &why);
	tarstream_close(s);
	if (checked != -EUCLEAN)
		return ret;
	*r->b->err = why;
	return checked;
}

/* One archive into the tree: its entries, then its hard links to
 * entries further on, then (flattening) its whiteouts. */
static int read_layer(struct tar_reader *r, const struct tar_layer *l, uint32_t layer)
{
	int ret;

	r->source = l->name ? l->name : l->path ? l->path : "standard input";
	r->b->source = r->source;
	r->layer = layer;
	r->entry_no = 0;
	r->entry_path = NULL;
	ret = open_archive(r, l);
	if (!ret)
		ret = read_entries(r);
	/* The headers' reader stops (it may be ahead, after an error)
	 * before anyone else reads the stream. */
	tar_ahead_stop(r->ahead);
	r->ahead = NULL;
	if (r->stream) {
		/* A blob that is not what its digest names says so first,
		 * whatever reading it tripped on. */
		int checked = tarstream_finish(r->stream, ret != 0, r->b->err);

		if (checked)
			ret = checked;
		r->copy_size = tarstream_copied(r->stream);
	}
	close_archive(r);
	if (ret && r->survey)
		ret = survey_blame(r, l, ret);
	if (!ret)
		ret = resolve_deferred_links(r);
	if (!ret && r->flatten)
		ret = apply_whiteouts(r);
	return ret;
}

/* The tree's root, and the epoch -T or --mkfs-time fix. */
static int start_tree(struct tar_reader *r)
{
	struct build *b = r->b;
	struct tnode *root = tree_new_inode(&b->tree);

	if (!root)
		return err_fail(b->err, -ENOMEM, "out of memory");
	b->tree.root = root;
	root->mode = S_IFDIR | 0755;
	root->parent = root;
	root->nlink = 1;
	(void)build_set_owner_time(b, root, 0, 0, 0, 0);
	if (b->o.timestamp_set || b->o.clamp_mtime) {
		b->epoch = b->o.timestamp;
		r->epoch_set = true;
		root->mtime = b->epoch;
	}
	/* Until a "./" entry brings the root's own metadata. */
	return path_rules_apply(b, root, "/");
}

/*
 * The survey: every layer's headers applied as the build will apply them,
 * no data read, then the entries whose files and symlinks are still named
 * at the end into *live.  A file a later layer deletes or replaces would
 * otherwise be in the image for nothing (layers are streams: its data is
 * written before the deletion is read).  It costs a second decompression
 * of every layer; their digests are checked by the build's pass only
 * (survey_blame): what the build reads is what must match.
 */
static int survey_layers(const struct tar_layer *layers, size_t count, const ek_build_options *opts,
			 uint64_t input_total, uint64_t **live, size_t *nlive, ek_error *err)
{
	struct tar_reader r;
	struct build b;
	ek_build_stats local;
	struct tnode *n;
	size_t i;
	int ret;

	memset(&b, 0, sizeof(b));
	memset(&r, 0, sizeof(r));
	build_init(&b, opts, NULL, &local, err);
	/* Rules by path (hints, labels) shape what is written: the survey
	 * writes nothing, and neither opens nor matches them. */
	b.o.compress_hints = NULL;
	b.o.file_contexts = NULL;
	b.o.fs_config = NULL;
	r.b = &b;
	r.flatten = true;
	r.survey = true;
	b.no_shared_xattrs = true;
	b.input_total = input_total;
	ret = build_check_options(&b);
	if (!ret)
		ret = start_tree(&r);
	for (i = 0; i < count && !ret; i++)
		ret = read_layer(&r, &layers[i], (uint32_t)i);
	*nlive = 0;
	/* The tree's inodes bound the entries still there. */
	*live = ret ? NULL : malloc((b.tree.ninodes ? b.tree.ninodes : 1) * sizeof(**live));
	if (!ret && !*live)
		ret = err_fail(err, -ENOMEM, "out of memory");
	for (n = b.tree.first; n && !ret; n = n->next)
		if ((S_ISREG(n->mode) || S_ISLNK(n->mode)) && n->nlink)
			(*live)[(*nlive)++] = n->tar_entry;
	if (!ret)
		qsort(*live, *nlive, sizeof(**live), cmp_key);
	reader_free(&r);
	build_cleanup(&b);
	return ret;
}

/* The archives' bytes as stored, for progress; 0 when one is a pipe. */
static uint64_t layers_size(const struct tar_layer *layers, size_t count)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < count; i++) {
		struct stat st;
		int64_t left;

		/* Never opened here: opening a named pipe would wait for,
		 * and then break, its writer. */
		if (layers[i].feed)     /* still coming: its descriptor's size */
			left = layers[i].verify ? (int64_t)layers[i].expect.size : -1;
		else if (layers[i].path)
			left = stat(layers[i].path, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : -1;
		else
			left = fd_remaining(STDIN_FILENO);
		if (left < 0)
			return 0;
		sum += (uint64_t)left;
	}
	return sum;
}

int tar_build_layers(const char *image_path, const struct tar_layer *layers, size_t count,
		     bool flatten, const ek_build_options *opts, ek_build_stats *stats,
		     ek_error *err)
{
	struct tar_reader r;
	struct build b;
	ek_build_stats local;
	size_t i;
	int ret = 0;

	memset(&b, 0, sizeof(b));
	memset(&r, 0, sizeof(r));
	build_init(&b, opts, stats, &local, err);
	r.b = &b;
	r.flatten = flatten;
	b.source = !count ? "(no layers)" : layers[0].name ? layers[0].name : layers[0].path;
	b.no_shared_xattrs = true;
	if (b.o.tar_index && (b.o.compressor != EK_COMPRESS_NONE || b.o.block_size != 512))
		ret = err_fail(err, -EINVAL, "--tar=i stores no data of its own: it takes "
			       "512-byte blocks and no compression");
	if (!ret && b.o.tar_index && count != 1)
		ret = err_fail(err, -EINVAL, "--tar=i indexes one tar");
	if (!ret && b.o.tar_copy && (count != 1 || flatten))
		ret = err_fail(err, -EINVAL, "--tar-copy copies one tar: not an OCI image's layers");
	if (!ret && b.o.tar_copy && !strcmp(b.o.tar_copy, image_path))
		ret = err_fail(err, -EINVAL, "--tar-copy %s: that is the image", b.o.tar_copy);
	if (!ret && b.o.ovlfs_strip && flatten)
		ret = err_fail(err, -EINVAL, "--ovlfs-strip takes a tar: an OCI image's whiteouts are "
			       "applied already");
	if (!ret && b.o.xattr_share)
		ret = err_fail(err, -EINVAL, "--xattr-share takes a directory source: an archive's "
			       "xattrs are stored inline");
	if (!ret && b.o.hard_dereference)
		ret = err_fail(err, -EINVAL, "--hard-dereference takes a directory source: an "
			       "archive's links are kept");
	if (!ret && (b.o.exclude_paths || b.o.exclude_regexes))
		ret = err_fail(err, -EINVAL, "--exclude-path and --exclude-regex take a directory "
			       "source, not an archive");
	if (!ret)
		ret = build_check_options(&b);
	if (!ret)
		ret = libarchive_load(err);
	b.input_total = b.o.progress ? layers_size(layers, count) : 0;
	/* One layer deletes nothing it has not written yet. */
	if (!ret && flatten && count > 1) {
		b.input_total *= 2;     /* each layer is read twice */
		r.input_base = b.input_total / 2;
		ret = survey_layers(layers, count, opts, b.input_total, &r.live, &r.nlive, err);
	}
	if (!ret)
		ret = zbuild_setup(&b);
	if (!ret)
		ret = start_tree(&r);
	if (!ret)
		ret = dedupe_plan_stream(&b);
	if (!ret)
		ret = build_open_image(&b, image_path);
	if (!ret && b.o.tar_copy)
		ret = writer_open(b.o.tar_copy, &r.copy, err);
	if (!ret && !b.o.tar_index)     /* index mode keeps no data */
		ret = open_spool(&b);
	for (i = 0; i < count && !ret; i++)
		ret = read_layer(&r, &layers[i], (uint32_t)i);
	if (b.z)
		ret = zbuild_finish(&b, ret);
	if (!ret)
		ret = finish_tree(&r);
	if (!ret) {
		build_count(&b);
		ret = build_close_image(&b);
	}
	/* The copy after the image: it is made only if both are. */
	if (!ret && r.copy) {
		ret = writer_commit(r.copy, r.copy_size, err);
		r.copy = NULL;
		if (ret && strcmp(image_path, "-"))
			unlink(image_path);
	}
	writer_abort(r.copy);
	reader_free(&r);
	build_cleanup(&b);
	if (b.spool_fd >= 0)
		close(b.spool_fd);
	return ret;
}

int ek_build_tar(const char *image_path, const char *tar_path,
		 const ek_build_options *opts, ek_build_stats *stats, ek_error *err)
{
	struct tar_layer layer = { .path = tar_path };

	if (tar_path && !strcmp(tar_path, "-"))
		layer.path = NULL;
	return tar_build_layers(image_path, &layer, 1, false, opts, stats, err);
}
