/* Opening an image: superblock, configuration records, devices, special
 * inodes, and the checks the kernel makes at mount time. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "codec/engine.h"
#include "read/badmemo.h"
#include "read/cache.h"
#include "read/readahead.h"
#include "read/internal.h"
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

int image_read(ek_image *img, uint64_t off, void *buf, size_t len,
	       ek_error *err)
{
	int ret;

	if (off > img->size || len > img->size - off)
		return err_fail(err, -EUCLEAN,
			       "read of %zu bytes at offset %llu is past the end of the %llu-byte image",
			       len, (unsigned long long)off,
			       (unsigned long long)img->size);
	ret = img->io->ops->read(img->io, buf, len, off);
	if (ret)
		return err_fail(err, ret, "reading %zu bytes at image offset %llu: %s",
			       len, (unsigned long long)off, ek_strerror(ret));
	return 0;
}

/*
 * Metadata (inodes, xattrs, directories, indexes) is read in many small
 * pieces, again and again: it goes through a cache of 4 KiB blocks, so that
 * a walk costs one read per block rather than one per field.
 */
#define META_BLOCK 4096u
#define METACACHE_BYTES (16u << 20)
#define META_KEY UINT64_MAX   /* cache key space apart from inodes */

static int cached_meta_read(ek_image *img, uint64_t off, uint8_t *buf,
			    size_t len, ek_error *err)
{
	if (off > img->size || len > img->size - off)
		return image_read(img, off, buf, len, err);   /* reports it */
	while (len > 0) {
		uint64_t blk = off / META_BLOCK, start = blk * META_BLOCK;
		size_t within = (size_t)(off - start);
		size_t n = len < META_BLOCK - within ? len : META_BLOCK - within;
		struct ek_cache_entry *e = ek_cache_get(img->metacache, META_KEY, blk);

		if (!e) {
			size_t avail = img->size - start < META_BLOCK ?
				       (size_t)(img->size - start) : META_BLOCK;
			int ret;

			e = ek_cache_alloc(img->metacache, META_BLOCK);
			if (!e)
				return image_read(img, off, buf, len, err);
			ret = image_read(img, start, e->data, avail, err);
			if (ret) {
				ek_cache_put(img->metacache, e);
				return ret;
			}
			memset(e->data + avail, 0, META_BLOCK - avail);
			ek_cache_insert(img->metacache, e, META_KEY, blk);
		}
		memcpy(buf, e->data + within, n);
		ek_cache_put(img->metacache, e);
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

int meta_read(ek_image *img, bool in_metabox, uint64_t off, void *buf,
	      size_t len, ek_error *err)
{
	if (!in_metabox)
		return img->metacache ? cached_meta_read(img, off, buf, len, err)
				      : image_read(img, off, buf, len, err);
	if (off > img->metabox_size || len > img->metabox_size - off)
		return err_fail(err, -EUCLEAN,
			       "metadata at offset %llu (+%zu) is past the end of the %llu-byte metabox",
			       (unsigned long long)off, len,
			       (unsigned long long)img->metabox_size);
	memcpy(buf, img->metabox + off, len);
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

static int load_devices(ek_image *img, ek_error *err)
{
	struct fmt_super *sb = &img->sb;
	unsigned int i;

	/* The bit doubles as COMPR_HEAD2; zero extra devices is valid. */
	if (!(sb->feature_incompat & EROFS_INCOMPAT_DEVICE_TABLE) ||
	    !sb->extra_devices)
		return 0;
	img->devices = calloc(sb->extra_devices, sizeof(*img->devices));
	if (!img->devices)
		return err_fail(err, -ENOMEM, "out of memory");
	for (i = 0; i < sb->extra_devices; i++) {
		uint8_t slot[EROFS_DEVICE_SLOT_SIZE];
		uint64_t off = ((uint64_t)sb->devt_slotoff + i) * EROFS_DEVICE_SLOT_SIZE;
		int ret = image_read(img, off, slot, sizeof(slot), err);

		if (ret) {
			err_prefix(err, "device table slot %u: ", i);
			return ret;
		}
		img->devices[i].blocks = get_le32(slot + 64);
		img->devices[i].uniaddr = get_le32(slot + 68);
	}
	img->ndevices = sb->extra_devices;
	return 0;
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
	return fragment_cache_create(img, err);
}

static int open_common(struct ek_io *io, const ek_open_options *opts,
		       ek_image **out, ek_error *err)
{
	uint8_t head[FMT_SUPER_READ_SIZE];
	size_t headlen;
	ek_image *img;
	ek_inode *root;
	fmt_why why;
	int ret;

	img = calloc(1, sizeof(*img));
	if (!img) {
		ek_io_close(io);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	img->io = io;
	img->size = io->size;
	ctxpool_init(&img->zbufs, zbuf_new, zbuf_free);
	img->bad = badmemo_create();
	/* Best effort: without it metadata is read straight from the image. */
	ek_cache_create(METACACHE_BYTES, 256u << 10, &img->metacache, NULL);
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
		err_fail(err, ret, "reading the superblock: %s", ek_strerror(ret));
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
		ret = load_devices(img, err);
	if (!ret)
		ret = create_engine(img, err);
	if (!ret)
		ret = load_metabox(img, err);
	if (!ret)
		ret = load_packed(img, err);
	if (ret)
		goto fail;
	if (img->opts.cache_bytes) {
		/* a shard must hold the biggest decoded extents */
		ret = ek_cache_create(img->opts.cache_bytes, 16u << 20, &img->cache, err);
		if (ret)
			goto fail;
		if (img->opts.readahead && img->workers > 1) {
			ret = readahead_create(img, &img->readahead, err);
			if (ret)
				goto fail;
		}
	}

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
	struct ek_io *io;
	int ret;

	if (opts && opts->io == EK_IO_URING)
		ret = ek_io_open_uring(path, &io, err);
	else
		ret = ek_io_open_pread(path, &io, err);
	if (ret)
		return ret;
	ret = open_common(io, opts, out, err);
	if (ret && err)
		err_prefix(err, "%s: ", path);
	return ret;
}

int ek_open_memory(const void *data, size_t size, const ek_open_options *opts,
		   ek_image **out, ek_error *err)
{
	struct ek_io *io;
	int ret = ek_io_open_memory(data, size, &io, err);

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
	badmemo_destroy(img->bad);
	ek_cache_destroy(img->metacache);
	ek_cache_destroy(img->cache);
	if (img->packed)
		ek_inode_put(img->packed);
	fragment_cache_free(img->fragments);
	for (i = 0; i < img->nprefixes; i++)
		free(img->prefixes[i].infix);
	free(img->prefixes);
	free(img->devices);
	free(img->metabox);
	engine_destroy(img->engine);
	ctxpool_fini(&img->zbufs);
	ek_io_close(img->io);
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
	o->image_size = img->size;
}

unsigned int ek_image_workers(const ek_image *img)
{
	return img->workers;
}

ek_nid ek_root_nid(const ek_image *img)
{
	return img->sb.root_nid;
}

static const struct {
	uint32_t bit;
	const char *name;
} compat_names[] = {
	{ EROFS_COMPAT_SB_CHKSUM, "sb_csum" },
	{ EROFS_COMPAT_MTIME, "mtime" },
	{ EROFS_COMPAT_XATTR_FILTER, "xattr_filter" },
	{ EROFS_COMPAT_SHARED_EA_IN_METABOX, "shared_ea_in_metabox" },
	{ EROFS_COMPAT_PLAIN_XATTR_PFX, "plain_xattr_pfx" },
	{ EROFS_COMPAT_ISHARE_XATTRS, "ishare_xattrs" },
}, incompat_names[] = {
	{ EROFS_INCOMPAT_ZERO_PADDING, "0padding" },
	{ EROFS_INCOMPAT_COMPR_CFGS, "compr_cfgs/big_pcluster" },
	{ EROFS_INCOMPAT_CHUNKED_FILE, "chunked_file" },
	{ EROFS_INCOMPAT_DEVICE_TABLE, "device_table" },
	{ EROFS_INCOMPAT_ZTAILPACKING, "ztailpacking" },
	{ EROFS_INCOMPAT_FRAGMENTS, "fragments/dedupe" },
	{ EROFS_INCOMPAT_XATTR_PREFIXES, "xattr_prefixes" },
	{ EROFS_INCOMPAT_48BIT, "48bit" },
	{ EROFS_INCOMPAT_METABOX, "metabox" },
};

void ek_feature_names(const ek_super_info *sb, char *buf, size_t size)
{
	size_t used = 0, i;

	if (size)
		buf[0] = '\0';
	for (i = 0; i < sizeof(compat_names) / sizeof(compat_names[0]); i++)
		if ((sb->feature_compat & compat_names[i].bit) && used < size)
			used += (size_t)snprintf(buf + used, size - used, "%s%s",
						 used ? "," : "", compat_names[i].name);
	for (i = 0; i < sizeof(incompat_names) / sizeof(incompat_names[0]); i++)
		if ((sb->feature_incompat & incompat_names[i].bit) && used < size)
			used += (size_t)snprintf(buf + used, size - used, "%s%s",
						 used ? "," : "", incompat_names[i].name);
}
