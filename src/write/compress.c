/*
 * Compression in the builder: options, the superblock's compression
 * records, and each file's end: its index, or back to an uncompressed
 * layout when compression saved nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write/compress.h"
#include "write/source.h"
#include "write/zinternal.h"
#include "format/ondisk.h"
#include "format/zindex.h"
#include "util/error.h"

/* Files are compressed in independent segments of this much input at
 * least (eight clusters when those are bigger), committed in order.  A
 * segment ends with a partly filled pcluster (about 0.1% of image size at
 * 1 MiB), but a large segment that compresses slowly (lz4hc,12 takes 0.7 s
 * over the 3.7 MB perl binary) keeps the other workers waiting behind it:
 * at 4 MiB, one core idled for a second of a five-second build. */
#define SEGMENT_MIN (1u << 20)

static const struct {
	const char *name;
	enum ek_compressor c;
} compressor_names[] = {
	{ "lz4", EK_COMPRESS_LZ4 },
	{ "lz4hc", EK_COMPRESS_LZ4HC },
	{ "deflate", EK_COMPRESS_DEFLATE },
	{ "libdeflate", EK_COMPRESS_DEFLATE },   /* mkfs.erofs's name for it */
	{ "zstd", EK_COMPRESS_ZSTD },
	{ "lzma", EK_COMPRESS_LZMA },
};

static enum ek_encoder_kind kind_of(enum ek_compressor c)
{
	switch (c) {
	case EK_COMPRESS_LZ4HC: return EK_ENC_LZ4HC;
	case EK_COMPRESS_DEFLATE: return EK_ENC_DEFLATE;
	case EK_COMPRESS_ZSTD: return EK_ENC_ZSTD;
	case EK_COMPRESS_LZMA: return EK_ENC_LZMA;
	default: return EK_ENC_LZ4;
	}
}

static bool level_ok(enum ek_compressor c, int level)
{
	int min, max, def;

	ek_encoder_levels(kind_of(c), &min, &max, &def);
	if (c == EK_COMPRESS_LZMA)
		return (level >= 0 && level <= 9) || (level >= 100 && level <= 109);
	return level >= min && level <= max;
}

int ek_parse_compressor(const char *spec, ek_build_options *o, ek_error *err)
{
	char buf[128], *tok, *save = NULL;
	size_t i;

	if (strlen(spec) >= sizeof(buf))
		return ek_fail(err, -EINVAL, "compressor spec '%s' is too long", spec);
	strcpy(buf, spec);
	tok = strtok_r(buf, ",", &save);
	if (!tok)
		return ek_fail(err, -EINVAL, "empty compressor spec");
	for (i = 0; i < sizeof(compressor_names) / sizeof(compressor_names[0]); i++)
		if (!strcmp(tok, compressor_names[i].name))
			break;
	if (i == sizeof(compressor_names) / sizeof(compressor_names[0]))
		return ek_fail(err, -EINVAL,
			       "unknown compressor '%s' (lz4, lz4hc, deflate, zstd or lzma)", tok);
	o->compressor = compressor_names[i].c;
	o->level = -1;
	while ((tok = strtok_r(NULL, ",", &save))) {
		const char *val = tok;
		char *end;
		long v;

		if (!strncmp(tok, "level=", 6)) {
			val = tok + 6;
		} else if (!strncmp(tok, "dictsize=", 9)) {
			unsigned long long d = strtoull(tok + 9, &end, 0);

			if (*end || !d || d > (8u << 20) ||
			    o->compressor != EK_COMPRESS_LZMA)
				return ek_fail(err, -EINVAL,
					       "dictsize '%s': lzma only, up to 8 MiB", tok + 9);
			o->dict_size = (uint32_t)d;
			continue;
		}
		v = strtol(val, &end, 10);
		if (end == val || *end)
			return ek_fail(err, -EINVAL, "bad compressor option '%s' in '%s'", tok, spec);
		if (!level_ok(o->compressor, (int)v))
			return ek_fail(err, -EINVAL, "level %ld is out of range for %s", v,
				       compressor_names[i].name);
		o->level = (int)v;
	}
	return 0;
}

/* ------------------------------------------------------------ setup */

static void add_record(struct build *b, unsigned int alg, const struct fmt_zconfig *cfg)
{
	b->sb_tail_size += (uint32_t)fmt_zconfig_encode(alg, cfg, b->sb_tail + b->sb_tail_size);
}

int zbuild_setup(struct build *b)
{
	const ek_build_options *o = &b->o;
	struct fmt_zconfig cfg = { 0 };
	struct zbuilder *zb;
	int min, max, def;
	unsigned int i;

	if (o->compressor == EK_COMPRESS_NONE)
		return 0;
	zb = calloc(1, sizeof(*zb));
	if (!zb)
		return ek_fail(b->err, -ENOMEM, "out of memory");
	b->z = zb;
	zb->b = b;
	zb->ep.kind = kind_of(o->compressor);
	ek_encoder_levels(zb->ep.kind, &min, &max, &def);
	zb->ep.level = o->level < 0 ? def : o->level;
	if (!level_ok(o->compressor, zb->ep.level))
		return ek_fail(b->err, -EINVAL, "compression level %d is out of range", o->level);
	zb->ep.block_size = b->blksz;
	zb->algorithm = ek_encoder_algorithm(zb->ep.kind);
	zb->pcluster = o->pcluster_size ? o->pcluster_size : b->blksz;
	if (zb->pcluster % b->blksz || zb->pcluster > EROFS_MAX_PCLUSTER_BYTES ||
	    zb->pcluster / b->blksz > Z_CBLKCNT_MASK)
		return ek_fail(b->err, -EINVAL,
			       "cluster size %u is not a multiple of the %u-byte block up to 1 MiB (%u blocks at most)",
			       zb->pcluster, b->blksz, Z_CBLKCNT_MASK);
	zb->big = zb->pcluster > b->blksz;
	zb->segment = zb->pcluster * 8u > SEGMENT_MIN ? zb->pcluster * 8u : SEGMENT_MIN;
	zb->workers = o->workers ? o->workers : pool_online_cpus();

	switch (zb->ep.kind) {
	case EK_ENC_LZMA:
		/* mkfs.erofs's default: four clusters, within 32 KiB..8 MiB. */
		zb->ep.dict_size = o->dict_size ? o->dict_size :
				   zb->pcluster * 4u < (32u << 10) ? (32u << 10) :
				   zb->pcluster * 4u > (8u << 20) ? (8u << 20) : zb->pcluster * 4u;
		if (zb->ep.dict_size < 4096)
			return ek_fail(b->err, -EINVAL, "lzma dictionary below 4 KiB");
		cfg.lzma_dict_size = zb->ep.dict_size;
		break;
	case EK_ENC_ZSTD:
		/* Frames need at most a 1 MiB window: the kernel's limit. */
		zb->ep.dict_size = 1u << 20;
		cfg.zstd_windowlog = 20;
		break;
	case EK_ENC_DEFLATE:
		cfg.deflate_windowbits = 15;
		break;
	default:
		break;
	}
	cfg.lz4_max_distance = 65535;
	cfg.lz4_max_pclusterblks = (uint16_t)(zb->pcluster / b->blksz);

	b->feature_incompat |= EROFS_INCOMPAT_ZERO_PADDING;
	if (zb->big || zb->algorithm != EROFS_ALG_LZ4) {
		b->feature_incompat |= EROFS_INCOMPAT_COMPR_CFGS;
		add_record(b, zb->algorithm, &cfg);
	}

	zb->wk = calloc(zb->workers, sizeof(*zb->wk));
	if (!zb->wk)
		return ek_fail(b->err, -ENOMEM, "out of memory");
	for (i = 0; i < zb->workers; i++) {
		if (ek_encoder_create(&zb->ep, &zb->wk[i].enc))
			return ek_fail(b->err, -ENOMEM, "cannot create a compressor");
		zb->wk[i].pcluster = malloc(zb->pcluster);
		if (!zb->wk[i].pcluster)
			return ek_fail(b->err, -ENOMEM, "out of memory");
	}
	if (zb->workers > 1 && pool_create(zb->workers, &zb->pool))
		return ek_fail(b->err, -EAGAIN, "cannot start %u worker threads", zb->workers);
	return 0;
}

void zbuild_teardown(struct build *b)
{
	struct zbuilder *zb = b->z;
	unsigned int i;

	if (!zb)
		return;
	pool_destroy(zb->pool);
	for (i = 0; zb->wk && i < zb->workers; i++) {
		ek_encoder_destroy(zb->wk[i].enc);
		free(zb->wk[i].in);
		free(zb->wk[i].pcluster);
	}
	free(zb->wk);
	while (zb->open) {
		struct zfile *f = zb->open;

		zb->open = f->next_open;
		if (f->fd >= 0)
			close(f->fd);
		free(f->ext);
		free(f);
	}
	free(zb);
	b->z = NULL;
}

uint16_t zbuild_sb_u1(const struct build *b)
{
	if (b->feature_incompat & EROFS_INCOMPAT_COMPR_CFGS)
		return (uint16_t)(1u << b->z->algorithm);
	return 65535;   /* lz4's largest match distance, as mkfs.erofs writes */
}

void bcompressed_free(struct bcompressed *z)
{
	if (z) {
		free(z->index);
		free(z);
	}
}

/* ------------------------------------------------------------ finishing */

/*
 * Compression is kept when it takes fewer bytes in all: data blocks plus
 * metadata (an uncompressed file's inline tail, a compressed file's
 * index, about 2 bytes per block plus a header).  On a tie the file stays
 * uncompressed: it reads faster.
 */
static uint64_t flat_bytes(const struct build *b, const struct binode *n)
{
	uint64_t tail = n->size % b->blksz;

	if (tail && binode_core_size(n) + n->xattr_size + tail <= b->blksz)
		return n->size;     /* full blocks, tail inline */
	return round_up_u64(n->size, b->blksz);
}

bool zfile_worthwhile(const struct zbuilder *zb, const struct zfile *f,
		      uint64_t more_blocks)
{
	const struct build *b = zb->b;
	uint64_t index = 16 + 2 * div_round_up_u64(f->n->size, b->blksz);

	return ((f->blocks + more_blocks) << b->blkszbits) + index <
	       flat_bytes(b, f->n);
}

static int build_index(struct zbuilder *zb, struct zfile *f)
{
	struct build *b = zb->b;
	struct binode *n = f->n;
	uint64_t nlc = div_round_up_u64(n->size, b->blksz);
	uint32_t before = binode_core_size(n) + n->xattr_size;
	uint32_t hdr = (uint32_t)round_up_u64(before, 8);
	struct fmt_compact_layout l;
	struct fmt_lcluster *lc;
	struct bcompressed *z;
	uint16_t advise = Z_ADVISE_COMPACTED_2B;
	fmt_why why;
	size_t size;
	int ret;

	lc = malloc(nlc * sizeof(*lc));
	z = calloc(1, sizeof(*z));
	if (!lc || !z) {
		free(lc);
		free(z);
		return ek_fail(b->err, -ENOMEM, "out of memory");
	}
	ret = fmt_zindex_plan(f->ext, f->next, n->size, b->blkszbits, zb->big, lc, &why);
	if (ret)
		goto fail;
	/* Inodes sit on 32-byte slots, so the offset within the record
	 * gives the absolute alignment the compact layout depends on. */
	fmt_compact_layout_init(&l, hdr + Z_HEADER_SIZE, nlc, true);
	size = Z_HEADER_SIZE + (size_t)fmt_compact_size(&l);
	z->index = malloc(size);
	if (!z->index) {
		ret = -ENOMEM;
		snprintf(why.text, sizeof(why.text), "out of memory");
		goto fail;
	}
	if (zb->big)
		advise |= Z_ADVISE_BIG_PCLUSTER_1 | Z_ADVISE_BIG_PCLUSTER_2;
	fmt_zmap_header_encode(z->index, advise, (uint8_t)zb->algorithm, 0);
	ret = fmt_zindex_encode_compact(lc, nlc, &l, b->blkszbits, zb->big,
					z->index + Z_HEADER_SIZE, &why);
	if (ret)
		goto fail;
	free(lc);
	z->index_len = (uint32_t)size;
	z->pad = hdr - before;
	n->z = z;
	n->layout = EROFS_LAYOUT_COMPRESSED_COMPACT;
	n->nblocks = f->blocks;
	n->meta_extra = z->pad + z->index_len;
	b->stats->compressed_files++;
	return 0;
fail:
	free(lc);
	bcompressed_free(z);
	return ek_fail(b->err, ret == -ENOMEM ? -ENOMEM : -EIO,
		       "%s: building the compressed index: %s", n->src_path, why.text);
}

int zfile_finish(struct zbuilder *zb, struct zfile *f, bool fallback)
{
	struct build *b = zb->b;
	int ret = source_check_unchanged(b, f->n, f->fd);

	close(f->fd);
	f->fd = -1;
	if (ret)
		return ret;
	if (!fallback)
		ret = build_index(zb, f);
	else {
		/* Compression saved nothing: store the file as it is, over
		 * whatever of it was already written. */
		ret = writer_discard(b->w, f->first_blk << b->blkszbits,
				     (b->data_blk - f->first_blk) << b->blkszbits, b->err);
		b->data_blk = f->first_blk;
		if (!ret)
			ret = data_write_uncompressed(b, f->n);
	}
	free(f->ext);
	f->ext = NULL;
	f->next = f->cap = 0;
	return ret;
}

void zbuild_encode_index(struct build *b, const struct binode *n, uint8_t *rec)
{
	memcpy(rec + binode_core_size(n) + n->xattr_size + n->z->pad, n->z->index,
	       n->z->index_len);
	(void)b;
}
