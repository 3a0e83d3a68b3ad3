/* mkfs --block-list-file; see blocklist.h.  Read back from the finished
 * image through the library, so the list says what the image holds. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blocklist.h"

/* Deeper than any tree a build takes: a loop in a corrupt image. */
#define MAX_DEPTH 4096

struct range {
	uint64_t first, last;
};

struct lister {
	ek_image *img;
	FILE *out;
	ek_error *err;
	uint32_t blksz;
	char *path;             /* "/MOUNT_POINT/DIR/NAME" being listed */
	size_t path_cap;
	struct range *ranges;   /* of the file being listed */
	size_t nranges, ranges_cap;
	uint64_t *seen;         /* hard-linked files listed: open addressing */
	size_t seen_cap, seen_count;
};

static int fail(ek_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	err->code = code;
	return code;
}

/* Whether nid was seen before (then 1), after noting it; -ENOMEM. */
static int seen_before(struct lister *l, uint64_t nid)
{
	size_t i;

	if (2 * (l->seen_count + 1) > l->seen_cap) {
		size_t cap = l->seen_cap ? 2 * l->seen_cap : 64, j;
		uint64_t *grown = calloc(cap, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		for (j = 0; j < l->seen_cap; j++) {
			if (!l->seen[j])
				continue;
			for (i = l->seen[j] % cap; grown[i]; i = (i + 1) % cap)
				;
			grown[i] = l->seen[j];
		}
		free(l->seen);
		l->seen = grown;
		l->seen_cap = cap;
	}
	/* Stored as nid + 1: 0 marks a free slot. */
	for (i = (nid + 1) % l->seen_cap; l->seen[i]; i = (i + 1) % l->seen_cap)
		if (l->seen[i] == nid + 1)
			return 1;
	l->seen[i] = nid + 1;
	l->seen_count++;
	return 0;
}

static int add_range(struct lister *l, uint64_t first, uint64_t last)
{
	if (l->nranges == l->ranges_cap) {
		size_t cap = l->ranges_cap ? 2 * l->ranges_cap : 16;
		struct range *grown = realloc(l->ranges, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		l->ranges = grown;
		l->ranges_cap = cap;
	}
	l->ranges[l->nranges++] = (struct range){ first, last };
	return 0;
}

static int range_order(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* The file's ranges, sorted, those that touch or overlap merged (shared
 * pclusters and deduplicated blocks come in any order). */
static void print_ranges(struct lister *l)
{
	size_t i, kept = 0;

	qsort(l->ranges, l->nranges, sizeof(*l->ranges), range_order);
	for (i = 0; i < l->nranges; i++) {
		struct range *last = kept ? &l->ranges[kept - 1] : NULL;

		if (last && l->ranges[i].first <= last->last + 1) {
			if (last->last < l->ranges[i].last)
				last->last = l->ranges[i].last;
			continue;
		}
		l->ranges[kept++] = l->ranges[i];
	}
	fputs(l->path, l->out);
	for (i = 0; i < kept; i++) {
		if (l->ranges[i].first == l->ranges[i].last)
			fprintf(l->out, " %llu", (unsigned long long)l->ranges[i].first);
		else
			fprintf(l->out, " %llu-%llu", (unsigned long long)l->ranges[i].first,
				(unsigned long long)l->ranges[i].last);
	}
	fputc('\n', l->out);
}

static int list_file(struct lister *l, ek_nid nid)
{
	ek_inode *inode;
	const ek_stat *st;
	uint64_t offset = 0;
	int ret = ek_inode_get(l->img, nid, &inode, l->err);

	if (ret)
		return ret;
	st = ek_inode_stat(inode);
	if (st->nlink > 1 && (ret = seen_before(l, nid)) != 0) {
		ek_inode_put(inode);
		return ret < 0 ? fail(l->err, ret, "out of memory") : 0;
	}
	l->nranges = 0;
	while (!ret && offset < st->size) {
		ek_extent e;

		ret = ek_map(inode, offset, &e, l->err);
		if (ret)
			break;
		if ((e.kind == EK_EXTENT_PLAIN || e.kind == EK_EXTENT_COMPRESSED) &&
		    !e.in_metadata && e.physical_length &&
		    add_range(l, e.physical / l->blksz,
			      (e.physical + e.physical_length - 1) / l->blksz))
			ret = fail(l->err, -ENOMEM, "out of memory");
		offset = e.logical + e.length;
	}
	ek_inode_put(inode);
	if (!ret && l->nranges)
		print_ranges(l);
	return ret;
}

struct child {
	ek_nid nid;
	unsigned int type;
	char *name;
};

struct children {
	struct child *v;
	size_t n, cap;
};

static int collect_child(void *ctx, const ek_dirent *d)
{
	struct children *c = ctx;

	if ((d->name_len == 1 && d->name[0] == '.') ||
	    (d->name_len == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 32;
		struct child *grown = realloc(c->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		c->v = grown;
		c->cap = cap;
	}
	c->v[c->n].name = strndup(d->name, d->name_len);
	if (!c->v[c->n].name)
		return -ENOMEM;
	c->v[c->n].nid = d->nid;
	c->v[c->n++].type = d->type;
	return 0;
}

/* Append "/name" to the path, which is len bytes long now. */
static int push_name(struct lister *l, size_t len, const char *name)
{
	size_t need = len + 1 + strlen(name) + 1;

	if (name[strcspn(name, " \t\n\r\v\f")])
		return fail(l->err, -EINVAL, "%s/%s: a name with white space, which a block list "
			    "cannot hold (its lines are split at blanks)", l->path, name);
	if (need > l->path_cap) {
		char *grown = realloc(l->path, need);

		if (!grown)
			return fail(l->err, -ENOMEM, "out of memory");
		l->path = grown;
		l->path_cap = need;
	}
	l->path[len] = '/';
	strcpy(l->path + len + 1, name);
	return 0;
}

static int list_dir(struct lister *l, ek_nid nid, unsigned int depth)
{
	struct children c = { 0 };
	size_t len = strlen(l->path), i;
	ek_inode *dir;
	int ret;

	if (depth > MAX_DEPTH)
		return fail(l->err, -ELOOP, "%s: directories nested over %u deep", l->path,
			    MAX_DEPTH);
	ret = ek_inode_get(l->img, nid, &dir, l->err);
	if (ret)
		return ret;
	ret = ek_readdir(dir, 0, collect_child, &c, l->err);
	ek_inode_put(dir);
	if (ret == -ENOMEM)
		ret = fail(l->err, ret, "out of memory");
	for (i = 0; i < c.n && !ret; i++) {
		if (c.v[i].type != EK_FT_REG && c.v[i].type != EK_FT_DIR)
			continue;
		ret = push_name(l, len, c.v[i].name);
		if (!ret)
			ret = c.v[i].type == EK_FT_DIR ? list_dir(l, c.v[i].nid, depth + 1) :
							 list_file(l, c.v[i].nid);
		l->path[len] = '\0';
	}
	for (i = 0; i < c.n; i++)
		free(c.v[i].name);
	free(c.v);
	return ret;
}

static int list_image(struct lister *l, const char *mount_point)
{
	ek_super_info sb;
	size_t len;

	ek_get_super_info(l->img, &sb);
	l->blksz = sb.block_size;
	/* "/system": the mount point, one '/' in front, none behind. */
	mount_point += strspn(mount_point, "/");
	len = strlen(mount_point);
	while (len && mount_point[len - 1] == '/')
		len--;
	l->path_cap = len + 2;
	l->path = malloc(l->path_cap);
	if (!l->path)
		return fail(l->err, -ENOMEM, "out of memory");
	snprintf(l->path, l->path_cap, "%s%.*s", len ? "/" : "", (int)len, mount_point);
	return list_dir(l, ek_root_nid(l->img), 0);
}

int write_block_list(const char *image, const char *mount_point, const char *out,
		     ek_error *err)
{
	struct lister l = { .err = err };
	ek_open_options oo;
	char *tmp = NULL;
	int fd = -1, ret;

	ek_open_options_init(&oo);
	ret = ek_open(image, &oo, &l.img, err);
	if (ret)
		return ret;
	if (asprintf(&tmp, "%s.XXXXXX", out) < 0) {
		tmp = NULL;
		ret = fail(err, -ENOMEM, "out of memory");
	} else if ((fd = mkstemp(tmp)) < 0 || !(l.out = fdopen(fd, "w"))) {
		ret = fail(err, -errno, "%s: cannot write it: %s", out, strerror(errno));
		if (fd >= 0)
			close(fd);
		if (fd >= 0)
			unlink(tmp);
		free(tmp);
		tmp = NULL;
	}
	if (!ret)
		ret = list_image(&l, mount_point ? mount_point : "");
	if (l.out) {
		mode_t mask = umask(0);

		umask(mask);    /* as a file the user made: 0666 less the umask */
		if (!ret && (fchmod(fileno(l.out), 0666 & ~mask) || ferror(l.out) ||
			     fflush(l.out)))
			ret = fail(err, -errno, "%s: cannot write it: %s", out, strerror(errno));
		if (fclose(l.out) && !ret)
			ret = fail(err, -errno, "%s: cannot write it: %s", out, strerror(errno));
		if (!ret && rename(tmp, out) < 0)
			ret = fail(err, -errno, "%s: cannot write it: %s", out, strerror(errno));
		if (ret)
			unlink(tmp);
	}
	free(tmp);
	free(l.path);
	free(l.ranges);
	free(l.seen);
	ek_close(l.img);
	return ret;
}
