/* Directory blocks: dirent array, then names, then zero padding. */
#include <errno.h>
#include <string.h>

#include "format/dir.h"

int fmt_name_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	int c = memcmp(a, b, n);

	if (c)
		return c;
	return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

int fmt_dirblock_parse(const uint8_t *blk, size_t valid, uint32_t blksz,
		       struct fmt_dirent *ents, unsigned int *count,
		       fmt_why *why)
{
	unsigned int n, i;
	uint16_t nameoff0;

	*count = 0;
	if (valid > blksz)
		valid = blksz;
	if (valid < EROFS_DIRENT_SIZE) {
		fmt_why_set(why, "directory block holds only %zu bytes", valid);
		return -EUCLEAN;
	}
	nameoff0 = get_le16(blk + 8);
	if (nameoff0 < EROFS_DIRENT_SIZE || nameoff0 >= blksz) {
		fmt_why_set(why, "first name offset %u outside [12, %u)",
			    nameoff0, blksz);
		return -EUCLEAN;
	}
	if (nameoff0 % EROFS_DIRENT_SIZE) {
		fmt_why_set(why, "first name offset %u is not a multiple of 12",
			    nameoff0);
		return -EUCLEAN;
	}
	if (nameoff0 >= valid) {
		fmt_why_set(why, "first name offset %u beyond the %zu valid bytes",
			    nameoff0, valid);
		return -EUCLEAN;
	}
	n = nameoff0 / EROFS_DIRENT_SIZE;
	for (i = 0; i < n; i++) {
		const uint8_t *d = blk + (size_t)i * EROFS_DIRENT_SIZE;
		struct fmt_dirent *e = &ents[i];
		uint16_t off = get_le16(d + 8);
		size_t end;

		e->nid = get_le64(d);
		e->type = d[10];
		if (i + 1 < n) {
			end = get_le16(d + EROFS_DIRENT_SIZE + 8);
			if (off >= end || end > valid) {
				fmt_why_set(why, "entry %u: name offsets %u..%zu out of order or past %zu bytes",
					    i, off, end, valid);
				return -EUCLEAN;
			}
		} else {
			const uint8_t *nul;

			if (off >= valid) {
				fmt_why_set(why, "entry %u: name offset %u past %zu bytes",
					    i, off, valid);
				return -EUCLEAN;
			}
			/* The last name ends at the first NUL or at the end
			 * of the valid bytes. */
			nul = memchr(blk + off, 0, valid - off);
			end = nul ? (size_t)(nul - blk) : valid;
		}
		if (i > 0 && off != (size_t)(ents[i - 1].name - blk) +
				   ents[i - 1].name_len) {
			fmt_why_set(why, "entry %u: names not contiguous", i);
			return -EUCLEAN;
		}
		if (i == 0 && off != nameoff0) {
			fmt_why_set(why, "entry 0: inconsistent name offset");
			return -EUCLEAN;
		}
		if (end - off == 0 || end - off > EROFS_NAME_MAX) {
			fmt_why_set(why, "entry %u: name length %zu not in 1..255",
				    i, end - off);
			return -EUCLEAN;
		}
		e->name = blk + off;
		e->name_len = (uint16_t)(end - off);
		if (memchr(e->name, '/', e->name_len) ||
		    memchr(e->name, '\0', e->name_len)) {
			fmt_why_set(why, "entry %u: name contains '/' or NUL", i);
			return -EUCLEAN;
		}
		if (e->type >= EROFS_FT_MAX) {
			fmt_why_set(why, "entry %u: invalid file type %u", i, e->type);
			return -EUCLEAN;
		}
		if (i > 0 && fmt_name_cmp(ents[i - 1].name, ents[i - 1].name_len,
					  e->name, e->name_len) >= 0) {
			fmt_why_set(why, "entry %u: names not in strictly increasing order", i);
			return -EUCLEAN;
		}
	}
	*count = n;
	return 0;
}

/* Calls back with [first, last) of each block; returns the total size. */
static uint64_t plan_blocks(const struct fmt_dirent_in *ents, size_t n,
			    uint32_t blksz, uint8_t *out)
{
	uint64_t total = 0;
	size_t first = 0;

	while (first < n) {
		size_t last = first, used = 0;
		uint8_t *blk = out ? out + total : NULL;

		while (last < n && used + EROFS_DIRENT_SIZE + ents[last].name_len <= blksz) {
			used += EROFS_DIRENT_SIZE + ents[last].name_len;
			last++;
		}
		if (blk) {
			size_t nameoff = (last - first) * EROFS_DIRENT_SIZE;
			size_t i;

			for (i = first; i < last; i++) {
				uint8_t *d = blk + (i - first) * EROFS_DIRENT_SIZE;

				put_le64(d, ents[i].nid);
				put_le16(d + 8, (uint16_t)nameoff);
				d[10] = ents[i].type;
				d[11] = 0;
				memcpy(blk + nameoff, ents[i].name, ents[i].name_len);
				nameoff += ents[i].name_len;
			}
			if (last < n)
				memset(blk + used, 0, blksz - used);
		}
		total += last < n ? blksz : used;
		first = last;
	}
	return total;
}

uint64_t fmt_dir_size(const struct fmt_dirent_in *ents, size_t n,
		      uint32_t blksz)
{
	return plan_blocks(ents, n, blksz, NULL);
}

void fmt_dir_encode(const struct fmt_dirent_in *ents, size_t n,
		    uint32_t blksz, uint8_t *out)
{
	plan_blocks(ents, n, blksz, out);
}
