/* mkfs --block-list-file; see blocklist.h.  Read back from the finished
 * image through the library, so the list says what the image holds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blocklist.h"
#include "cli.h"
#include "imagewalk.h"

struct range {
	uint64_t first, last;
};

struct lister {
	FILE *out;
	uint32_t blksz;
	struct range *ranges;   /* of the file being listed */
	size_t nranges, ranges_cap;
};

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
static void print_ranges(struct lister *l, const char *path)
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
	fputs(path, l->out);
	for (i = 0; i < kept; i++) {
		if (l->ranges[i].first == l->ranges[i].last)
			fprintf(l->out, " %llu", (unsigned long long)l->ranges[i].first);
		else
			fprintf(l->out, " %llu-%llu", (unsigned long long)l->ranges[i].first,
				(unsigned long long)l->ranges[i].last);
	}
	fputc('\n', l->out);
}

/* A regular file's line, once per inode. */
static int list_entry(void *ctx, const struct image_entry *e, ek_error *err)
{
	struct lister *l = ctx;
	uint64_t offset = 0;
	int ret = 0;

	if (!S_ISREG(e->st->mode) || !e->first)
		return 0;
	l->nranges = 0;
	while (!ret && offset < e->st->size) {
		ek_extent x;

		ret = ek_map(e->inode, offset, &x, err);
		if (ret)
			break;
		if ((x.kind == EK_EXTENT_PLAIN || x.kind == EK_EXTENT_COMPRESSED) &&
		    !x.in_metadata && x.physical_length &&
		    add_range(l, x.physical / l->blksz,
			      (x.physical + x.physical_length - 1) / l->blksz))
			ret = cli_fail(err, -ENOMEM, "out of memory");
		offset = x.logical + x.length;
	}
	if (ret || !l->nranges)
		return ret;
	if (e->path[strcspn(e->path, " \t\n\r\v\f")])
		return cli_fail(err, -EINVAL, "%s: a name with white space, which a block list "
				 "cannot hold (its lines are split at blanks)", e->path);
	print_ranges(l, e->path);
	return 0;
}

/* "/system": the mount point, one '/' in front, none behind. */
static char *list_prefix(const char *mount_point)
{
	size_t len;
	char *out;

	mount_point += strspn(mount_point, "/");
	len = strlen(mount_point);
	while (len && mount_point[len - 1] == '/')
		len--;
	if (asprintf(&out, "%s%.*s", len ? "/" : "", (int)len, mount_point) < 0)
		return NULL;
	return out;
}

/* The list into a temporary file beside out, renamed over it when whole. */
static int write_list(ek_image *img, const char *prefix, const char *out, ek_error *err)
{
	struct lister l = { 0 };
	ek_super_info sb;
	char *tmp = NULL;
	mode_t mask;
	int fd, ret;

	ek_get_super_info(img, &sb);
	l.blksz = sb.block_size;
	if (asprintf(&tmp, "%s.XXXXXX", out) < 0)
		return cli_fail(err, -ENOMEM, "out of memory");
	fd = mkstemp(tmp);
	if (fd < 0 || !(l.out = fdopen(fd, "w"))) {
		ret = cli_fail(err, -errno, "%s: cannot write it: %s", out, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return ret;
	}
	ret = image_walk(img, prefix, list_entry, &l, err);
	mask = umask(0);
	umask(mask);    /* as a file the user made: 0666 less the umask */
	if (!ret && (fchmod(fileno(l.out), 0666 & ~mask) || ferror(l.out) || fflush(l.out)))
		ret = cli_fail(err, -errno, "%s: cannot write it: %s", out, strerror(errno));
	if (fclose(l.out) && !ret)
		ret = cli_fail(err, -errno, "%s: cannot write it: %s", out, strerror(errno));
	if (!ret && rename(tmp, out) < 0)
		ret = cli_fail(err, -errno, "%s: cannot write it: %s", out, strerror(errno));
	if (ret)
		unlink(tmp);
	free(tmp);
	free(l.ranges);
	return ret;
}

int write_block_list(const char *image, uint64_t offset, const char *mount_point,
		     const char *out, ek_error *err)
{
	char *prefix = list_prefix(mount_point ? mount_point : "");
	ek_open_options oo;
	ek_image *img;
	int ret;

	if (!prefix)
		return cli_fail(err, -ENOMEM, "out of memory");
	ek_open_options_init(&oo);
	oo.offset = offset;
	ret = ek_open(image, &oo, &img, err);
	if (!ret) {
		ret = write_list(img, prefix, out, err);
		ek_close(img);
	}
	free(prefix);
	return ret;
}
