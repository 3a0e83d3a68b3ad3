/*
 * ek_build(): scan -> plan xattrs and inode forms -> write file data ->
 * place metadata -> write metadata and superblock -> rename.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

/*
 * The superblock epoch is the mtime every compact inode shows.  With -T or
 * SOURCE_DATE_EPOCH it is that time; otherwise the most common mtime of the
 * tree (earliest on ties), so that as many inodes as possible are compact.
 */
static int choose_epoch(struct build *b)
{
	struct mtime_count *t, best = { 0, 0 };
	uint64_t i, run, best_run = 0, k = 0;
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
	qsort(t, k, sizeof(*t), cmp_mtime);
	for (i = 0; i < k; i += run) {
		run = 1;
		while (i + run < k && !cmp_mtime(&t[i], &t[i + run]))
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

/* Compact 32-byte cores where everything fits and the mtime is the epoch. */
static void choose_inode_forms(struct build *b)
{
	struct tnode *n;

	for (n = b->tree.first; n; n = n->next) {
		uint64_t size = S_ISLNK(n->mode) || S_ISREG(n->mode) ? n->size : 0;

		n->extended = size > UINT32_MAX || n->uid > 0xFFFF ||
			      n->gid > 0xFFFF || n->nlink > 0xFFFF ||
			      n->mtime != b->epoch || n->mtime_nsec != b->fixed_nsec;
		/* Directory sizes are known only later; they stay far below
		 * 4 GiB in practice, and layout checks it. */
	}
}

static void count(struct build *b)
{
	struct tnode *n;

	for (n = b->tree.first; n; n = n->next) {
		if (S_ISREG(n->mode)) {
			b->stats->regular_files++;
			b->bytes_total += n->size;
		} else if (S_ISDIR(n->mode)) {
			b->stats->directories++;
		}
		if (S_ISLNK(n->mode) || S_ISREG(n->mode))
			b->stats->input_bytes += n->size;
	}
	b->stats->files = b->tree.ninodes;
}

int ek_build(const char *image_path, const char *source_dir,
	     const ek_build_options *opts, ek_build_stats *stats,
	     ek_error *err)
{
	struct build b;
	ek_build_stats local;
	struct timespec t0, t1;
	uint64_t head;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&b, 0, sizeof(b));
	if (opts)
		b.o = *opts;
	else
		ek_build_options_init(&b.o);
	b.stats = stats ? stats : &local;
	memset(b.stats, 0, sizeof(*b.stats));
	b.err = err;
	b.source = source_dir;
	b.feature_compat = EROFS_COMPAT_SB_CHKSUM | EROFS_COMPAT_MTIME;

	ret = build_check_options(&b);
	if (!ret)
		ret = zbuild_setup(&b);
	if (!ret)
		ret = scan_source(&b);
	if (!ret)
		ret = plan_xattrs(&b);
	if (!ret)
		ret = choose_epoch(&b);
	if (ret)
		goto out;
	choose_inode_forms(&b);
	count(&b);
	ret = dedupe_plan(&b);
	if (ret)
		goto out;

	/* Data starts after the block holding the superblock and the
	 * compression configuration records. */
	head = EROFS_SUPER_OFFSET + EROFS_SUPER_BASE_SIZE + b.sb_tail_size;
	b.first_data_blk = div_round_up_u64(head, b.blksz);
	ret = writer_open(image_path, &b.w, err);
	if (!ret && b.lay.fragments != EK_FRAGMENTS_OFF)
		ret = packed_open(&b, image_path);
	if (!ret)
		ret = b.z ? zbuild_write_all(&b) : write_data(&b);
	if (!ret)
		ret = layout_metadata(&b);
	if (!ret)
		ret = write_metadata(&b);
	if (!ret) {
		b.stats->image_bytes = b.end_blk << b.blkszbits;
		ret = writer_commit(b.w, b.stats->image_bytes, err);
		b.w = NULL;
	}
out:
	writer_abort(b.w);
	zbuild_teardown(&b);
	packed_close(&b);
	digtab_free(&b.pclusters);
	dedupe_free(&b);
	hardlinks_free(b.links);
	tree_free(&b.tree);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	b.stats->seconds = (double)(t1.tv_sec - t0.tv_sec) +
			   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return ret;
}
