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
#include "format/ondisk.h"
#include "format/super.h"
#include "util/error.h"

void ek_build_options_init(ek_build_options *o)
{
	memset(o, 0, sizeof(*o));
	o->block_size = 4096;
	o->force_uid = -1;
	o->force_gid = -1;
	o->compressor = EK_COMPRESS_NONE;
	o->level = -1;
}

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

/* Every option's meaning is checked here, so that a caller of the library
 * gets the same answers as the tool. */
static int check_compression(const ek_build_options *o, uint32_t bs, ek_error *err)
{
	const struct codec *c = codec_get(o->compressor);
	uint32_t pc = o->pcluster_size;

	if (!c) {
		if (o->compressor != EK_COMPRESS_NONE)
			return err_fail(err, -EINVAL, "unknown compressor %d", (int)o->compressor);
		if (pc)
			return err_fail(err, -EINVAL,
					"a cluster size sets the compressed cluster: it needs a compressor");
		return 0;
	}
	if (o->level >= 0 && !codec_level_valid(c, o->level))
		return err_fail(err, -EINVAL, "level %d is out of range for %s", o->level, c->name);
	if (o->dict_size && (o->dict_size < c->dict_min || o->dict_size > c->dict_max))
		return err_fail(err, -EINVAL, "dictionary of %u bytes: %s takes %u to %u",
				o->dict_size, c->name, c->dict_min, c->dict_max);
	if (pc && (pc % bs || pc > EROFS_MAX_PCLUSTER_BYTES || pc / bs > Z_CBLKCNT_MASK))
		return err_fail(err, -EINVAL,
				"cluster size %u is not a multiple of the %u-byte block up to 1 MiB (%u blocks at most)",
				pc, bs, Z_CBLKCNT_MASK);
	return 0;
}

static int check_options(struct build *b)
{
	uint32_t bs = b->o.block_size;
	int ret;

	if (bs < 512 || bs > 4096 || (bs & (bs - 1)))
		return err_fail(b->err, -EINVAL,
			       "block size %u is not a power of two in 512..4096", bs);
	b->blksz = bs;
	b->blkszbits = (unsigned int)__builtin_ctz(bs);
	if (strnlen(b->o.label, sizeof(b->o.label)) > 15)
		return err_fail(b->err, -EINVAL, "volume label longer than 15 bytes");
	ret = check_compression(&b->o, bs, b->err);
	if (!ret)
		ret = pool_resolve_workers(b->o.workers, &b->workers, b->err);
	return ret;
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

	ret = check_options(&b);
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

	/* Data starts after the block holding the superblock and the
	 * compression configuration records. */
	head = EROFS_SUPER_OFFSET + EROFS_SUPER_BASE_SIZE + b.sb_tail_size;
	b.first_data_blk = div_round_up_u64(head, b.blksz);
	ret = writer_open(image_path, &b.w, err);
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
	hardlinks_free(b.links);
	tree_free(&b.tree);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	b.stats->seconds = (double)(t1.tv_sec - t0.tv_sec) +
			   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return ret;
}
