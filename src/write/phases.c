/*
 * The phases every source of a build goes through (a directory, build.c;
 * a tar stream, tar.c): set up, open the image, close it with its
 * metadata, clean up; and the form an inode's core takes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "write/internal.h"
#include "format/inode.h"
#include "format/ondisk.h"
#include "util/error.h"
#include "write/compress.h"
#include "write/dedupe.h"
#include "write/fragments.h"
#include "write/hints.h"
#include "write/tails.h"

/* Whether a compact core shows n's mtime: the epoch's own, or on a 48-bit
 * image any second of the 2^32 after it (with the epoch's nanoseconds). */
static bool compact_mtime_fits(const struct build *b, const struct tnode *n)
{
	if (n->mtime_nsec != b->fixed_nsec)
		return false;
	if (!b->o.format_48bit)
		return n->mtime == b->epoch;
	return n->mtime >= b->epoch && (uint64_t)(n->mtime - b->epoch) <= UINT32_MAX;
}

/* What keeps n from a compact core but its mtime, or NULL. */
static const char *compact_misfit(const struct tnode *n)
{
	uint64_t size = S_ISLNK(n->mode) || S_ISREG(n->mode) ? n->size : 0;

	/* Directory sizes are known only later; they stay far below 4 GiB
	 * in practice, and layout checks it. */
	if (size > UINT32_MAX)
		return "a size over 4 GiB";
	if (n->uid > 0xFFFF || n->gid > 0xFFFF)
		return "an owner or group over 65535";
	if (n->nlink > 0xFFFF)
		return "more than 65535 links";
	return NULL;
}

/* --ignore-mtime: the mtime nearest n's that a compact core shows. */
static void give_way_to_epoch(const struct build *b, struct tnode *n)
{
	if (!b->o.format_48bit || n->mtime < b->epoch ||
	    (uint64_t)(n->mtime - b->epoch) > UINT32_MAX)
		n->mtime = b->epoch;
	n->mtime_nsec = b->fixed_nsec;
}

/* A compact 32-byte core where everything fits, or as the options say. */
int choose_inode_form(struct build *b, struct tnode *n)
{
	const char *misfit = compact_misfit(n);
	bool mtime_fits;

	if (b->o.inode_form == EK_INODES_EXTENDED) {
		n->extended = true;
		return 0;
	}
	if (misfit && b->o.inode_form == EK_INODES_COMPACT)
		return err_fail(b->err, -EOVERFLOW,
				"%s%s (owner %u:%u): %s, which a compact inode cannot hold (-Eforce-inode-compact)",
				n->src_path ? "" : "a ",
				n->src_path ? n->src_path : fmt_ftype_name(fmt_ftype_of_mode(n->mode)),
				n->uid, n->gid, misfit);
	mtime_fits = compact_mtime_fits(b, n);
	if (!misfit && !mtime_fits && b->o.ignore_mtime) {
		give_way_to_epoch(b, n);
		mtime_fits = true;
	}
	n->extended = misfit || !mtime_fits;
	return 0;
}

void build_count(struct build *b)
{
	struct tnode *n;

	for (n = b->tree.first; n; n = n->next) {
		if (n == b->packed_inode)   /* there already when data streams */
			continue;
		if (S_ISREG(n->mode)) {
			b->stats->regular_files++;
			b->bytes_total += n->size;
		} else if (S_ISDIR(n->mode)) {
			b->stats->directories++;
		}
		if (S_ISLNK(n->mode) || S_ISREG(n->mode))
			b->stats->input_bytes += n->size;
	}
	b->stats->files = b->tree.ninodes;   /* a packed inode made later counts itself */
}

void build_init(struct build *b, const ek_build_options *opts, ek_build_stats *stats,
		ek_build_stats *local, ek_error *err)
{
	clock_gettime(CLOCK_MONOTONIC, &b->started);
	if (opts)
		b->o = *opts;
	else
		ek_build_options_init(&b->o);
	b->stats = stats ? stats : local;
	memset(b->stats, 0, sizeof(*b->stats));
	b->err = err;
	b->spool_fd = -1;
	b->tails_fd = -1;
	b->feature_compat = EROFS_COMPAT_MTIME;
	if (!b->o.no_sb_checksum)
		b->feature_compat |= EROFS_COMPAT_SB_CHKSUM;
}

int build_open_image(struct build *b, const char *image_path)
{
	/* Data starts after the block holding the superblock and the
	 * compression configuration records. */
	uint64_t head = EROFS_SUPER_OFFSET + build_super_size(b) + b->sb_tail_size;
	int ret;

	/* The one extra device's slot follows them: --blobdev's blob, or
	 * the tar that --tar=i's image points into. */
	if (b->o.blob_path || b->o.tar_index) {
		b->devt_off = (uint32_t)round_up_u64(head, EROFS_DEVICE_SLOT_SIZE);
		head = b->devt_off + EROFS_DEVICE_SLOT_SIZE;
	}
	/* The long xattr prefixes' table, where it is not in the packed
	 * inode: after them, where no metadata moves it. */
	if (b->nprefixes && !prefixes_in_packed(b)) {
		b->prefix_off = (uint32_t)round_up_u64(head, 4);
		head = b->prefix_off + b->prefix_table_size;
		b->feature_compat |= EROFS_COMPAT_PLAIN_XATTR_PFX;
	}
	b->first_data_blk = div_round_up_u64(head, b->blksz);
	b->data_blk = b->first_data_blk;
	b->image_path = image_path;
	ret = writer_open(image_path, &b->w, b->err);
	if (!ret) {
		writer_shift(b->w, b->o.image_offset);
		writer_watch(b->w, b->o.cancel);
		if (b->o.before_commit)
			writer_before_rename(b->w, b->o.before_commit, b->o.before_commit_ctx);
	}
	if (!ret && b->o.blob_path && !strcmp(b->o.blob_path, image_path))
		ret = err_fail(b->err, -EINVAL, "--blobdev %s: the image itself", image_path);
	if (!ret && b->o.blob_path) {
		ret = writer_open(b->o.blob_path, &b->blob, b->err);
		if (ret)
			err_prefix(b->err, "--blobdev %s: ", b->o.blob_path);
		else
			writer_watch(b->blob, b->o.cancel);
	}
	if (!ret && b->lay.fragments != EK_FRAGMENTS_OFF)
		ret = packed_open(b, image_path);
	/* Else at the packed data's start (xattr_prefix_start 0): its first
	 * bytes, which make the packed inode, fragments or none. */
	if (!ret && prefixes_in_packed(b)) {
		uint64_t at;

		ret = packed_append(b, b->prefix_table, b->prefix_table_size, false, NULL, &at);
		if (ret)
			ret = err_fail(b->err, ret, "out of memory");
	}
	return ret;
}

/* Tar index mode: the tar follows the image, so its files' data sits at
 * the image's end plus their offsets in the tar (512-byte blocks). */
static int place_indexed(struct build *b)
{
	struct tnode *n;

	for (n = b->tree.first; n; n = n->next) {
		if (!n->indexed)
			continue;
		n->startblk = b->end_blk + (n->tar_off >> b->blkszbits);
		n->nblocks = div_round_up_u64(n->size, b->blksz);
		if (n->startblk + n->nblocks - b->end_blk > b->index_blocks)
			b->index_blocks = n->startblk + n->nblocks - b->end_blk;
		if (n->nblocks && n->startblk + n->nblocks > UINT32_MAX)
			return err_fail(b->err, -EFBIG, "%s: past 2^32 blocks of %u bytes",
				       n->src_path, b->blksz);
	}
	return 0;
}

int build_close_image(struct build *b)
{
	int ret = layout_metadata(b);

	if (!ret && b->o.tar_index)
		ret = place_indexed(b);
	/* Its slot holds both in 32 bits (the kernel reads no more). */
	if (!ret && b->blob && (b->blob_blk > UINT32_MAX || b->end_blk > UINT32_MAX))
		ret = err_fail(b->err, -EFBIG, "--blobdev: the %s exceeds 2^32 blocks of %u bytes",
			       b->blob_blk > UINT32_MAX ? "blob" : "image", b->blksz);
	if (!ret)
		ret = write_metadata(b);
	/* The blob first: an image never names a blob not yet there. */
	if (!ret && b->blob) {
		b->stats->blob_bytes = b->blob_blk << b->blkszbits;
		ret = writer_commit(b->blob, b->stats->blob_bytes, b->err);
		b->blob = NULL;
		if (ret)
			err_prefix(b->err, "--blobdev %s: ", b->o.blob_path);
	}
	if (!ret) {
		b->stats->image_bytes = b->end_blk << b->blkszbits;
		ret = writer_commit(b->w, b->stats->image_bytes, b->err);
		b->w = NULL;
	}
	return ret;
}

void build_cleanup(struct build *b)
{
	struct timespec t1;

	writer_abort(b->w);
	writer_abort(b->blob);
	zbuild_teardown(b);
	packed_close(b);
	tails_close(b);
	free(b->copy_buf);
	b->copy_buf = NULL;
	digtab_free(&b->pclusters);
	dedupe_free(b);
	tree_free(&b->tree);
	hints_close(b->hints);
	b->hints = NULL;
	path_rules_close(b);
	prefixes_close(b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	b->stats->seconds = (double)(t1.tv_sec - b->started.tv_sec) +
			    (double)(t1.tv_nsec - b->started.tv_nsec) / 1e9;
}

