/*
 * Compression in the builder: the encoders and workers, the superblock's
 * compression record, and a compressed inode's index in its record.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write/compress.h"
#include "write/hints.h"
#include "write/source.h"
#include "write/zinternal.h"
#include "format/ondisk.h"
#include "format/zindex.h"
#include "util/error.h"

/* Files are compressed in independent segments of this much input at
 * least (SEGMENT_CLUSTERS clusters when those are bigger), committed in
 * order.  A
 * segment ends with a partly filled pcluster (about 0.1% of image size at
 * 1 MiB), but a large segment that compresses slowly (lz4hc,12 takes 0.7 s
 * over the 3.7 MB perl binary) keeps the other workers waiting behind it:
 * at 4 MiB, one core idled for a second of a five-second build. */
#define SEGMENT_MIN (1u << 20)
#define SEGMENT_CLUSTERS 8u
/* The packed inode, mostly small text files, compresses well: its
 * segments take more input, so that its clusters fill (at 9:1 a 1 MiB
 * segment would not fill one 128 KiB cluster): sixteen clusters' worth,
 * at least this much.  Each segment ends a cluster early; at 1 MiB
 * clusters sixteen rather than eight made images 8-41 KB smaller (the
 * small-files tree and the root filesystem; lz4hc, zstd, deflate) in the
 * same time. */
#define PACKED_SEGMENT_CLUSTERS 16u
#define PACKED_SEGMENT_MIN (4u << 20)
/* The metabox is compressed last, with nothing beside it: in segments
 * of two clusters, so that every worker has a part.  On the small-files
 * tree (5.1 MB of metabox, 1 MiB clusters, -Eall-fragments) lzma,6 took
 * 0.57 s over it, not 1.04 s in one eight-cluster segment, for 4 KB more
 * image; one cluster per segment took 0.53 s for 16 KB more. */
#define METABOX_SEGMENT_CLUSTERS 2u
/* Input of the packed inode's segments compressing at once (as many
 * segments as there are workers, and one more, at least): a slow one
 * (lz4hc,12 spent 3.9 s on 8 MiB of the small-files tree where others
 * took 0.5 s) holds up nothing while the rest go on. */
#define PACKED_COMPRESSING_BYTES (32ull << 20)
/* The kernel refuses extents that decode to more than 12 MiB: an encoder
 * is offered at most this much (highly compressible data, zeros above
 * all, would otherwise fill a cluster with more); --max-extent-bytes
 * asks for less. */
#define EXTENT_INPUT_MAX (8u << 20)

/* ------------------------------------------------------------ setup */

/* A segment's input: `clusters` clusters' worth, and at least `least`. */
static uint64_t segment_input(uint32_t cluster, unsigned int clusters, uint64_t least)
{
	uint64_t len = (uint64_t)cluster * clusters;

	return len > least ? len : least;
}

static void add_record(struct build *b, unsigned int alg, const struct fmt_zconfig *cfg)
{
	b->sb_tail_size += (uint32_t)fmt_zconfig_encode(alg, cfg, b->sb_tail + b->sb_tail_size);
}

#define MAX_OF(a, b) ((a) > (b) ? (a) : (b))

/* The superblock's records: one per algorithm of -z's list, in increasing
 * id as the kernel reads them, each the largest of what that algorithm's
 * settings need (lz4 and lz4hc, or two levels of one, share one). */
static void add_records(struct build *b, const struct zbuilder *zb,
			const struct fmt_zconfig *cfgs)
{
	unsigned int alg, k;

	for (alg = 0; alg < EROFS_ALG_MAX; alg++) {
		struct fmt_zconfig m = { 0 };

		if (!(zb->algorithms & (1u << alg)))
			continue;
		for (k = 0; k < zb->ncodecs; k++) {
			const struct fmt_zconfig *c = &cfgs[k];

			if (zb->codecs[k].codec->algorithm != alg)
				continue;
			m.lz4_max_distance = MAX_OF(m.lz4_max_distance, c->lz4_max_distance);
			m.lz4_max_pclusterblks = MAX_OF(m.lz4_max_pclusterblks,
							c->lz4_max_pclusterblks);
			m.lzma_dict_size = MAX_OF(m.lzma_dict_size, c->lzma_dict_size);
			m.deflate_windowbits = MAX_OF(m.deflate_windowbits, c->deflate_windowbits);
			m.zstd_windowlog = MAX_OF(m.zstd_windowlog, c->zstd_windowlog);
		}
		add_record(b, alg, &m);
	}
}

/* The image's algorithms, each configured for clusters up to `largest`
 * (cfgs: what each one's record takes). */
static void setup_codecs(struct zbuilder *zb, uint32_t largest, struct fmt_zconfig *cfgs)
{
	const ek_build_options *o = &zb->b->o;
	unsigned int k;

	zb->ncodecs = o->extra_codec_count + 1;
	for (k = 0; k < zb->ncodecs; k++) {
		ek_build_codec want = build_codec(o, k);
		struct zcodec *zc = &zb->codecs[k];

		zc->codec = codec_get(want.compressor);
		zc->ep.level = want.level < 0 ? zc->codec->level_default : want.level;
		zc->ep.block_size = zb->b->blksz;
		zc->ep.dict_size = want.dict_size;
		zc->codec->encoder->configure(&zc->ep, largest, &cfgs[k]);
		zb->algorithms |= (uint16_t)(1u << zc->codec->algorithm);
	}
}

int zbuild_setup(struct build *b)
{
	const ek_build_options *o = &b->o;
	struct fmt_zconfig cfgs[EK_CODECS_MAX] = { { 0 } };
	struct zbuilder *zb;
	uint32_t largest;
	unsigned int i;

	if (o->compressor == EK_COMPRESS_NONE)
		return 0;   /* options are valid: uncompressed */
	zb = calloc(1, sizeof(*zb));
	if (!zb)
		return err_fail(b->err, -ENOMEM, "out of memory");
	b->z = zb;
	zb->b = b;
	zb->pcluster = o->pcluster_size ? o->pcluster_size : b->blksz;
	zb->extent_input = o->max_extent_bytes && o->max_extent_bytes < EXTENT_INPUT_MAX ?
			   o->max_extent_bytes : EXTENT_INPUT_MAX;
	zb->packed_pcluster = o->fragment_cluster ? o->fragment_cluster : zb->pcluster;
	zb->metabox_pcluster = o->metabox_cluster;
	largest = zb->pcluster > zb->packed_pcluster ? zb->pcluster : zb->packed_pcluster;
	if (largest < hints_largest(b->hints))
		largest = hints_largest(b->hints);
	zb->segment = segment_input(largest, SEGMENT_CLUSTERS, SEGMENT_MIN);
	if (largest < zb->metabox_pcluster)
		largest = zb->metabox_pcluster;
	zb->big = largest > b->blksz;
	zb->packed_segment = segment_input(zb->packed_pcluster, PACKED_SEGMENT_CLUSTERS,
					   PACKED_SEGMENT_MIN);
	zb->metabox_segment = segment_input(zb->metabox_pcluster, METABOX_SEGMENT_CLUSTERS,
					    SEGMENT_MIN);
	zb->workers = b->workers;
	zb->packed_compressing_max = zb->workers + 1;
	if (zb->packed_compressing_max < PACKED_COMPRESSING_BYTES / zb->packed_segment)
		zb->packed_compressing_max = (unsigned int)(PACKED_COMPRESSING_BYTES /
							    zb->packed_segment);
	if (pthread_mutex_init(&zb->lock, NULL) || pthread_cond_init(&zb->spilled, NULL))
		return err_fail(b->err, -ENOMEM, "cannot set up the workers' lock");
	zb->lock_ready = true;
	if (zbuild_buffers_init(zb))
		return err_fail(b->err, -ENOMEM, "out of memory");
	setup_codecs(zb, largest, cfgs);

	b->feature_incompat |= EROFS_INCOMPAT_ZERO_PADDING;
	if (zb->big || zb->algorithms != 1u << EROFS_ALG_LZ4) {
		b->feature_incompat |= EROFS_INCOMPAT_COMPR_CFGS;
		add_records(b, zb, cfgs);
	}

	zb->wk = calloc(zb->workers, sizeof(*zb->wk));
	if (!zb->wk)
		return err_fail(b->err, -ENOMEM, "out of memory");
	for (i = 0; i < zb->workers; i++) {
		if (encoder_create(zb->codecs[0].codec, &zb->codecs[0].ep, &zb->wk[i].enc[0]))
			return err_fail(b->err, -ENOMEM, "cannot create a compressor");
		zb->wk[i].pcluster = malloc(largest);
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
	unsigned int i, k;

	if (!zb)
		return;
	zbuild_drop_queued(zb);   /* a failed build's, the packed inode's included */
	pool_destroy(zb->pool);
	if (zb->lock_ready) {
		zbuild_buffers_fini(zb);
		pthread_mutex_destroy(&zb->lock);
		pthread_cond_destroy(&zb->spilled);
	}
	for (i = 0; zb->wk && i < zb->workers; i++) {
		for (k = 0; k < zb->ncodecs; k++)
			encoder_destroy(zb->wk[i].enc[k]);
		free(zb->wk[i].pcluster);
	}
	free(zb->wk);
	free(zb->held);
	while (zb->open)
		zfile_release(zb, zb->open);
	free(zb);
	b->z = NULL;
}

uint16_t zbuild_sb_u1(const struct build *b)
{
	if (b->feature_incompat & EROFS_INCOMPAT_COMPR_CFGS)
		return b->z->algorithms;
	return 65535;   /* lz4's largest match distance, as mkfs.erofs writes */
}

void zbuild_encode_index(struct build *b, const struct tnode *n, uint8_t *rec)
{
	memcpy(rec + tnode_core_size(n) + n->xattr_size + n->z->pad, n->z->index,
	       n->z->index_len);
	(void)b;
}
