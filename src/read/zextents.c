/*
 * Encoded extents: records of 4, 8, 16 or 32 bytes.  4- and 8-byte records
 * map one lcluster each (4-byte ones only give lengths: physical starts are
 * running sums, kept every CKPT lclusters); 16- and 32-byte records are
 * variable extents sorted by logical start, found by binary search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read/blocks.h"
#include "read/zextents.h"

#define CKPT 64u
#define HOLE_RUN_MAX 4096u

static int bad(ek_inode *inode, ek_error *err, const char *what, uint64_t k)
{
	return err_fail(err, -EUCLEAN, "inode %llu: encoded extent %llu: %s",
		       (unsigned long long)inode->nid, (unsigned long long)k, what);
}

/* Byte offset of record k. */
static uint64_t rec_off(const ek_inode *inode, uint64_t k)
{
	const struct zmap_inode *z = &inode->z;

	if (z->extent_recsz == 4)
		return z->index_off + 8 + 4 * k;   /* after the le64 P0 */
	return z->index_off + (uint64_t)z->extent_recsz * k;
}

static int read_rec(ek_inode *inode, uint64_t k, uint8_t *rec, size_t len,
		    ek_error *err)
{
	int ret = meta_read(inode->img, inode->in_metabox, rec_off(inode, k), rec,
			    len, err);

	if (ret)
		err_prefix(err, "inode %llu: encoded extent %llu: ",
				(unsigned long long)inode->nid, (unsigned long long)k);
	return ret;
}

/* Running physical starts for 4-byte records, one every CKPT. */
static int build_checkpoints(ek_inode *inode, ek_error *err)
{
	struct zmap_inode *z = &inode->z;
	uint64_t n = z->nlclusters, k, sum = z->extent_p0;
	uint8_t buf[4 * CKPT];
	int ret;

	z->extent_ckpt = malloc((n / CKPT + 1) * sizeof(uint64_t));
	if (!z->extent_ckpt)
		return err_fail(err, -ENOMEM, "out of memory");
	for (k = 0; k < n; k += CKPT) {
		uint64_t m = n - k < CKPT ? n - k : CKPT, j;

		z->extent_ckpt[k / CKPT] = sum;
		ret = read_rec(inode, k, buf, (size_t)(4 * m), err);
		if (ret)
			return ret;
		for (j = 0; j < m; j++)
			sum += get_le32(buf + 4 * j) & Z_EXTENT_PLEN_MASK;
	}
	return 0;
}

int zextents_init(ek_inode *inode, const struct fmt_zmap_header *h,
		  ek_error *err)
{
	struct zmap_inode *z = &inode->z;
	ek_image *img = inode->img;
	uint8_t p0[8];
	int ret;

	if (!(img->sb.feature_incompat & EROFS_INCOMPAT_48BIT))
		return err_fail(err, -EUCLEAN, "inode %llu: encoded extents without the 48bit feature",
			       (unsigned long long)inode->nid);
	z->extents = true;
	z->extent_recsz = 4u << ((z->advise >> Z_ADVISE_EXTRECSZ_SHIFT) & 3);
	z->tail_fragment = z->advise & Z_ADVISE_FRAGMENT_PCLUSTER;
	if (z->tail_fragment && !img->packed)
		return err_fail(err, -EUCLEAN, "inode %llu: fragment tail without a packed inode",
			       (unsigned long long)inode->nid);
	z->index_off = round_up_u64(z->header_off + Z_HEADER_SIZE, z->extent_recsz);
	if (z->extent_recsz <= 8) {
		z->lclusterbits = (uint8_t)(img->blkszbits + (h->clusterbits & 0x0F));
		if (z->lclusterbits > 30)
			return err_fail(err, -EOPNOTSUPP, "inode %llu: logical cluster of 2^%u bytes",
				       (unsigned long long)inode->nid, z->lclusterbits);
		z->nlclusters = div_round_up_u64(inode->raw.size, 1ull << z->lclusterbits);
		z->extent_count = z->nlclusters;
	} else {
		z->extent_count = h->extent_count;
		if (!z->extent_count)
			return err_fail(err, -EUCLEAN, "inode %llu: no encoded extents",
				       (unsigned long long)inode->nid);
	}
	/* The records must lie within the metadata space. */
	if (z->extent_count > (img->size + img->metabox_size) / 4)
		return err_fail(err, -EUCLEAN, "inode %llu: %llu encoded extents cannot fit the image",
			       (unsigned long long)inode->nid,
			       (unsigned long long)z->extent_count);
	if (z->extent_recsz != 4)
		return 0;
	ret = meta_read(img, inode->in_metabox, z->index_off, p0, sizeof(p0), err);
	if (ret)
		return ret;
	z->extent_p0 = get_le64(p0);
	return build_checkpoints(inode, err);
}

void zextents_fini(ek_inode *inode)
{
	free(inode->z.extent_ckpt);
	inode->z.extent_ckpt = NULL;
}

/* Turn a plen word and a physical start into the extent's form. */
static int describe(ek_inode *inode, uint64_t k, uint32_t plen, uint64_t pstart,
		    ek_extent *out, ek_error *err)
{
	ek_image *img = inode->img;
	uint32_t len = plen & Z_EXTENT_PLEN_MASK, fmt = plen >> Z_EXTENT_FMT_SHIFT;

	out->partial = !!(plen & Z_EXTENT_PARTIAL);
	if (!len) {
		out->kind = EK_EXTENT_HOLE;
		return 0;
	}
	if (len > EROFS_MAX_PCLUSTER_BYTES)
		return bad(inode, err, "physical length above 1 MiB", k);
	if (pstart > img->size || len > img->size - pstart)
		return bad(inode, err, "physical data past the end of the image", k);
	out->physical = pstart;
	out->physical_length = len;
	if (fmt == 0) {
		out->kind = EK_EXTENT_PLAIN;
		out->interlaced = (inode->z.advise & Z_ADVISE_INTERLACED_PCLUSTER) &&
				  !(pstart & (img->blksz - 1)) && !(len & (img->blksz - 1));
		if (out->length > len)
			return bad(inode, err, "uncompressed extent longer than its data", k);
		return 0;
	}
	out->kind = EK_EXTENT_COMPRESSED;
	out->algorithm = fmt - 1;
	if (out->algorithm >= EROFS_ALG_MAX ||
	    !(img->algorithms & (1u << out->algorithm)))
		return bad(inode, err, "algorithm not declared in the superblock", k);
	return 0;
}

static int map_fixed(ek_inode *inode, uint64_t la, ek_extent *out, ek_error *err)
{
	struct zmap_inode *z = &inode->z;
	uint64_t k = la >> z->lclusterbits, lcs = 1ull << z->lclusterbits;
	uint64_t size = inode->raw.size, pstart;
	uint8_t rec[8];
	uint32_t plen;
	int ret;

	out->logical = k * lcs;
	out->length = size - out->logical < lcs ? size - out->logical : lcs;
	if (z->extent_recsz == 4) {
		uint64_t c = k / CKPT * CKPT, j;
		uint8_t buf[4 * CKPT];

		ret = read_rec(inode, c, buf, (size_t)(4 * (k - c + 1)), err);
		if (ret)
			return ret;
		pstart = z->extent_ckpt[k / CKPT];
		for (j = 0; j < k - c; j++)
			pstart += get_le32(buf + 4 * j) & Z_EXTENT_PLEN_MASK;
		plen = get_le32(buf + 4 * (k - c));
	} else {
		ret = read_rec(inode, k, rec, 8, err);
		if (ret)
			return ret;
		plen = get_le32(rec);
		pstart = get_le32(rec + 4);
	}
	if (z->tail_fragment && k == z->nlclusters - 1) {
		out->kind = EK_EXTENT_FRAGMENT;
		out->physical = z->extent_recsz == 4 ? plen : plen | (pstart << 32);
		out->physical_length = out->length;
		return 0;
	}
	ret = describe(inode, k, plen, pstart, out, err);
	if (ret || out->kind != EK_EXTENT_HOLE)
		return ret;
	/* Join following holes, so that sparse files are walked quickly. */
	while (k + 1 < z->nlclusters && out->length < HOLE_RUN_MAX * lcs &&
	       !(z->tail_fragment && k + 1 == z->nlclusters - 1)) {
		if (z->extent_recsz == 4)
			ret = read_rec(inode, k + 1, rec, 4, err);
		else
			ret = read_rec(inode, k + 1, rec, 8, err);
		if (ret)
			return ret;
		if (get_le32(rec) & Z_EXTENT_PLEN_MASK)
			break;
		k++;
		out->length = (k + 1) * lcs > size ? size - out->logical
						   : (k + 1) * lcs - out->logical;
	}
	return 0;
}

static int read_var(ek_inode *inode, uint64_t k, uint32_t *plen,
		    uint64_t *pstart, uint64_t *lstart, ek_error *err)
{
	uint8_t rec[32];
	int ret = read_rec(inode, k, rec, inode->z.extent_recsz, err);

	if (ret)
		return ret;
	*plen = get_le32(rec);
	*pstart = get_le32(rec + 4) | ((uint64_t)get_le32(rec + 8) << 32);
	*lstart = get_le32(rec + 12);
	if (inode->z.extent_recsz == 32)
		*lstart |= (uint64_t)get_le32(rec + 16) << 32;
	return 0;
}

static int map_variable(ek_inode *inode, uint64_t la, ek_extent *out,
			ek_error *err)
{
	struct zmap_inode *z = &inode->z;
	uint64_t lo = 0, hi = z->extent_count, pstart, lstart, next;
	uint32_t plen;
	int ret;

	/* Last record whose logical start is <= la. */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		ret = read_var(inode, mid, &plen, &pstart, &lstart, err);
		if (ret)
			return ret;
		if (lstart <= la)
			lo = mid;
		else
			hi = mid;
	}
	ret = read_var(inode, lo, &plen, &pstart, &lstart, err);
	if (ret)
		return ret;
	if (lstart > la)
		return bad(inode, err, "no extent covers the offset", lo);
	next = inode->raw.size;
	if (lo + 1 < z->extent_count) {
		uint32_t p2;
		uint64_t s2;

		ret = read_var(inode, lo + 1, &p2, &s2, &next, err);
		if (ret)
			return ret;
	}
	if (next <= la || next > inode->raw.size)
		return bad(inode, err, "extents out of order", lo);
	out->logical = lstart;
	out->length = next - lstart;
	if (z->tail_fragment && lo == z->extent_count - 1) {
		out->kind = EK_EXTENT_FRAGMENT;
		out->physical = plen | (pstart << 32);
		out->physical_length = out->length;
		return 0;
	}
	return describe(inode, lo, plen, pstart, out, err);
}

int zextents_map(ek_inode *inode, uint64_t la, ek_extent *out, ek_error *err)
{
	int ret = inode->z.extent_recsz <= 8 ? map_fixed(inode, la, out, err)
					     : map_variable(inode, la, out, err);

	if (!ret && out->length > EROFS_MAX_EXTENT_BYTES && out->kind != EK_EXTENT_HOLE)
		return bad(inode, err, "extent decodes to more than 12 MiB", la);
	return ret;
}
