/*
 * Compressed files: mapping a file offset to its extent (spec 6.5-6.14).
 *
 * Two index forms describe the same thing, one record per logical cluster
 * (lcluster): the full index (8 bytes each) and the compact one (2- or
 * 4-byte items in packs that end with a base block address).  Both are
 * decoded into `struct lcluster`; the walk over them is shared.  48-bit
 * images may instead carry encoded extents (zextents.c).
 *
 * Every step is bounded: look-backs move strictly backwards, forward walks
 * strictly forwards, so a crafted index can only fail, never loop.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "read/blocks.h"
#include "read/internal.h"
#include "read/zextents.h"
#include "read/zmap.h"

struct lcluster {
	uint8_t type;         /* enum z_lcluster_type */
	bool cblkcnt;         /* NONHEAD carrying the pcluster block count */
	uint16_t blkcnt;
	uint16_t delta0;      /* NONHEAD: distance back to its head */
	uint16_t clusterofs;  /* HEAD */
	uint64_t pblk;        /* HEAD: first block of its pcluster */
	uint32_t blkaddr_raw; /* full index HEAD: the raw address field */
	bool partial;
};

static uint64_t lcs_of(const ek_inode *inode)
{
	return 1ull << inode->z.lclusterbits;
}

static int corrupt(ek_inode *inode, ek_error *err, const char *what,
		   uint64_t lcn)
{
	return err_fail(err, -EUCLEAN, "inode %llu: compressed index: %s (lcluster %llu)",
		       (unsigned long long)inode->nid, what, (unsigned long long)lcn);
}

/* ------------------------------------------------------------ full index */

static int load_full(ek_inode *inode, uint64_t lcn, struct lcluster *lc,
		     ek_error *err)
{
	struct fmt_lcluster raw;
	uint8_t ent[Z_FULL_INDEX_SIZE];
	int ret = meta_read(inode->img, inode->in_metabox,
			    inode->z.index_off + lcn * Z_FULL_INDEX_SIZE, ent,
			    sizeof(ent), err);

	if (ret) {
		err_prefix(err, "inode %llu: index of lcluster %llu: ",
				(unsigned long long)inode->nid, (unsigned long long)lcn);
		return ret;
	}
	fmt_zindex_full_decode(ent, &raw);
	memset(lc, 0, sizeof(*lc));
	lc->type = raw.type;
	if (raw.type == Z_LCLUSTER_NONHEAD) {
		if (raw.delta[0] & Z_CBLKCNT) {
			lc->cblkcnt = true;
			lc->blkcnt = raw.delta[0] & Z_CBLKCNT_MASK;
			lc->delta0 = 1;
		} else {
			lc->delta0 = raw.delta[0];
		}
		return 0;
	}
	lc->clusterofs = raw.clusterofs;
	lc->pblk = raw.blkaddr;
	lc->blkaddr_raw = raw.blkaddr;
	lc->partial = raw.partial;
	return 0;
}

/* Forward distance to the next head, as the full index stores it. */
static int full_delta1(ek_inode *inode, uint64_t lcn, uint64_t *d, ek_error *err)
{
	uint8_t ent[Z_FULL_INDEX_SIZE];
	int ret = meta_read(inode->img, inode->in_metabox,
			    inode->z.index_off + lcn * Z_FULL_INDEX_SIZE, ent,
			    sizeof(ent), err);

	if (ret)
		return ret;
	*d = get_le16(ent + 6);
	return 0;
}

/* ------------------------------------------------------------ compact */

struct pack {
	uint8_t bytes[32];
	unsigned int unit, vcnt, i;   /* item i of vcnt, unit 2 or 4 bytes */
	unsigned int lobits;
	uint32_t base;
};

static int read_pack(ek_inode *inode, uint64_t lcn, struct pack *p, ek_error *err)
{
	struct fmt_compact_layout l;
	unsigned int packsize;
	uint64_t pos, start;
	int ret;

	fmt_compact_layout_init(&l, inode->z.index_off,
				div_round_up_u64(inode->raw.size, inode->img->blksz),
				inode->z.advise & Z_ADVISE_COMPACTED_2B);
	pos = fmt_compact_pos(&l, lcn, &p->unit);
	packsize = fmt_compact_packsize(p->unit);
	start = pos / packsize * packsize;
	p->vcnt = fmt_compact_vcnt(p->unit);
	p->i = (unsigned int)((pos - start) / p->unit);
	p->lobits = inode->z.lclusterbits > 12 ? inode->z.lclusterbits : 12;
	ret = meta_read(inode->img, inode->in_metabox, start, p->bytes, packsize, err);
	if (ret) {
		err_prefix(err, "inode %llu: index pack of lcluster %llu: ",
				(unsigned long long)inode->nid, (unsigned long long)lcn);
		return ret;
	}
	p->base = get_le32(p->bytes + packsize - 4);
	return 0;
}

static void item(const struct pack *p, unsigned int i, uint8_t *type, uint16_t *lo)
{
	fmt_compact_item(p->bytes, p->unit, i, p->lobits, type, lo);
}

/* delta0 of NONHEAD item i (the last item of a pack stores delta1). */
static int item_delta0(const struct pack *p, unsigned int i, uint16_t *d0)
{
	uint8_t t, pt;
	uint16_t lo, plo;

	item(p, i, &t, &lo);
	if (lo & Z_CBLKCNT) {
		*d0 = 1;
		return 0;
	}
	if (i + 1 < p->vcnt) {
		*d0 = lo;
		return 0;
	}
	item(p, i - 1, &pt, &plo);
	if (pt != Z_LCLUSTER_NONHEAD)
		*d0 = 1;
	else if (plo & Z_CBLKCNT)
		*d0 = 2;
	else
		*d0 = (uint16_t)(plo + 1);
	return 0;
}

static int load_compact(ek_inode *inode, uint64_t lcn, struct lcluster *lc,
			ek_error *err)
{
	struct pack p;
	uint16_t lo;
	uint64_t nblk = 0;
	int ret = read_pack(inode, lcn, &p, err);

	if (ret)
		return ret;
	memset(lc, 0, sizeof(*lc));
	item(&p, p.i, &lc->type, &lo);
	if (lc->type == Z_LCLUSTER_NONHEAD) {
		if (lo & Z_CBLKCNT) {
			lc->cblkcnt = true;
			lc->blkcnt = lo & Z_CBLKCNT_MASK;
			lc->delta0 = 1;
			return 0;
		}
		return item_delta0(&p, p.i, &lc->delta0);
	}
	lc->clusterofs = lo;
	if (fmt_compact_head_nblk(p.bytes, p.unit, p.i, p.lobits,
				  inode->z.big_pcluster[0], &nblk))
		return corrupt(inode, err, "inconsistent items before a head", lcn);
	lc->pblk = (uint64_t)p.base + nblk;
	return 0;
}

/* Forward distance from NONHEAD lcn to the next head (spec 6.7), possibly
 * continuing into later packs. */
static int compact_delta1(ek_inode *inode, uint64_t lcn, uint64_t *d, ek_error *err)
{
	uint64_t total = 0;

	for (;;) {
		struct pack p;
		unsigned int j;
		uint8_t t;
		uint16_t lo;
		int ret = read_pack(inode, lcn, &p, err);

		if (ret)
			return ret;
		for (j = p.i; j < p.vcnt; j++) {
			item(&p, j, &t, &lo);
			if (t != Z_LCLUSTER_NONHEAD) {
				*d = total + (j - p.i);
				return 0;
			}
			if (j == p.vcnt - 1 && !(lo & Z_CBLKCNT)) {
				*d = total + (j - p.i) + (lo ? lo : 1);
				return 0;
			}
		}
		total += p.vcnt - p.i;
		lcn += p.vcnt - p.i;
		if (lcn >= inode->z.nlclusters) {
			*d = total;
			return 0;
		}
	}
}

/* ------------------------------------------------------------ shared walk */

static int load(ek_inode *inode, uint64_t lcn, struct lcluster *lc, ek_error *err)
{
	int ret;

	if (lcn >= inode->z.nlclusters)
		return corrupt(inode, err, "lcluster beyond the end of the file", lcn);
	ret = inode->raw.layout == EROFS_LAYOUT_COMPRESSED_FULL ?
	      load_full(inode, lcn, lc, err) : load_compact(inode, lcn, lc, err);
	if (ret)
		return ret;
	if (lc->type != Z_LCLUSTER_NONHEAD && lc->clusterofs >= lcs_of(inode))
		return corrupt(inode, err, "cluster offset beyond the cluster size", lcn);
	if (lc->type == Z_LCLUSTER_HEAD2 && !(inode->img->sb.feature_incompat &
					      EROFS_INCOMPAT_COMPR_HEAD2))
		return corrupt(inode, err, "second-algorithm head without the feature", lcn);
	if (lc->cblkcnt && !inode->z.big_pcluster[0] && !inode->z.big_pcluster[1])
		return corrupt(inode, err, "block count without big pclusters", lcn);
	return 0;
}

/* Find the head of the extent holding byte `la`. */
static int find_head(ek_inode *inode, uint64_t la, uint64_t *head_lcn,
		     struct lcluster *head, ek_error *err)
{
	uint64_t lcn = la >> inode->z.lclusterbits;
	uint64_t endoff = la & (lcs_of(inode) - 1);
	struct lcluster e;
	uint64_t step;
	int ret = load(inode, lcn, &e, err);

	if (ret)
		return ret;
	if (e.type != Z_LCLUSTER_NONHEAD && endoff >= e.clusterofs) {
		*head_lcn = lcn;
		*head = e;
		return 0;
	}
	if (e.type != Z_LCLUSTER_NONHEAD) {
		/* The byte lies before this head: the previous extent's. */
		if (lcn == 0)
			return corrupt(inode, err, "first lcluster starts after offset 0", lcn);
		step = 1;
	} else {
		step = e.delta0;
	}
	for (;;) {
		if (step == 0 || step > lcn)
			return corrupt(inode, err, "bogus look-back distance", lcn);
		lcn -= step;
		ret = load(inode, lcn, &e, err);
		if (ret)
			return ret;
		if (e.type == Z_LCLUSTER_NONHEAD) {
			step = e.delta0;
			continue;
		}
		*head_lcn = lcn;
		*head = e;
		return 0;
	}
}

/* End of the extent whose head is at head_lcn: the next head's position,
 * or the end of the file. */
static int extent_end(ek_inode *inode, uint64_t head_lcn, uint64_t *end,
		      ek_error *err)
{
	uint64_t lcn = head_lcn + 1;

	while (lcn < inode->z.nlclusters) {
		struct lcluster e;
		uint64_t d = 0;     /* (set on success; gcc -O1 cannot tell) */
		int ret = load(inode, lcn, &e, err);

		if (ret)
			return ret;
		if (e.type != Z_LCLUSTER_NONHEAD) {
			*end = (lcn << inode->z.lclusterbits) + e.clusterofs;
			if (*end > inode->raw.size)
				*end = inode->raw.size;
			return 0;
		}
		ret = inode->raw.layout == EROFS_LAYOUT_COMPRESSED_FULL ?
		      full_delta1(inode, lcn, &d, err) : compact_delta1(inode, lcn, &d, err);
		if (ret)
			return ret;
		lcn += d ? d : 1;   /* old writers left delta1 0 */
	}
	*end = inode->raw.size;
	return 0;
}

/* Blocks of the pcluster whose head is at lcn (spec 6.6). */
static int pcluster_blocks(ek_inode *inode, uint64_t lcn, const struct lcluster *h,
			   uint64_t *blocks, ek_error *err)
{
	bool big = h->type == Z_LCLUSTER_HEAD1 ? inode->z.big_pcluster[0]
					       : inode->z.big_pcluster[1];
	struct lcluster next;
	int ret;

	*blocks = 1;
	if (!big || lcn + 1 >= inode->z.nlclusters)
		return 0;
	ret = load(inode, lcn + 1, &next, err);
	if (ret)
		return ret;
	if (next.type != Z_LCLUSTER_NONHEAD)
		return 0;
	if (next.cblkcnt) {
		if (next.blkcnt == 0)
			return corrupt(inode, err, "pcluster of zero blocks", lcn);
		*blocks = next.blkcnt;
		return 0;
	}
	if (next.delta0 == 1)
		return 0;   /* tolerated as one block, like kernels since 6.15 */
	return corrupt(inode, err, "big pcluster without a block count", lcn);
}

/* The head of the extent holding the last byte: the tail, for inline and
 * fragment tails. */
static int find_tail(ek_inode *inode, ek_error *err)
{
	struct lcluster head;
	uint64_t lcn;
	int ret = find_head(inode, inode->raw.size - 1, &lcn, &head, err);

	if (ret)
		return ret;
	inode->z.tail_head_lcn = lcn;
	if (inode->z.tail_fragment && inode->raw.layout == EROFS_LAYOUT_COMPRESSED_FULL)
		inode->z.fragment_offset |= (uint64_t)head.blkaddr_raw << 32;
	inode->z.tail_known = true;
	return 0;
}

static int check_algorithm(ek_inode *inode, unsigned int alg, ek_error *err)
{
	if (alg >= EROFS_ALG_MAX || !(inode->img->algorithms & (1u << alg)))
		return err_fail(err, -EUCLEAN,
			       "inode %llu: compression algorithm %u not declared in the superblock",
			       (unsigned long long)inode->nid, alg);
	return 0;
}

int zmap_map(ek_inode *inode, uint64_t la, ek_extent *out, ek_error *err)
{
	struct zmap_inode *z = &inode->z;
	ek_image *img = inode->img;
	struct lcluster head;
	uint64_t head_lcn, end, blocks;
	int ret;

	memset(out, 0, sizeof(*out));
	if (z->whole_fragment) {
		out->logical = 0;
		out->length = inode->raw.size;
		out->kind = EK_EXTENT_FRAGMENT;
		out->physical = z->fragment_offset;
		out->physical_length = inode->raw.size;
		return 0;
	}
	if (z->extents)
		return zextents_map(inode, la, out, err);
	ret = find_head(inode, la, &head_lcn, &head, err);
	if (!ret)
		ret = extent_end(inode, head_lcn, &end, err);
	if (ret)
		return ret;
	out->logical = (head_lcn << z->lclusterbits) + head.clusterofs;
	if (end <= out->logical || la >= end)
		return corrupt(inode, err, "extent of no length", head_lcn);
	out->length = end - out->logical;
	out->partial = head.partial;
	if (head.type == Z_LCLUSTER_PLAIN) {
		out->kind = EK_EXTENT_PLAIN;
		out->interlaced = z->advise & Z_ADVISE_INTERLACED_PCLUSTER;
	} else {
		out->kind = EK_EXTENT_COMPRESSED;
		out->algorithm = z->algorithm[head.type == Z_LCLUSTER_HEAD2];
		ret = check_algorithm(inode, out->algorithm, err);
		if (ret)
			return ret;
	}
	if (z->tail_known && head_lcn == z->tail_head_lcn) {
		if (z->tail_fragment) {
			out->kind = EK_EXTENT_FRAGMENT;
			out->physical = z->fragment_offset;
			out->physical_length = out->length;
			return 0;
		}
		if (z->tail_inline) {
			/* Stored right after the index, exact length. */
			out->physical = z->tail_inline_off;
			out->physical_length = z->idata_size;
			out->in_metadata = 1;
			out->interlaced = 0;
			if (out->kind == EK_EXTENT_PLAIN && out->length > z->idata_size)
				return corrupt(inode, err, "inline tail shorter than its extent",
					       head_lcn);
			return 0;
		}
	}
	ret = pcluster_blocks(inode, head_lcn, &head, &blocks, err);
	if (ret)
		return ret;
	out->physical = head.pblk << img->blkszbits;
	out->physical_length = blocks << img->blkszbits;
	if (out->physical_length > EROFS_MAX_PCLUSTER_BYTES)
		return corrupt(inode, err, "pcluster larger than 1 MiB", head_lcn);
	if (head.pblk > (img->size >> img->blkszbits) ||
	    blocks > (img->size >> img->blkszbits) - head.pblk)
		return corrupt(inode, err, "pcluster past the end of the image", head_lcn);
	if (out->kind == EK_EXTENT_PLAIN && out->length > out->physical_length)
		return corrupt(inode, err, "uncompressed extent longer than its pcluster",
			       head_lcn);
	if (out->length > EROFS_MAX_EXTENT_BYTES)
		return corrupt(inode, err, "extent decodes to more than 12 MiB", head_lcn);
	return 0;
}

/* ------------------------------------------------------------ setup */

int zmap_init(ek_inode *inode, ek_error *err)
{
	struct zmap_inode *z = &inode->z;
	ek_image *img = inode->img;
	struct fmt_zmap_header h;
	uint8_t raw[Z_HEADER_SIZE];
	int ret;

	if (!S_ISREG(inode->raw.mode) && !S_ISDIR(inode->raw.mode) &&
	    !S_ISLNK(inode->raw.mode))
		return err_fail(err, -EUCLEAN, "inode %llu: compressed layout on a special file",
			       (unsigned long long)inode->nid);
	z->header_off = round_up_u64(inode->data_off, 8);
	ret = meta_read(img, inode->in_metabox, z->header_off, raw, sizeof(raw), err);
	if (ret) {
		err_prefix(err, "inode %llu: compression header: ",
				(unsigned long long)inode->nid);
		return ret;
	}
	fmt_zmap_header_decode(raw, &h);
	if (h.whole_fragment) {
		if (!img->packed)
			return err_fail(err, -EUCLEAN,
				       "inode %llu: whole-file fragment without a packed inode",
				       (unsigned long long)inode->nid);
		z->whole_fragment = true;
		z->fragment_offset = h.whole_fragment_off;
		return 0;
	}
	if (!inode->raw.size)
		return 0;
	z->advise = h.advise;
	z->algorithm[0] = h.algorithm_type & 0x0F;
	z->algorithm[1] = h.algorithm_type >> 4;
	if (inode->raw.layout == EROFS_LAYOUT_COMPRESSED_FULL &&
	    (z->advise & Z_ADVISE_EXTENTS))
		return zextents_init(inode, &h, err);
	z->lclusterbits = (uint8_t)(img->blkszbits + (h.clusterbits & 0x0F));
	if (z->lclusterbits > 16)
		return err_fail(err, -EOPNOTSUPP, "inode %llu: logical cluster of 2^%u bytes",
			       (unsigned long long)inode->nid, z->lclusterbits);
	z->nlclusters = div_round_up_u64(inode->raw.size, lcs_of(inode));
	z->big_pcluster[0] = z->advise & Z_ADVISE_BIG_PCLUSTER_1;
	z->big_pcluster[1] = z->advise & Z_ADVISE_BIG_PCLUSTER_2;
	if ((z->big_pcluster[0] || z->big_pcluster[1]) &&
	    !(img->sb.feature_incompat & EROFS_INCOMPAT_BIG_PCLUSTER))
		return err_fail(err, -EUCLEAN, "inode %llu: big pclusters without the feature",
			       (unsigned long long)inode->nid);
	z->tail_inline = z->advise & Z_ADVISE_INLINE_PCLUSTER;
	z->tail_fragment = z->advise & Z_ADVISE_FRAGMENT_PCLUSTER;
	if (z->tail_inline && z->tail_fragment)
		return err_fail(err, -EUCLEAN, "inode %llu: inline and fragment tail at once",
			       (unsigned long long)inode->nid);
	if (z->tail_fragment && !img->packed)
		return err_fail(err, -EUCLEAN, "inode %llu: fragment tail without a packed inode",
			       (unsigned long long)inode->nid);
	if (inode->raw.layout == EROFS_LAYOUT_COMPRESSED_FULL) {
		z->index_off = z->header_off + Z_HEADER_SIZE + Z_FULL_INDEX_SKIP;
		z->tail_inline_off = z->index_off + z->nlclusters * Z_FULL_INDEX_SIZE;
	} else {
		struct fmt_compact_layout l;
		unsigned int unit;
		uint64_t pos;

		if (z->big_pcluster[0] != z->big_pcluster[1])
			return err_fail(err, -EUCLEAN,
				       "inode %llu: compact index with unequal big pcluster flags",
				       (unsigned long long)inode->nid);
		if (z->lclusterbits > ((z->advise & Z_ADVISE_COMPACTED_2B) ? 12 : 14))
			return err_fail(err, -EOPNOTSUPP,
				       "inode %llu: compact index cannot hold 2^%u-byte lclusters",
				       (unsigned long long)inode->nid, z->lclusterbits);
		z->index_off = z->header_off + Z_HEADER_SIZE;
		fmt_compact_layout_init(&l, z->index_off,
					div_round_up_u64(inode->raw.size, img->blksz),
					z->advise & Z_ADVISE_COMPACTED_2B);
		pos = fmt_compact_pos(&l, z->nlclusters - 1, &unit);
		z->tail_inline_off = pos / fmt_compact_packsize(unit) *
				     fmt_compact_packsize(unit) + fmt_compact_packsize(unit);
	}
	if (z->tail_fragment)
		z->fragment_offset = h.fragment_off_lo;
	if (z->tail_inline) {
		z->idata_size = h.idata_size;
		if ((z->tail_inline_off & (img->blksz - 1)) + z->idata_size > img->blksz)
			return err_fail(err, -EUCLEAN,
				       "inode %llu: inline compressed tail crosses a block boundary",
				       (unsigned long long)inode->nid);
	}
	if (z->tail_inline || z->tail_fragment)
		return find_tail(inode, err);
	return 0;
}

void zmap_fini(ek_inode *inode)
{
	zextents_fini(inode);
}
