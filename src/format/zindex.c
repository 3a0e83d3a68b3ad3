/* Compressed-file metadata: header, full and compact indexes, configs. */
#include <errno.h>
#include <string.h>

#include "format/zindex.h"

void fmt_zmap_header_decode(const uint8_t *p, struct fmt_zmap_header *h)
{
	memset(h, 0, sizeof(*h));
	h->fragment_off_lo = get_le32(p);
	h->idata_size = get_le16(p + 2);
	h->advise = get_le16(p + 4);
	h->algorithm_type = p[6];
	h->clusterbits = p[7];
	if (p[7] & Z_WHOLE_FRAGMENT_BIT) {
		h->whole_fragment = true;
		h->whole_fragment_off = get_le64(p) & ~(1ull << 63);
	}
	h->extent_count = get_le32(p) | ((uint64_t)get_le16(p + 6) << 32);
}

void fmt_zmap_header_encode(uint8_t *p, uint16_t advise, uint8_t algorithm,
			    uint32_t fragment_or_idata)
{
	memset(p, 0, Z_HEADER_SIZE);
	if (advise & Z_ADVISE_FRAGMENT_PCLUSTER)
		put_le32(p, fragment_or_idata);
	else if (advise & Z_ADVISE_INLINE_PCLUSTER)
		put_le16(p + 2, (uint16_t)fragment_or_idata);
	put_le16(p + 4, advise);
	p[6] = algorithm;
	p[7] = 0;    /* lclusterbits == blkszbits */
}

void fmt_zmap_header_encode_extents(uint8_t *p, uint16_t advise, uint64_t count)
{
	put_le32(p, (uint32_t)count);
	put_le16(p + 4, advise);
	put_le16(p + 6, (uint16_t)(count >> 32));
}

void fmt_zmap_header_encode_whole_fragment(uint8_t *p, uint64_t off)
{
	put_le64(p, off | (uint64_t)Z_WHOLE_FRAGMENT_BIT << 56);
}

void fmt_zindex_full_decode(const uint8_t *p, struct fmt_lcluster *lc)
{
	uint16_t advise = get_le16(p);

	memset(lc, 0, sizeof(*lc));
	lc->type = advise & 3u;
	lc->partial = advise & Z_PARTIAL_REF;
	lc->clusterofs = get_le16(p + 2);
	lc->blkaddr = get_le32(p + 4);
	lc->delta[0] = get_le16(p + 4);
	lc->delta[1] = get_le16(p + 6);
}

void fmt_zindex_full_encode(uint8_t *p, const struct fmt_lcluster *lc)
{
	put_le16(p, (uint16_t)(lc->type | (lc->partial ? Z_PARTIAL_REF : 0)));
	put_le16(p + 2, lc->clusterofs);
	if (lc->type == Z_LCLUSTER_NONHEAD) {
		put_le16(p + 4, lc->delta[0]);
		put_le16(p + 6, lc->delta[1]);
	} else {
		put_le32(p + 4, lc->blkaddr);
	}
}

void fmt_compact_layout_init(struct fmt_compact_layout *l, uint64_t ebase,
			     uint64_t total, bool compacted_2b)
{
	l->ebase = ebase;
	l->total = total;
	l->initial_4b = ((32 - ebase % 32) / 4) % 8;
	if (compacted_2b && l->initial_4b < total)
		l->middle_2b = (total - l->initial_4b) / 16 * 16;
	else
		l->middle_2b = 0;
}

uint64_t fmt_compact_pos(const struct fmt_compact_layout *l, uint64_t n,
			 unsigned int *unit)
{
	uint64_t a = l->initial_4b, b = l->middle_2b;

	if (n < a) {
		*unit = 4;
		return l->ebase + 4 * n;
	}
	if (n < a + b) {
		*unit = 2;
		return l->ebase + 4 * a + 2 * (n - a);
	}
	*unit = 4;
	return l->ebase + 4 * a + 2 * b + 4 * (n - a - b);
}

uint64_t fmt_compact_size(const struct fmt_compact_layout *l)
{
	uint64_t a = l->initial_4b < l->total ? l->initial_4b : l->total;
	uint64_t rest = l->total - a - l->middle_2b;

	/* 4-byte items come in pairs: an odd count is padded. */
	return 4 * round_up_u64(a, 2) + 2 * l->middle_2b +
	       4 * round_up_u64(rest, 2);
}

void fmt_compact_item(const uint8_t *pack, unsigned int unit, unsigned int i,
		      unsigned int lobits, uint8_t *type, uint16_t *lo)
{
	unsigned int bits = fmt_compact_encodebits(unit);
	unsigned int pos = i * bits;
	/* An item spans at most three bytes; read 32 bits little-endian
	 * from its first byte (the pack is long enough: the base address
	 * follows the items). */
	uint32_t v = get_le32(pack + pos / 8) >> (pos % 8);

	*lo = (uint16_t)(v & ((1u << lobits) - 1));
	*type = (uint8_t)((v >> lobits) & 3u);
}

void fmt_compact_set_item(uint8_t *pack, unsigned int unit, unsigned int i,
			  unsigned int lobits, uint8_t type, uint16_t lo)
{
	unsigned int bits = fmt_compact_encodebits(unit);
	unsigned int pos = i * bits;
	uint32_t mask = ((1u << bits) - 1) << (pos % 8);
	uint32_t item = ((uint32_t)lo | ((uint32_t)type << lobits)) << (pos % 8);
	uint32_t v = get_le32(pack + pos / 8);

	put_le32(pack + pos / 8, (v & ~mask) | (item & mask));
}

int fmt_compact_head_nblk(const uint8_t *pack, unsigned int unit,
			  unsigned int i, unsigned int lobits, bool big,
			  uint64_t *nblk)
{
	int j = (int)i - 1;
	uint64_t n = big ? 0 : 1;

	while (j >= 0) {
		uint8_t t;
		uint16_t lo;

		fmt_compact_item(pack, unit, (unsigned int)j, lobits, &t, &lo);
		if (t != Z_LCLUSTER_NONHEAD) {
			n++;              /* a one-block pcluster */
			j--;
			continue;
		}
		if (lo & Z_CBLKCNT) {
			if (!big)
				return -EUCLEAN;
			n += lo & Z_CBLKCNT_MASK;
			j -= 2;           /* and skip its head */
			continue;
		}
		if (big) {
			if (lo < 2)
				return -EUCLEAN;
			j = j - lo + 1;   /* to the count item of that pcluster */
		} else {
			if (lo == 0)
				return -EUCLEAN;
			j -= lo;
			if (j >= 0) {
				n++;      /* the head it points at */
				j--;
			}
		}
	}
	*nblk = n;
	return 0;
}

size_t fmt_zconfig_min_size(unsigned int alg)
{
	switch (alg) {
	case 0: return 14;  /* lz4 */
	case 1: return 14;  /* lzma */
	case 2: return 6;   /* deflate */
	case 3: return 6;   /* zstd */
	default: return 0;
	}
}

int fmt_zconfig_decode(unsigned int alg, const uint8_t *payload, size_t len,
		       uint32_t blksz, struct fmt_zconfig *cfg, fmt_why *why)
{
	if (alg >= 4) {
		fmt_why_set(why, "unknown compression algorithm %u", alg);
		return -EOPNOTSUPP;
	}
	if (len < fmt_zconfig_min_size(alg)) {
		fmt_why_set(why, "compression record of algorithm %u: %zu bytes, need %zu",
			    alg, len, fmt_zconfig_min_size(alg));
		return -EUCLEAN;
	}
	switch (alg) {
	case 0:
		cfg->lz4_max_distance = get_le16(payload);
		cfg->lz4_max_pclusterblks = get_le16(payload + 2);
		if (cfg->lz4_max_pclusterblks > EROFS_MAX_PCLUSTER_BYTES / blksz) {
			fmt_why_set(why, "lz4 max_pclusterblks %u exceeds 1 MiB",
				    cfg->lz4_max_pclusterblks);
			return -EUCLEAN;
		}
		break;
	case 1: {
		uint32_t dict = get_le32(payload);
		uint16_t format = get_le16(payload + 4);

		if (format != 0) {
			fmt_why_set(why, "lzma record format %u (must be 0)", format);
			return -EOPNOTSUPP;
		}
		if (dict < 4096 || dict > (8u << 20)) {
			fmt_why_set(why, "lzma dictionary size %u outside 4 KiB..8 MiB", dict);
			return -EUCLEAN;
		}
		cfg->lzma_dict_size = dict;
		break;
	}
	case 2:
		if (payload[0] > 15) {
			fmt_why_set(why, "deflate windowbits %u exceeds 15", payload[0]);
			return -EUCLEAN;
		}
		cfg->deflate_windowbits = payload[0];
		break;
	case 3:
		if (payload[0] != 0) {
			fmt_why_set(why, "zstd record format %u (must be 0)", payload[0]);
			return -EOPNOTSUPP;
		}
		if (payload[1] > 10) {
			fmt_why_set(why, "zstd window log %u + 10 exceeds 1 MiB", payload[1]);
			return -EUCLEAN;
		}
		cfg->zstd_windowlog = (uint8_t)(payload[1] + 10);
		break;
	}
	return 0;
}

size_t fmt_zconfig_encode(unsigned int alg, const struct fmt_zconfig *cfg,
			  uint8_t *out)
{
	size_t len = fmt_zconfig_min_size(alg);

	memset(out, 0, 2 + len + 3);
	put_le16(out, (uint16_t)len);
	switch (alg) {
	case 0:
		put_le16(out + 2, cfg->lz4_max_distance);
		put_le16(out + 4, cfg->lz4_max_pclusterblks);
		break;
	case 1:
		put_le32(out + 2, cfg->lzma_dict_size);
		break;
	case 2:
		out[2] = cfg->deflate_windowbits;
		break;
	case 3:
		out[3] = (uint8_t)(cfg->zstd_windowlog - 10);
		break;
	}
	return (2 + len + 3) & ~(size_t)3;
}
