/* Building compressed-file indexes (spec 6.5 writer rules, 6.7). */
#include <errno.h>
#include <string.h>

#include "format/zindex.h"

static uint16_t cap_delta(uint64_t d)
{
	return d > Z_DELTA_MAX ? Z_DELTA_MAX : (uint16_t)d;
}

int fmt_zindex_plan(const struct fmt_zextent *ext, size_t n, uint64_t size,
		    unsigned int lclusterbits, bool big, struct fmt_lcluster *lc,
		    fmt_why *why)
{
	uint64_t lcs = 1ull << lclusterbits;
	uint64_t nlc = (size + lcs - 1) >> lclusterbits;
	uint64_t k, tail = size & (lcs - 1);
	size_t i;

	if (!n || ext[0].la != 0) {
		fmt_why_set(why, "extents do not start at offset 0");
		return -EINVAL;
	}
	memset(lc, 0, nlc * sizeof(*lc));
	for (i = 0; i < n; i++) {
		uint64_t h = ext[i].la >> lclusterbits;
		uint64_t next = i + 1 < n ? ext[i + 1].la >> lclusterbits : nlc;
		bool sentinel = false;

		if (i + 1 < n && next <= h) {
			fmt_why_set(why, "two extents start in lcluster %llu",
				    (unsigned long long)h);
			return -EINVAL;
		}
		if (ext[i].blocks == 0 || ext[i].blocks > Z_CBLKCNT_MASK ||
		    (ext[i].plain && ext[i].blocks != 1)) {
			fmt_why_set(why, "extent %zu: pcluster of %u blocks", i, ext[i].blocks);
			return -EINVAL;
		}
		/* EOF sentinel: the last extent ends inside the last lcluster
		 * without starting there (a tail runs to i_size by itself). */
		if (i + 1 == n && tail && h < nlc - 1 && !ext[i].tail) {
			sentinel = true;
			next = nlc - 1;
			lc[nlc - 1].type = Z_LCLUSTER_PLAIN;
			lc[nlc - 1].clusterofs = (uint16_t)tail;
			/* Never read; the next block keeps compact packs'
			 * base addresses consistent. */
			lc[nlc - 1].blkaddr = (uint32_t)(ext[i].blkaddr + ext[i].blocks);
		}
		lc[h].type = ext[i].plain ? Z_LCLUSTER_PLAIN : Z_LCLUSTER_HEAD1;
		lc[h].partial = ext[i].partial;
		lc[h].clusterofs = (uint16_t)(ext[i].la & (lcs - 1));
		lc[h].blkaddr = (uint32_t)ext[i].blkaddr;
		if (ext[i].blocks > 1 && (!big || h + 1 >= next)) {
			/* The count needs a NONHEAD right after the head. */
			fmt_why_set(why, "extent %zu: %u-block pcluster without room for its count%s",
				    i, ext[i].blocks, sentinel ? " (before the EOF sentinel)" : "");
			return -EINVAL;
		}
		for (k = h + 1; k < next; k++) {
			lc[k].type = Z_LCLUSTER_NONHEAD;
			lc[k].clusterofs = lc[h].clusterofs;
			lc[k].delta[0] = (big && k == h + 1) ? (uint16_t)(Z_CBLKCNT | ext[i].blocks)
							     : cap_delta(k - h);
			lc[k].delta[1] = cap_delta((sentinel ? nlc - 1 : next) - k);
		}
	}
	return 0;
}

void fmt_zindex_encode_full(const struct fmt_lcluster *lc, uint64_t nlc,
			    uint8_t *out)
{
	uint64_t k;

	for (k = 0; k < nlc; k++)
		fmt_zindex_full_encode(out + k * Z_FULL_INDEX_SIZE, &lc[k]);
}

/* The value an item stores: clusterofs, a block count, delta0 or (last
 * item of a pack) delta1. */
static uint16_t item_value(const struct fmt_lcluster *lc, bool last_in_pack)
{
	if (lc->type != Z_LCLUSTER_NONHEAD)
		return lc->clusterofs;
	if (lc->delta[0] & Z_CBLKCNT)
		return lc->delta[0];
	return last_in_pack ? lc->delta[1] : lc->delta[0];
}

int fmt_zindex_encode_compact(const struct fmt_lcluster *lc, uint64_t nlc,
			      const struct fmt_compact_layout *l,
			      unsigned int lclusterbits, bool big, uint8_t *out,
			      fmt_why *why)
{
	unsigned int lobits = lclusterbits > 12 ? lclusterbits : 12;
	uint64_t size = fmt_compact_size(l), k, running = 0;
	uint64_t pack_start = UINT64_MAX;
	unsigned int pack_unit = 0;
	bool have_base = false;

	memset(out, 0, size);
	for (k = 0; k <= nlc; k++) {
		unsigned int unit = 0, i = 0;
		uint64_t start = 0;

		if (k < nlc) {
			/* Packs are aligned in the frame of l->ebase (an
			 * absolute offset, or one relative to a 32-byte
			 * aligned inode); the output starts at ebase. */
			uint64_t pos = fmt_compact_pos(l, k, &unit);
			unsigned int ps = fmt_compact_packsize(unit);

			start = pos / ps * ps;
			i = (unsigned int)((pos - start) / unit);
			start -= l->ebase;
		}
		/* A pack is complete: choose its base address. */
		if (pack_start != UINT64_MAX && (k == nlc || start != pack_start)) {
			unsigned int ps = fmt_compact_packsize(pack_unit);

			if (!have_base)
				put_le32(out + pack_start + ps - 4, (uint32_t)running);
			have_base = false;
		}
		if (k == nlc)
			break;
		pack_start = start;
		pack_unit = unit;
		fmt_compact_set_item(out + start, unit, i, lobits, lc[k].type,
				     item_value(&lc[k], i == fmt_compact_vcnt(unit) - 1));
		if (lc[k].type != Z_LCLUSTER_NONHEAD) {
			uint64_t nblk;
			unsigned int ps = fmt_compact_packsize(unit);

			if (fmt_compact_head_nblk(out + start, unit, i, lobits, big, &nblk)) {
				fmt_why_set(why, "lcluster %llu: inconsistent items",
					    (unsigned long long)k);
				return -EINVAL;
			}
			if (have_base) {
				/* One base per pack: its pclusters must follow
				 * each other. */
				if (get_le32(out + start + ps - 4) + nblk != lc[k].blkaddr) {
					fmt_why_set(why, "lcluster %llu: block %u does not follow the pack's previous pcluster",
						    (unsigned long long)k, lc[k].blkaddr);
					return -EAGAIN;
				}
				continue;
			}
			if (lc[k].blkaddr < nblk) {
				fmt_why_set(why, "lcluster %llu: block %u before the pack base",
					    (unsigned long long)k, lc[k].blkaddr);
				return -EINVAL;
			}
			put_le32(out + start + ps - 4, (uint32_t)(lc[k].blkaddr - nblk));
			have_base = true;
			running = lc[k].blkaddr;
		}
	}
	return 0;
}

void fmt_zindex_encode_extents(const struct fmt_zextent *ext, size_t n,
			       unsigned int blkszbits, unsigned int algorithm,
			       uint64_t fragment_off, uint8_t *out)
{
	size_t i;

	memset(out, 0, n * Z_EXTENT_RECSZ);
	for (i = 0; i < n; i++) {
		uint8_t *rec = out + i * Z_EXTENT_RECSZ;
		uint64_t pstart = ext[i].blkaddr << blkszbits;
		uint32_t plen = (uint32_t)ext[i].blocks << blkszbits;

		if (ext[i].tail) {
			/* A fragment: its offset in the packed inode, split
			 * over the length and address words. */
			plen = (uint32_t)fragment_off;
			pstart = fragment_off >> 32;
		} else {
			/* Format 0 is stored as is, n the algorithm n - 1. */
			plen |= (ext[i].plain ? 0 : algorithm + 1) << Z_EXTENT_FMT_SHIFT;
			if (ext[i].partial)
				plen |= Z_EXTENT_PARTIAL;
		}
		put_le32(rec, plen);
		put_le32(rec + 4, (uint32_t)pstart);
		put_le32(rec + 8, (uint32_t)(pstart >> 32));
		put_le32(rec + 12, (uint32_t)ext[i].la);
	}
}
