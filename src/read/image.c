/* Opening an image: superblock, configuration records, devices, special
 * inodes, and the checks the kernel makes at mount time. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "codec/engine.h"
#include "read/badextents.h"
#include "read/blocks.h"
#include "read/cache.h"
#include "read/data.h"
#include "read/fragment.h"
#include "read/internal.h"
#include "read/readahead.h"
#include "read/devices.h"
#include "read/backend.h"
#include "read/zcache.h"
#include "read/zdecode.h"
#include "util/pool.h"

void ek_open_options_init(ek_open_options *o)
{
	memset(o, 0, sizeof(*o));
	o->io = EK_IO_PREAD;
}

int ek_open_options_set_engine(ek_open_options *o, const char *name, ek_error *err)
{
	unsigned int algorithm;
	const struct decoder *d;
	int ret = decoder_lookup(name, &algorithm, &d, err);

	if (ret)
		return ret;
	/* The static spelling: the caller's string need not outlive o. */
	if (algorithm == EROFS_ALG_LZMA)
		o->lzma_engine = d->name;
	else if (algorithm == EROFS_ALG_DEFLATE)
		o->deflate_engine = d->name;
	/* Algorithms with one decoder have nothing to choose. */
	return 0;
}

static int load_compr_configs(ek_image *img, ek_error *err)
{
	struct fmt_super *sb = &img->sb;
	uint64_t off = EROFS_SUPER_OFFSET + sb->sb_size;
	struct fmt_zconfig cfg = {
		.lz4_max_distance = 0,
		.lz4_max_pclusterblks = 1,
		.lzma_dict_size = 0,
		.deflate_windowbits = 15,
		.zstd_windowlog = 20,
	};
	unsigned int alg;
	fmt_why why;

	if (!(sb->feature_incompat & EROFS_INCOMPAT_COMPR_CFGS)) {
		/* Only LZ4 exists; offset 84 is its maximum distance. */
		img->algorithms = 1u << EROFS_ALG_LZ4;
		cfg.lz4_max_distance = sb->u1;
		goto done;
	}
	img->algorithms = sb->u1;
	if (img->algorithms & ~((1u << EROFS_ALG_MAX) - 1))
		return err_fail(err, -EOPNOTSUPP,
			       "superblock: unknown compression algorithms in bitmap 0x%x",
			       img->algorithms);
	for (alg = 0; alg < EROFS_ALG_MAX; alg++) {
		uint8_t rec[2 + 65536];
		size_t len;
		int ret;

		if (!(img->algorithms & (1u << alg)))
			continue;
		off = round_up_u64(off, 4);
		ret = image_read(img, off, rec, 2, err);
		if (ret)
			return ret;
		len = get_le16(rec);
		if (len == 0)
			len = 65536;
		ret = image_read(img, off + 2, rec + 2, len, err);
		if (ret)
			return ret;
		ret = fmt_zconfig_decode(alg, rec + 2, len, img->blksz, &cfg, &why);
		if (ret)
			return err_fail(err, ret, "superblock: %s", why.text);
		off += 2 + len;
	}
done:
	img->zcfg.lz4_max_distance = cfg.lz4_max_distance;
	img->zcfg.lz4_max_pclusterblks = cfg.lz4_max_pclusterblks;
	img->zcfg.lzma_dict_size = cfg.lzma_dict_size;
	img->zcfg.deflate_windowbits = cfg.deflate_windowbits;
	img->zcfg.zstd_windowlog = cfg.zstd_windowlog;
	return 0;
}

static int create_engine(ek_image *img, ek_error *err)
{
	const char *names[EROFS_ALG_MAX] = {
		[EROFS_ALG_DEFLATE] = img->opts.deflate_engine,
		[EROFS_ALG_LZMA] = img->opts.lzma_engine,
	};
	struct decoder_choice decoders;
	struct engine *sw;
	int ret = decoder_choose(names, &decoders, err);

	if (!ret)
		ret = engine_software_create(&decoders, &sw, err);
	if (ret)
		return ret;
	sw->params.lzma_dict_size = img->zcfg.lzma_dict_size;
	sw->params.zstd_window_log_max = img->zcfg.zstd_windowlog;
	/* Only reads through the cache decode in batches, on background
	 * threads; every other read decodes in its own thread. */
	if (img->workers <= 1 || !img->opts.cache_bytes) {
		img->engine = sw;
		return 0;
	}
	ret = engine_pool_create(sw, img->workers, &img->engine, err);
	if (ret)
		engine_destroy(sw);
	return ret;
}

static int load_metabox(ek_image *img, ek_error *err)
{
	ek_inode *mb;
	int ret;

	if (!(img->sb.feature_incompat & EROFS_INCOMPAT_METABOX))
		return 0;
	ret = inode_load(img, img->sb.metabox_nid, &mb, err);
	if (ret) {
		err_prefix(err, "metabox inode: ");
		return ret;
	}
	/* Metadata is read many times: keep the decoded form in memory.
	 * A metabox can never decode to more than 12 MiB per extent and the
	 * whole image bounds the extent count; cap it anyway. */
	if (!S_ISREG(mb->st.mode) || mb->st.size > (1ull << 32)) {
		ek_inode_put(mb);
		return err_fail(err, -EUCLEAN, "metabox inode %llu: not a regular file of sane size",
			       (unsigned long long)img->sb.metabox_nid);
	}
	img->metabox_size = mb->st.size;
	img->metabox = malloc(img->metabox_size ? img->metabox_size : 1);
	if (!img->metabox) {
		ek_inode_put(mb);
		return err_fail(err, -ENOMEM, "out of memory for a %llu-byte metabox",
			       (unsigned long long)img->metabox_size);
	}
	ret = data_read(mb, img->metabox, img->metabox_size, 0, err);
	ek_inode_put(mb);
	if (ret)
		err_prefix(err, "metabox: ");
	return ret;
}

static int load_packed(ek_image *img, ek_error *err)
{
	int ret;

	if (!(img->sb.feature_incompat & EROFS_INCOMPAT_FRAGMENTS) ||
	    !img->sb.packed_nid)
		return 0;
	ret = inode_load(img, img->sb.packed_nid, &img->packed, err);
	if (ret) {
		err_prefix(err, "packed inode: ");
		return ret;
	}
	/* Its type is checked where fragments are read: the kernel mounts
	 * images whatever it is. */
	return fragment_setup(img, err);
}

static int open_common(struct io *io, const ek_open_options *opts,
		       ek_image **out, ek_error *err)
{
	uint8_t head[FMT_SUPER_READ_SIZE];
	size_t headlen;
	ek_image *img;
	ek_inode *root;
	fmt_why why;
	int ret;

	if (opts && opts->offset) {
		struct io *window;

		ret = io_open_window(io, opts->offset, &window, err);
		if (ret) {
			io_close(io);
			return ret;
		}
		io = window;
	}
	img = calloc(1, sizeof(*img));
	if (!img) {
		io_close(io);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	img->io = io;
	img->size = io->size;
	img->file_size = io->size;
	ctxpool_init(&img->zbufs, zbuf_new, zbuf_free);
	ctxpool_init(&img->batches, zcache_batch_new, zcache_batch_free);
	img->bad = bad_extents_create();
	/* Best effort: without it metadata is read straight from the image. */
	cache_create(BLOCKS_METACACHE_BYTES, 256u << 10, &img->metacache, NULL);
	if (opts)
		img->opts = *opts;
	else
		ek_open_options_init(&img->opts);

	ret = pool_resolve_workers(img->opts.workers, &img->workers, err);
	if (ret)
		goto fail;
	headlen = img->size < sizeof(head) ? (size_t)img->size : sizeof(head);
	ret = io->ops->read(io, head, headlen, 0);
	if (ret) {
		err_fail(err, ret, "reading the superblock: %s", io_strerror(io, ret));
		goto fail;
	}
	ret = fmt_super_decode(head, headlen, &img->sb, &why);
	if (ret) {
		err_fail(err, ret, "superblock: %s", why.text);
		goto fail;
	}
	img->blksz = img->sb.blksz;
	img->blkszbits = img->sb.blkszbits;

	ret = load_compr_configs(img, err);
	if (!ret)
		ret = devices_load(img, err);
	if (!ret)
		ret = create_engine(img, err);
	if (ret)
		goto fail;
	/* Before any inode is loaded: each takes the image's cache. */
	if (img->opts.cache_bytes) {
		/* a shard must hold the biggest decoded extents */
		ret = cache_create(img->opts.cache_bytes, 16u << 20, &img->cache, err);
		if (ret)
			goto fail;
		if (img->opts.readahead && img->workers > 1) {
			ret = readahead_create(img, &img->readahead, err);
			if (ret)
				goto fail;
		}
	}
	ret = load_metabox(img, err);
	if (!ret)
		ret = load_packed(img, err);
	if (ret)
		goto fail;

	ret = inode_load(img, img->sb.root_nid, &root, err);
	if (ret) {
		err_prefix(err, "root inode: ");
		goto fail;
	}
	if (!S_ISDIR(root->st.mode)) {
		ek_inode_put(root);
		ret = err_fail(err, -EUCLEAN, "root inode %llu is not a directory",
			      (unsigned long long)img->sb.root_nid);
		goto fail;
	}
	ek_inode_put(root);

	ret = xattr_load_prefixes(img, err);
	if (ret)
		goto fail;
	*out = img;
	return 0;
fail:
	ek_close(img);
	return ret;
}

int ek_open(const char *path, const ek_open_options *opts, ek_image **out,
	    ek_error *err)
{
	ek_open_options budgeted;
	/* O_DIRECT leaves the image out of the page cache; random readers
	 * then wait on the disk unless we hold its blocks.  Half the cache
	 * budget goes to them (stage.c says why), so memory stays within the
	 * budget the caller set. */
	uint64_t borrow = opts ? opts->cache_bytes / 2 : 0;
	struct io *io;
	int ret = backend_open(path, opts, &borrow, &io, err);

	if (ret)
		return ret;
	if (borrow) {
		budgeted = *opts;
		budgeted.cache_bytes -= (size_t)borrow;
		opts = &budgeted;
	}
	ret = open_common(io, opts, out, err);
	if (ret && err)
		err_prefix(err, "%s: ", path);
	return ret;
}

int ek_open_memory(const void *data, size_t size, const ek_open_options *opts,
		   ek_image **out, ek_error *err)
{
	struct io *io;
	int ret = io_open_memory(data, size, &io, err);

	if (ret)
		return ret;
	return open_common(io, opts, out, err);
}

void ek_close(ek_image *img)
{
	unsigned int i;

	if (!img)
		return;
	readahead_destroy(img->readahead);
	bad_extents_destroy(img->bad);
	fragment_teardown(img);
	if (img->packed)
		ek_inode_put(img->packed);
	cache_destroy(img->metacache);
	cache_destroy(img->cache);
	for (i = 0; i < img->nprefixes; i++)
		free(img->prefixes[i].infix);
	free(img->prefixes);
	free(img->devices);
	free(img->metabox);
	engine_destroy(img->engine);
	ctxpool_fini(&img->zbufs);
	ctxpool_fini(&img->batches);
	io_close(img->io);
	free(img);
}

void ek_get_super_info(const ek_image *img, ek_super_info *o)
{
	const struct fmt_super *sb = &img->sb;

	memset(o, 0, sizeof(*o));
	o->block_size = img->blksz;
	o->feature_compat = sb->feature_compat;
	o->feature_incompat = sb->feature_incompat;
	o->checksum = sb->checksum;
	o->checksum_present = !!(sb->feature_compat & EROFS_COMPAT_SB_CHKSUM);
	o->root_nid = sb->root_nid;
	o->inodes = sb->inos;
	o->epoch = sb->epoch;
	o->fixed_nsec = sb->fixed_nsec;
	o->blocks = sb->blocks;
	o->meta_blkaddr = sb->meta_blkaddr;
	o->xattr_blkaddr = sb->xattr_blkaddr;
	memcpy(o->uuid, sb->uuid, 16);
	memcpy(o->volume_name, sb->volume_name, 16);
	o->volume_name[16] = '\0';
	o->compr_algs = img->algorithms;
	o->compressed = !!(sb->feature_incompat & (EROFS_INCOMPAT_ZERO_PADDING |
						   EROFS_INCOMPAT_COMPR_CFGS));
	o->lz4_max_distance = img->zcfg.lz4_max_distance;
	o->extra_devices = sb->extra_devices;
	o->xattr_prefix_count = sb->xattr_prefix_count;
	o->packed_nid = (sb->feature_incompat & EROFS_INCOMPAT_FRAGMENTS) ?
			sb->packed_nid : 0;
	o->metabox_nid = (sb->feature_incompat & EROFS_INCOMPAT_METABOX) ?
			 sb->metabox_nid : 0;
	o->image_size = img->file_size;
}

unsigned int ek_image_workers(const ek_image *img)
{
	return img->workers;
}

const char *ek_image_io(const ek_image *img)
{
	return img->io->name;
}

ek_nid ek_root_nid(const ek_image *img)
{
	return img->sb.root_nid;
}
