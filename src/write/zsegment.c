/*
 * One segment of a file into extents, by fixed-output compression: each
 * extent takes as much input as fits one physical cluster.  The format's
 * rules decide each extent's form:
 *   - an extent that starts in the file's last lcluster is stored
 *     uncompressed (the reader derives its end from the next lcluster);
 *     with tail packing a compressed form of it is kept too, in case it
 *     fits after the inode;
 *   - a pcluster of several blocks needs its extent to cover the whole
 *     lcluster after its head (where its block count is recorded), else it
 *     is recompressed into one block;
 *   - input the probe cannot shrink is stored uncompressed untried,
 *     unless the codec's try costs no more than the probe (lz4);
 *   - input that does not save a block when compressed is stored
 *     uncompressed, one block per extent: all of the input the attempt
 *     took, since that much of it does not compress (retrying one block
 *     further on would compress the same bytes again, up to 256 times per
 *     cluster on incompressible data);
 *   - with fragments, the file's last extent, which would fill its cluster
 *     only partly, is left for the packed inode (t->tail_la) when the probe
 *     shows so before it is compressed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec/probe.h"
#include "write/zinternal.h"
#include "util/cancel.h"
#include "util/error.h"

static int reserve(struct ztask *t, size_t data, ek_error *err)
{
	if (t->next == t->ext_cap) {
		size_t cap = t->ext_cap ? t->ext_cap * 2 : 64;
		struct zext *g = realloc(t->ext, cap * sizeof(*g));

		if (!g)
			return err_fail(err, -ENOMEM, "out of memory");
		t->ext = g;
		t->ext_cap = cap;
	}
	if (t->data_len + data > t->data_cap) {
		size_t cap = t->data_cap ? t->data_cap : data;
		uint8_t *g;

		while (cap < t->data_len + data)
			cap *= 2;
		g = realloc(t->data, cap);
		if (!g)
			return err_fail(err, -ENOMEM, "out of memory");
		t->data = g;
		t->data_cap = cap;
	}
	return 0;
}

static void fill_digest(const struct zbuilder *zb, const struct ztask *t, struct zext *e,
			const uint8_t *in)
{
	if (zfile_dedupes_pclusters(zb->b, t->file))
		digest_of(in, e->llen, e->digest);
}

static int emit_plain(struct zbuilder *zb, struct ztask *t, const uint8_t *in,
		      uint64_t la, uint32_t llen)
{
	uint32_t blksz = zb->b->blksz;
	int ret = reserve(t, blksz, &t->err);

	if (ret)
		return ret;
	memcpy(t->data + t->data_len, in, llen);
	memset(t->data + t->data_len + llen, 0, blksz - llen);
	t->data_len += blksz;
	t->ext[t->next] = (struct zext){ .la = la, .llen = llen, .blocks = 1, .plain = true };
	fill_digest(zb, t, &t->ext[t->next++], in);
	return 0;
}

static int emit_compressed(struct zbuilder *zb, struct ztask *t, const uint8_t *in,
			   const uint8_t *stream, size_t csize, uint64_t la,
			   uint32_t llen, uint16_t blocks)
{
	size_t bytes = (size_t)blocks * zb->b->blksz;
	int ret = reserve(t, bytes, &t->err);

	if (ret)
		return ret;
	/* 0padding: the stream sits at the end of its pcluster. */
	memset(t->data + t->data_len, 0, bytes - csize);
	memcpy(t->data + t->data_len + bytes - csize, stream, csize);
	t->data_len += bytes;
	t->ext[t->next] = (struct zext){
		.la = la, .llen = llen, .blocks = blocks, .csize = (uint32_t)csize,
	};
	fill_digest(zb, t, &t->ext[t->next++], in);
	return 0;
}

/*
 * The input at *pos did not save a block when compressed: store it plain,
 * a block per extent, as long as its blocks do not compress at all (the
 * probe), up to what the attempt took; at least one block.  Stopping at
 * the first compressible block keeps a file's compressible part after an
 * incompressible one; skipping the rest keeps the encoder from compressing
 * the same incompressible bytes again and again, a block further each
 * time (up to 256 times per cluster).
 */
static int emit_plain_run(struct zbuilder *zb, struct ztask *t, uint64_t *pos,
			  size_t consumed)
{
	uint32_t blksz = zb->b->blksz;
	uint64_t end = *pos + (consumed > blksz ? consumed : blksz);
	int ret = 0;

	if (end > t->len)
		end = t->len;
	do {
		uint32_t llen = t->len - *pos < blksz ? (uint32_t)(t->len - *pos) : blksz;

		ret = emit_plain(zb, t, t->in + *pos, t->off + *pos, llen);
		*pos += llen;
	} while (!ret && *pos < end &&
		 !probe_compressible(t->in + *pos, end - *pos < blksz ? end - *pos : blksz,
				     zfile_codec(zb, t->file)->entropy_coded));
	return ret;
}

/* The least input the probe looks at before the encoder runs. */
#define PROBE_AHEAD (64u << 10)

/* Compress as much of in[0, left) as fits cap bytes; *consumed 0 when
 * nothing fits.  A pcluster of several blocks must reach past the
 * lcluster after its head (cofs: the head's offset in its lcluster). */
static int fill_cluster(struct zbuilder *zb, struct ztask *t, struct zworker *w,
			struct encoder *enc, const uint8_t *in, uint64_t left, uint64_t cofs,
			size_t *hint, size_t *consumed, size_t *csize)
{
	uint32_t blksz = zb->b->blksz, full = t->file->cluster, cap = full;

	if (left > zb->extent_input)
		left = zb->extent_input;
	for (;;) {
		int ret = encoder_fill(enc, in, (size_t)left, w->pcluster, cap,
				       consumed, csize, cap == full ? hint : NULL);

		if (ret == -ENOSPC) {
			*consumed = 0;
			return 0;
		}
		if (ret)
			return err_fail(&t->err, ret, "%s: compressor failed (%d)",
					t->n->src_path, ret);
		if (*csize > blksz && cofs + *consumed < 2ull * blksz && cap > blksz) {
			cap = blksz;   /* no lcluster to hold the count */
			continue;
		}
		return 0;
	}
}

/* With tail packing, a final extent stored plain because it starts in
 * the last lcluster may still be inlined compressed: keep that form. */
static void keep_tail_stream(struct zbuilder *zb, struct ztask *t, struct zworker *w,
			     struct encoder *enc, const uint8_t *in, uint64_t left)
{
	size_t consumed = 0, csize = 0;

	if (!zb->b->lay.tailpack || t->file->packed ||
	    encoder_fill(enc, in, (size_t)left, w->pcluster, zb->b->blksz,
			 &consumed, &csize, NULL) || consumed != left || csize >= left)
		return;
	t->tail_stream = malloc(csize);
	if (t->tail_stream) {
		memcpy(t->tail_stream, w->pcluster, csize);
		t->tail_csize = (uint32_t)csize;
	}
}

/* w's encoder for zb->codecs[k], made on first use: an algorithm only
 * compress hints pick costs nothing where no file takes it. */
static struct encoder *worker_encoder(struct zbuilder *zb, struct zworker *w, unsigned int k)
{
	if (!w->enc[k])
		encoder_create(zb->codecs[k].codec, &zb->codecs[k].ep, &w->enc[k]);
	return w->enc[k];
}

void zsegment_compress(struct zbuilder *zb, struct ztask *t, struct zworker *w)
{
	uint32_t blksz = zb->b->blksz;
	uint64_t size = t->size;
	uint64_t last_lc = (size - 1) / blksz * blksz;   /* lclusters = blocks */
	bool fragment_tail = t->last && !t->file->packed &&
			     zb->b->lay.fragments != EK_FRAGMENTS_OFF;
	const struct codec *codec = zfile_codec(zb, t->file);
	bool entropy = codec->entropy_coded;
	uint64_t pos = 0, probed_to = 0;
	size_t hint = 0;   /* per segment: the same wherever it runs */
	struct encoder *enc = worker_encoder(zb, w, t->file->codec);
	int ret = 0;

	t->ran = true;
	t->tail_la = t->off + t->len;
	if (!enc) {
		t->error = err_fail(&t->err, -ENOMEM, "%s: cannot create a %s compressor",
				    t->n->src_path, codec->name);
		return;
	}
	while (!ret && pos < t->len) {
		uint64_t la = t->off + pos, left = t->len - pos;
		const uint8_t *in = t->in + pos;
		size_t consumed = 0, csize = 0, probe_len;
		uint16_t blocks;

		/* A cluster at a time: a stopped build does not wait for the
		 * window's segments to be compressed for nothing. */
		if (cancel_requested(zb->b->o.cancel)) {
			ret = err_fail(&t->err, -ECANCELED, CANCEL_MESSAGE);
			break;
		}
		/* What is left would fill its cluster partly: compressed with
		 * its neighbours instead.  Sure without compressing it when it
		 * is no more than a cluster, or fits one even under fast LZ4
		 * (which the real encoder beats). */
		if (fragment_tail && (left <= t->file->cluster ||
				      probe_fits(in, (size_t)left, entropy,
						 t->file->cluster))) {
			t->tail_la = la;
			break;
		}
		if (la >= last_lc) {
			/* Starts in the last lcluster: stored as it is. */
			keep_tail_stream(zb, t, w, enc, in, left);
			ret = emit_plain(zb, t, in, la, (uint32_t)left);
			break;
		}
		/* Input the probe cannot shrink is stored as it is without
		 * the encoder's try (on the small-files tree, 26 MB of gzip
		 * files went through zstd 15 in vain).  The probe looks at a
		 * cluster, and at PROBE_AHEAD at least: fast LZ4 does not
		 * shrink every 512-byte block of text.  What it passed is not
		 * probed again for the next clusters (at 4 KiB clusters that
		 * was 70% of an lz4 build). */
		if (pos >= probed_to && !codec->try_is_cheap) {
			probe_len = t->file->cluster > PROBE_AHEAD ? t->file->cluster : PROBE_AHEAD;
			if (probe_len > left)
				probe_len = (size_t)left;
			if (!probe_compressible(in, probe_len, entropy)) {
				ret = emit_plain_run(zb, t, &pos, probe_len);
				continue;
			}
			probed_to = pos + probe_len;
		}
		ret = fill_cluster(zb, t, w, enc, in, left, la % blksz, &hint, &consumed, &csize);
		if (ret)
			break;
		/* A rest the probe thought too big for one cluster that the
		 * encoder fitted in one keeps that cluster: sending it to the
		 * packed inode would compress all of it a second time there
		 * (17.7 of 169 MiB compressed on the root filesystem at lzma
		 * 6) to save less than a block. */
		blocks = (uint16_t)((csize + blksz - 1) / blksz);
		if (!consumed || blocks >= (consumed + blksz - 1) / blksz) {
			ret = emit_plain_run(zb, t, &pos, consumed);
			continue;
		}
		ret = emit_compressed(zb, t, in, w->pcluster, csize, la, (uint32_t)consumed, blocks);
		pos += consumed;
	}
	t->error = ret;
}
