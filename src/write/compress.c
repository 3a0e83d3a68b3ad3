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

int ek_parse_compressor(const char *spec, ek_build_options *o, ek_error *err)
{
	char buf[128], *tok, *save = NULL;
	const struct codec *c;

	if (strlen(spec) >= sizeof(buf))
		return err_fail(err, -EINVAL, "compressor spec '%s' is too long", spec);
	strcpy(buf, spec);
	tok = strtok_r(buf, ",", &save);
	if (!tok)
		return err_fail(err, -EINVAL, "empty compressor spec");
	c = codec_by_name(tok);
	if (!c) {
		char names[96];

		codec_names(names, sizeof(names));
		return err_fail(err, -EINVAL, "unknown compressor '%s' (%s)", tok, names);
	}
	o->compressor = (enum ek_compressor)(c - codec_get(0));
	o->level = -1;
	while ((tok = strtok_r(NULL, ",", &save))) {
		const char *val = tok;
		char *end;
		long v;

		if (!strncmp(tok, "level=", 6)) {
			val = tok + 6;
		} else if (!strncmp(tok, "dictsize=", 9)) {
			unsigned long long d = strtoull(tok + 9, &end, 0);

			if (!c->dict_max)
				return err_fail(err, -EINVAL, "%s takes no dictsize", c->name);
			if (*end || d < c->dict_min || d > c->dict_max)
				return err_fail(err, -EINVAL, "dictsize '%s': %s takes %u to %u bytes",
						tok + 9, c->name, c->dict_min, c->dict_max);
			o->dict_size = (uint32_t)d;
			continue;
		}
		v = strtol(val, &end, 10);
		if (end == val || *end)
			return err_fail(err, -EINVAL, "bad compressor option '%s' in '%s'", tok, spec);
		if (!codec_level_valid(c, (int)v))
			return err_fail(err, -EINVAL, "level %ld is out of range for %s", v,
					c->name);
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
	const struct codec *c = codec_get(o->compressor);
	struct fmt_zconfig cfg = { 0 };
	struct zbuilder *zb;
	unsigned int i;

	if (!c)
		return 0;   /* options are valid: uncompressed */
	zb = calloc(1, sizeof(*zb));
	if (!zb)
		return err_fail(b->err, -ENOMEM, "out of memory");
	b->z = zb;
	zb->b = b;
	zb->codec = c;
	zb->ep.level = o->level < 0 ? c->level_default : o->level;
	zb->ep.block_size = b->blksz;
	zb->ep.dict_size = o->dict_size;
	zb->pcluster = o->pcluster_size ? o->pcluster_size : b->blksz;
	zb->big = zb->pcluster > b->blksz;
	zb->segment = zb->pcluster * 8u > SEGMENT_MIN ? zb->pcluster * 8u : SEGMENT_MIN;
	zb->workers = b->workers;
	c->encoder->configure(&zb->ep, zb->pcluster, &cfg);

	b->feature_incompat |= EROFS_INCOMPAT_ZERO_PADDING;
	if (zb->big || c->algorithm != EROFS_ALG_LZ4) {
		b->feature_incompat |= EROFS_INCOMPAT_COMPR_CFGS;
		add_record(b, c->algorithm, &cfg);
	}

	zb->wk = calloc(zb->workers, sizeof(*zb->wk));
	if (!zb->wk)
		return err_fail(b->err, -ENOMEM, "out of memory");
	for (i = 0; i < zb->workers; i++) {
		if (encoder_create(c, &zb->ep, &zb->wk[i].enc))
			return err_fail(b->err, -ENOMEM, "cannot create a compressor");
		zb->wk[i].pcluster = malloc(zb->pcluster);
		if (!zb->wk[i].pcluster)
			return err_fail(b->err, -ENOMEM, "out of memory");
	}
	if (zb->workers > 1 && pool_create(zb->workers, &zb->pool))
		return err_fail(b->err, -EAGAIN, "cannot start %u worker threads", zb->workers);
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
		encoder_destroy(zb->wk[i].enc);
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
		return (uint16_t)(1u << b->z->codec->algorithm);
	return 65535;   /* lz4's largest match distance, as mkfs.erofs writes */
}

/* ------------------------------------------------------------ finishing */

/*
 * Compression is kept when it takes fewer bytes in all: data blocks plus
 * metadata (an uncompressed file's inline tail, a compressed file's
 * index, about 2 bytes per block plus a header).  On a tie the file stays
 * uncompressed: it reads faster.
 */
static uint64_t flat_bytes(const struct build *b, const struct tnode *n)
{
	uint64_t tail = n->size % b->blksz;

	if (tail && tnode_core_size(n) + n->xattr_size + tail <= b->blksz)
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
	struct tnode *n = f->n;
	uint64_t nlc = div_round_up_u64(n->size, b->blksz);
	uint32_t before = tnode_core_size(n) + n->xattr_size;
	uint32_t hdr = (uint32_t)round_up_u64(before, 8);
	struct fmt_compact_layout l;
	struct fmt_lcluster *lc;
	struct tindex *z;
	uint16_t advise = Z_ADVISE_COMPACTED_2B;
	fmt_why why;
	size_t size;
	int ret;

	lc = malloc(nlc * sizeof(*lc));
	z = calloc(1, sizeof(*z));
	if (!lc || !z) {
		free(lc);
		free(z);
		return err_fail(b->err, -ENOMEM, "out of memory");
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
	fmt_zmap_header_encode(z->index, advise, (uint8_t)zb->codec->algorithm, 0);
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
	if (z)
		free(z->index);
	free(z);
	return err_fail(b->err, ret == -ENOMEM ? -ENOMEM : -EIO,
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

void zbuild_encode_index(struct build *b, const struct tnode *n, uint8_t *rec)
{
	memcpy(rec + tnode_core_size(n) + n->xattr_size + n->z->pad, n->z->index,
	       n->z->index_len);
	(void)b;
}
