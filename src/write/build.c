/*
 * ek_build(), a directory source: scan -> plan xattrs and inode forms ->
 * write file data -> place metadata -> write metadata and superblock ->
 * rename (phases.c has the steps every source shares).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "write/imagesource.h"
#include "write/internal.h"
#include "codec/codec.h"
#include "util/pool.h"
#include "write/compress.h"
#include "write/dedupe.h"
#include "write/fragments.h"
#include "format/ondisk.h"
#include "format/super.h"
#include "util/error.h"

struct mtime_count {
	int64_t sec;
	uint32_t nsec;
};

static int cmp_mtime(const void *a, const void *b)
{
	const struct mtime_count *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->nsec < y->nsec ? -1 : (x->nsec > y->nsec);
}

/* Nanoseconds first: a 48-bit image's compact inodes share only those. */
static int cmp_nsec_first(const void *a, const void *b)
{
	const struct mtime_count *x = a, *y = b;

	if (x->nsec != y->nsec)
		return x->nsec < y->nsec ? -1 : 1;
	return x->sec < y->sec ? -1 : (x->sec > y->sec);
}

static bool same_count(const struct mtime_count *x, const struct mtime_count *y,
		       bool nsec_only)
{
	return nsec_only ? x->nsec == y->nsec : !cmp_mtime(x, y);
}

/*
 * The superblock epoch is the mtime every compact inode shows (on a
 * 48-bit image, its base: each compact inode adds its own seconds, and
 * shares its nanoseconds).  With -T or SOURCE_DATE_EPOCH it is that time;
 * otherwise the most common mtime of the tree (earliest on ties), or on a
 * 48-bit image the earliest mtime with the most common nanoseconds, so
 * that as many inodes as possible are compact.
 */
static int choose_epoch(struct build *b)
{
	struct mtime_count *t, best = { 0, 0 };
	uint64_t i, run, best_run = 0, k = 0;
	bool nsec_only = b->o.format_48bit;
	struct tnode *n;

	if (b->o.timestamp_set || b->o.clamp_mtime) {
		b->epoch = b->o.timestamp;
		b->fixed_nsec = 0;
		return 0;
	}
	t = malloc(b->tree.ninodes * sizeof(*t));
	if (!t)
		return err_fail(b->err, -ENOMEM, "out of memory");
	for (n = b->tree.first; n; n = n->next)
		t[k++] = (struct mtime_count){ n->mtime, n->mtime_nsec };
	qsort(t, k, sizeof(*t), nsec_only ? cmp_nsec_first : cmp_mtime);
	for (i = 0; i < k; i += run) {
		run = 1;
		while (i + run < k && same_count(&t[i], &t[i + run], nsec_only))
			run++;
		if (run > best_run) {
			best_run = run;
			best = t[i];
		}
	}
	free(t);
	b->epoch = best.sec;
	b->fixed_nsec = best.nsec;
	return 0;
}

int ek_build(const char *image_path, const char *source_dir,
	     const ek_build_options *opts, ek_build_stats *stats,
	     ek_error *err)
{
	struct build b;
	ek_build_stats local;
	struct tnode *n;
	int ret;

	memset(&b, 0, sizeof(b));
	build_init(&b, opts, stats, &local, err);
	b.source = source_dir;
	/* A directory's whiteouts are files of its own (upstream strips
	 * archives and rebuilt images only); it has no tar to copy. */
	ret = b.o.ovlfs_strip ? err_fail(err, -EINVAL, "--ovlfs-strip takes a tar source") :
	      b.o.tar_copy ? err_fail(err, -EINVAL, "--tar-copy takes a tar source") : 0;
	if (!ret)
		ret = build_check_options(&b);
	if (!ret)
		ret = zbuild_setup(&b);
	if (!ret)
		ret = scan_source(&b, image_path);
	if (!ret)
		ret = plan_xattrs(&b);
	if (!ret)
		ret = choose_epoch(&b);
	if (ret)
		goto out;
	for (n = b.tree.first; n && !ret; n = n->next)
		ret = choose_inode_form(&b, n);
	if (ret)
		goto out;
	build_count(&b);
	ret = dedupe_plan(&b);
	if (!ret)
		ret = build_open_image(&b, image_path);
	if (!ret)
		ret = b.z ? zbuild_write_all(&b) : write_data(&b);
	if (!ret)
		ret = build_close_image(&b);
out:
	hardlinks_free(b.links);
	image_source_close(&b);
	build_cleanup(&b);
	return ret;
}
