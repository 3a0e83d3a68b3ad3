/*
 * A compressed file as its segments commit: pclusters written (or found
 * stored already, with dedupe), then at its end the tail's home (the
 * packed inode, after the inode, or a pcluster of its own), the choice
 * between compressed and plain, and the index.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/probe.h"
#include "util/digtab.h"
#include "util/error.h"
#include "write/compress.h"
#include "write/fragments.h"
#include "write/tails.h"
#include "write/zinternal.h"

/* Dedupe keys tell apart the same bytes stored as different pclusters. */
/* What besides its input makes a pcluster another's: its sizes, and the
 * algorithm that decodes it (stored plain, none). */
static uint64_t dedupe_tag(const struct zbuilder *zb, const struct zfile *f,
			   const struct zext *e)
{
	uint64_t alg = e->plain ? 0 : 1u + zfile_codec(zb, f)->algorithm;

	return (uint64_t)e->llen | (uint64_t)e->blocks << 32 | (uint64_t)e->plain << 48 |
	       alg << 49;
}

static int keep_extent(struct build *b, struct zfile *f, uint64_t la, uint64_t blkaddr,
		       uint16_t blocks, bool plain)
{
	if (f->next == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 4;
		struct fmt_zextent *g = realloc(f->ext, cap * sizeof(*g));

		if (!g)
			return err_fail(b->err, -ENOMEM, "out of memory");
		f->ext = g;
		f->cap = cap;
	}
	f->ext[f->next++] = (struct fmt_zextent){
		.la = la, .blkaddr = blkaddr, .blocks = blocks, .plain = plain,
	};
	f->blocks += blocks;
	return 0;
}

/* Once the index is encoded (or the file stored plain), the extents are
 * done with: kept to the end, they cost a tar of 24,000 small files 31
 * MB. */
static void drop_extents(struct zfile *f)
{
	free(f->ext);
	f->ext = NULL;
	f->next = f->cap = 0;
}

/* Write the run of data[from, from + *len) that ends at data_blk. */
static int flush(struct build *b, const uint8_t *data, size_t from, size_t *len)
{
	int ret = 0;

	if (*len)
		ret = writer_pwrite(b->w, (b->data_blk << b->blkszbits) - *len, data + from,
				    *len, b->err);
	*len = 0;
	return ret;
}

/* Write t's pclusters [from, to), those not stored already, in order. */
static int write_extents(struct zbuilder *zb, struct zfile *f, struct ztask *t,
			 size_t from, size_t to)
{
	struct build *b = zb->b;
	size_t i, at = 0, run_from = 0, run_len = 0;
	int ret = 0;

	for (i = 0; i < from; i++)
		at += (size_t)t->ext[i].blocks << b->blkszbits;
	for (i = from; i < to && !ret; i++) {
		const struct zext *e = &t->ext[i];
		size_t bytes = (size_t)e->blocks << b->blkszbits;
		uint64_t addr;

		if (zfile_dedupes_pclusters(b, f) &&
		    digtab_find(&b->pclusters, e->digest, dedupe_tag(zb, f, e), &addr)) {
			/* Stored already: what was read so far goes first. */
			ret = flush(b, t->data, run_from, &run_len);
			b->stats->dedupe_hits++;
			f->shared = true;
		} else {
			if (!run_len)
				run_from = at;
			run_len += bytes;
			addr = b->data_blk;
			b->data_blk += e->blocks;
			f->own_blocks += e->blocks;
			if (zfile_dedupes_pclusters(b, f) &&
			    digtab_add(&f->fresh, e->digest, dedupe_tag(zb, f, e), addr))
				ret = err_fail(b->err, -ENOMEM, "out of memory");
		}
		if (!ret)
			ret = keep_extent(b, f, e->la, addr, e->blocks, e->plain);
		if (e->blocks > zb->max_blocks)
			zb->max_blocks = e->blocks;
		at += bytes;
	}
	if (!ret)
		ret = flush(b, t->data, run_from, &run_len);
	if (!ret && b->data_blk > UINT32_MAX)
		ret = err_fail(b->err, -EFBIG, "image exceeds 2^32 blocks of %u bytes", b->blksz);
	return ret;
}

int zfile_add_segment(struct zbuilder *zb, struct zfile *f, struct ztask *t)
{
	struct build *b = zb->b;

	if (t->error) {
		if (b->err)
			*b->err = t->err;
		return t->error;
	}
	if (t->segment == 0)
		f->first_blk = b->data_blk;
	if (!f->packed)           /* its bytes were counted as fragments */
		build_progress(b, t->len);
	/* The last segment's final extent may yet go after the inode. */
	if (t->last && b->lay.tailpack && !f->packed && t->next)
		return write_extents(zb, f, t, 0, t->next - 1);
	return write_extents(zb, f, t, 0, t->next);
}

/* ------------------------------------------------------------ the tail */

struct tail {
	enum { TAIL_NONE, TAIL_FRAGMENT, TAIL_INLINE } kind;
	uint64_t la;                 /* where it starts */
	uint64_t fragment_off;
	uint64_t packed_estimate;    /* a fragment: what it may take there */
	const uint8_t *bytes;        /* inline: stored after the index */
	uint32_t len;
	bool plain;                  /* inline: raw bytes */
	const struct zext *held;     /* the final extent not yet written */
};

/* Index bytes after the header: compact unless a pcluster lies out of
 * order (shared with another file) or a fragment lies past 4 GiB, or the
 * options want every index full (-Elegacy-compress). */
static bool needs_full(const struct build *b, const struct zfile *f, const struct tail *tail)
{
	size_t i;

	if (b->o.full_indexes)
		return true;
	if (tail->kind == TAIL_FRAGMENT && tail->fragment_off > UINT32_MAX)
		return true;
	for (i = 1; i < f->next; i++)
		if (f->ext[i].blkaddr != f->ext[i - 1].blkaddr + f->ext[i - 1].blocks)
			return true;
	return false;
}

static uint32_t index_size(const struct build *b, const struct tnode *n, bool full,
			   struct fmt_compact_layout *l)
{
	uint64_t nlc = div_round_up_u64(n->size, b->blksz);
	uint32_t hdr = (uint32_t)round_up_u64(tnode_core_size(n) + n->xattr_size, 8);

	if (full)
		return (uint32_t)(Z_HEADER_SIZE + Z_FULL_INDEX_SKIP + nlc * Z_FULL_INDEX_SIZE);
	/* Inodes sit on 32-byte slots, so the offset within the record
	 * gives the absolute alignment the compact layout depends on. */
	fmt_compact_layout_init(l, hdr + Z_HEADER_SIZE, nlc, true);
	return Z_HEADER_SIZE + (uint32_t)fmt_compact_size(l);
}

/* Whether bytes of len fit after the inode's index, in its block. */
static bool fits_inline(const struct build *b, const struct zfile *f,
			const struct tail *tail, uint32_t len)
{
	struct fmt_compact_layout l;
	const struct tnode *n = f->n;
	uint32_t before = (uint32_t)round_up_u64(tnode_core_size(n) + n->xattr_size, 8);

	return before + index_size(b, n, needs_full(b, f, tail), &l) + len <= b->blksz;
}

/* Tail packing: the final extent after the index when it fits, as a
 * stream or raw, whichever is smaller. */
static void choose_inline(struct zbuilder *zb, struct zfile *f, struct ztask *t,
			  struct tail *tail)
{
	struct build *b = zb->b;
	const struct zext *e = tail->held;
	const uint8_t *raw = t->in + (e->la - t->off);
	const uint8_t *stream = e->plain ? t->tail_stream
					 : t->data + t->data_len - e->csize;
	uint32_t csize = e->plain ? t->tail_csize : e->csize;

	tail->la = e->la;
	if (stream && csize && csize < e->llen && fits_inline(b, f, tail, csize)) {
		tail->kind = TAIL_INLINE;
		tail->bytes = stream;
		tail->len = csize;
		tail->plain = false;
	} else if (e->plain && (e->la >> b->blkszbits) == ((e->la + e->llen - 1) >> b->blkszbits) &&
		   fits_inline(b, f, tail, e->llen)) {
		/* Raw, only within one lcluster: the kernel (6.18) refuses a
		 * raw tail after the inode that crosses into the next one. */
		tail->kind = TAIL_INLINE;
		tail->bytes = raw;
		tail->len = e->llen;
		tail->plain = true;
	}
}

/*
 * Compression is kept when it takes fewer bytes in all: data blocks plus
 * metadata (an uncompressed file's inline tail, a compressed file's
 * index, about 2 bytes per block plus a header, and its tail, counted
 * uncompressed).  On a tie the file stays uncompressed: it reads faster.
 */
static bool worthwhile(const struct build *b, const struct zfile *f, const struct tail *tail)
{
	const struct tnode *n = f->n;
	uint64_t index = 16 + 2 * div_round_up_u64(n->size, b->blksz);
	uint64_t tail_bytes = tail->kind == TAIL_NONE && tail->held ?
			      (uint64_t)tail->held->blocks << b->blkszbits :
			      tail->kind == TAIL_FRAGMENT ? tail->packed_estimate : tail->len;
	uint64_t flat = tail_fits_inline(b, n, n->size % b->blksz) ?
			n->size : round_up_u64(n->size, b->blksz);

	if (tail->kind == TAIL_FRAGMENT && tail->la == 0)
		return true;          /* all of it packed with its neighbours */
	return (f->own_blocks << b->blkszbits) + index + tail_bytes < flat;
}

/* Compression saved nothing: store the file as it is, over whatever of
 * it was already written. */
static int fall_back(struct zbuilder *zb, struct zfile *f)
{
	struct build *b = zb->b;
	int ret = 0;

	/* Its own blocks are given back only when they are the last ones
	 * written (the queue's order sees to that: a file's segments follow
	 * each other, and the packed inode's pclusters come after every
	 * file's); were anything written after them, they would stay,
	 * unused, rather than be written over. */
	if (b->data_blk - f->first_blk == f->own_blocks) {
		ret = writer_discard(b->w, f->first_blk << b->blkszbits,
				     f->own_blocks << b->blkszbits, b->err);
		b->data_blk = f->first_blk;
	}
	digtab_free(&f->fresh);
	drop_extents(f);
	if (!ret)
		ret = data_write_uncompressed(b, f->n);
	return ret;
}

/* Header and index bytes into z->index (the full index when full, else
 * the compact one, which -EAGAIN refuses for pclusters out of order). */
static int encode_one(struct zbuilder *zb, struct zfile *f, const struct tail *tail,
		      struct fmt_lcluster *lc, bool full, struct tindex *z, fmt_why *why)
{
	struct build *b = zb->b;
	struct tnode *n = f->n;
	uint64_t nlc = div_round_up_u64(n->size, b->blksz);
	struct fmt_compact_layout l;
	uint32_t size = index_size(b, n, full, &l);
	uint16_t advise = full ? 0 : Z_ADVISE_COMPACTED_2B;
	uint32_t header_arg = 0;
	int ret = 0;

	free(z->index);
	z->index = calloc(1, size + tail->len);
	if (!z->index) {
		fmt_why_set(why, "out of memory");
		return -ENOMEM;
	}
	if (zb->big)
		advise |= Z_ADVISE_BIG_PCLUSTER_1 | Z_ADVISE_BIG_PCLUSTER_2;
	if (tail->kind == TAIL_FRAGMENT) {
		advise |= Z_ADVISE_FRAGMENT_PCLUSTER;
		header_arg = (uint32_t)tail->fragment_off;
		/* The full index keeps the high bits in the tail's head. */
		if (full)
			lc[tail->la >> b->blkszbits].blkaddr = (uint32_t)(tail->fragment_off >> 32);
	} else if (tail->kind == TAIL_INLINE) {
		advise |= Z_ADVISE_INLINE_PCLUSTER;
		header_arg = tail->len;
		memcpy(z->index + size, tail->bytes, tail->len);
	}
	fmt_zmap_header_encode(z->index, advise, (uint8_t)zfile_codec(zb, f)->algorithm, header_arg);
	if (full)
		fmt_zindex_encode_full(lc, nlc, z->index + Z_HEADER_SIZE + Z_FULL_INDEX_SKIP);
	else
		ret = fmt_zindex_encode_compact(lc, nlc, &l, b->blkszbits, zb->big,
						z->index + Z_HEADER_SIZE, why);
	z->index_len = size + tail->len;
	return ret;
}

/*
 * Encoded extents (48-bit images): a 16-byte record per extent where the
 * lcluster index takes two bytes per block, so far smaller for the long
 * extents of large pclusters, such as the packed inode's (src, 1 MiB
 * pclusters: 46 records, 0.7 KB, against 80 KB).  They cannot describe an inline tail,
 * nor (16-byte records) a logical start past 4 GiB.  0 when not possible.
 */
static uint32_t extents_size(const struct build *b, const struct zfile *f,
			     const struct tail *tail)
{
	const struct tnode *n = f->n;
	uint32_t hdr = (uint32_t)round_up_u64(tnode_core_size(n) + n->xattr_size, 8);

	if (!(b->feature_incompat & EROFS_INCOMPAT_48BIT) || tail->kind == TAIL_INLINE ||
	    n->size > UINT32_MAX || !f->next)
		return 0;
	/* Records are aligned to their size, in the frame of the 32-byte
	 * aligned inode. */
	return (uint32_t)(round_up_u64(hdr + Z_HEADER_SIZE, Z_EXTENT_RECSZ) - hdr +
			  (uint64_t)f->next * Z_EXTENT_RECSZ);
}

static int encode_extents(struct zbuilder *zb, struct zfile *f, const struct tail *tail,
			  uint32_t size, struct tindex *z)
{
	struct build *b = zb->b;
	uint16_t advise = Z_ADVISE_EXTENTS | Z_ADVISE_EXTRECSZ_16;

	z->index = calloc(1, size);
	if (!z->index)
		return -ENOMEM;
	if (tail->kind == TAIL_FRAGMENT)
		advise |= Z_ADVISE_FRAGMENT_PCLUSTER;
	fmt_zmap_header_encode_extents(z->index, advise, f->next);
	fmt_zindex_encode_extents(f->ext, f->next, b->blkszbits, zfile_codec(zb, f)->algorithm,
				  tail->fragment_off,
				  z->index + size - f->next * Z_EXTENT_RECSZ);
	z->index_len = size;
	return 0;
}

/*
 * The compact index when it can say where every pcluster is: always when
 * they follow each other; when they do not (some are another file's),
 * only if every jump falls at the start of a pack.  An inline tail was sized for the form needs_full()
 * gave, which is kept.
 */
static int encode_index(struct zbuilder *zb, struct zfile *f, const struct tail *tail)
{
	struct build *b = zb->b;
	struct tnode *n = f->n;
	uint64_t nlc = div_round_up_u64(n->size, b->blksz);
	uint32_t before = tnode_core_size(n) + n->xattr_size;
	bool full = needs_full(b, f, tail), far_fragment = tail->kind == TAIL_FRAGMENT &&
							 tail->fragment_off > UINT32_MAX;
	struct fmt_compact_layout l;
	uint32_t extents;
	struct fmt_lcluster *lc = malloc(nlc * sizeof(*lc));
	struct tindex *z = calloc(1, sizeof(*z));
	fmt_why why = { "out of memory" };
	int ret = -ENOMEM;

	if (!lc || !z)
		goto fail;
	extents = extents_size(b, f, tail);
	if (extents && !b->o.full_indexes && extents < index_size(b, n, full, &l)) {
		ret = encode_extents(zb, f, tail, extents, z);
		if (ret)
			goto fail;
		full = true;
		goto done;
	}
	ret = fmt_zindex_plan(f->ext, f->next, n->size, b->blkszbits, zb->big, lc, &why);
	if (ret)
		goto fail;
	if (full && !b->o.full_indexes && !far_fragment && tail->kind != TAIL_INLINE)
		full = false;
	ret = encode_one(zb, f, tail, lc, full, z, &why);
	if (ret == -EAGAIN && !full) {
		full = true;
		ret = encode_one(zb, f, tail, lc, full, z, &why);
	}
	if (ret)
		goto fail;
done:
	free(lc);
	z->pad = (uint32_t)round_up_u64(before, 8) - before;
	n->z = z;
	n->layout = full ? EROFS_LAYOUT_COMPRESSED_FULL : EROFS_LAYOUT_COMPRESSED_COMPACT;
	n->nblocks = f->blocks;
	n->meta_extra = z->pad + z->index_len;
	return 0;
fail:
	free(lc);
	if (z)
		free(z->index);
	free(z);
	return err_fail(b->err, ret == -ENOMEM ? -ENOMEM : -EIO,
			"%s: building the compressed index: %s", n->src_path, why.text);
}

/* A whole file in the packed inode: a header and nothing else. */
int zfile_whole_fragment(struct zbuilder *zb, struct zfile *f, uint64_t off)
{
	struct build *b = zb->b;
	struct tnode *n = f->n;
	uint32_t before = tnode_core_size(n) + n->xattr_size;
	struct tindex *z = calloc(1, sizeof(*z));

	(void)zb;
	if (!z || !(z->index = malloc(Z_HEADER_SIZE))) {
		free(z);
		return err_fail(b->err, -ENOMEM, "out of memory");
	}
	fmt_zmap_header_encode_whole_fragment(z->index, off);
	z->index_len = Z_HEADER_SIZE;
	z->pad = (uint32_t)round_up_u64(before, 8) - before;
	n->z = z;
	n->layout = EROFS_LAYOUT_COMPRESSED_FULL;
	n->nblocks = 0;
	n->meta_extra = z->pad + z->index_len;
	b->stats->fragment_files++;
	b->stats->compressed_files++;
	b->feature_incompat |= EROFS_INCOMPAT_FRAGMENTS;
	return 0;
}

/* Fresh pclusters of this file join the table only now that they stay. */
static int remember_fresh(struct build *b, struct zfile *f)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < f->fresh.cap && !ret; i++)
		if (f->fresh.slots[i].used)
			ret = digtab_add(&b->pclusters, f->fresh.slots[i].digest,
					 f->fresh.slots[i].tag, f->fresh.slots[i].value);
	digtab_free(&f->fresh);
	return ret ? err_fail(b->err, -ENOMEM, "out of memory") : 0;
}

int zfile_finish(struct zbuilder *zb, struct zfile *f, struct ztask *last)
{
	struct build *b = zb->b;
	struct tnode *n = f->n;
	struct tail tail = { .kind = TAIL_NONE, .la = n->size };
	int ret;

	if (last->tail_la < n->size) {
		tail.kind = TAIL_FRAGMENT;
		tail.la = last->tail_la;
		tail.packed_estimate = probe_size(last->in + (tail.la - last->off),
						  (size_t)(n->size - tail.la),
						  zbuilder_packed_codec(zb)->entropy_coded);
	} else if (b->lay.tailpack && !f->packed && last->next) {
		tail.held = &last->ext[last->next - 1];
		choose_inline(zb, f, last, &tail);
	}
	/* The packed inode stays compressed: fragments lie in it. */
	if (!f->packed && !worthwhile(b, f, &tail))
		return fall_back(zb, f);
	if (tail.kind == TAIL_FRAGMENT) {
		ret = packed_append(b, last->in + (tail.la - last->off),
				    (size_t)(n->size - tail.la), tail.la == 0, NULL,
				    &tail.fragment_off);
		if (ret)
			return ret;
		if (tail.la == 0)
			return zfile_whole_fragment(zb, f, tail.fragment_off);
		b->stats->fragment_tails++;
		b->feature_incompat |= EROFS_INCOMPAT_FRAGMENTS;
	} else if (tail.kind == TAIL_INLINE) {
		b->stats->inline_tails++;
		b->feature_incompat |= EROFS_INCOMPAT_ZTAILPACKING;
	} else if (tail.held) {
		/* Too big to go after the inode: a pcluster like the others. */
		ret = write_extents(zb, f, last, last->next - 1, last->next);
		if (ret)
			return ret;
	}
	if (tail.kind != TAIL_NONE) {
		/* Its head names the block after the file's last pcluster,
		 * as mkfs.erofs writes it (compact packs stay consistent). */
		uint64_t next = f->next ? f->ext[f->next - 1].blkaddr + f->ext[f->next - 1].blocks
					: b->data_blk;

		ret = keep_extent(b, f, tail.la, next, 1, tail.kind == TAIL_INLINE && tail.plain);
		if (ret)
			return ret;
		f->blocks--;          /* a tail takes no block of the image */
		f->ext[f->next - 1].tail = true;
	}
	if (f->shared)
		b->feature_incompat |= EROFS_INCOMPAT_FRAGMENTS;
	ret = remember_fresh(b, f);
	if (f->packed)
		n->extended = n->size > UINT32_MAX;   /* its size is final now */
	if (!ret)
		ret = encode_index(zb, f, &tail);
	drop_extents(f);
	if (!ret && !f->packed)   /* the packed inode and the metabox are ours */
		b->stats->compressed_files++;
	return ret;
}
