/* Directory blocks (spec 4): sizing, encoding, parsing and rejections. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/dir.h"
#include "spec_image.h"

#define MAX_ENTS 512u   /* >= fmt_dirblock_max_entries(4096) */

/* ------------------------------------------------------------ helpers */

struct names {
	size_t n;
	char **name;
	struct fmt_dirent_in *ents;
};

static int cmp_str(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t lx = strlen(x), ly = strlen(y);

	return fmt_name_cmp((const uint8_t *)x, lx, (const uint8_t *)y, ly);
}

/* Sorted entries for the given names plus "." and ".."; nid = 1000 + the
 * entry's sorted position, type cycles through 1..7. */
static void names_init(struct names *s, char **names, size_t n)
{
	size_t i;

	s->n = n + 2;
	s->name = calloc(s->n, sizeof(*s->name));
	s->ents = calloc(s->n, sizeof(*s->ents));
	assert_non_null(s->name);
	assert_non_null(s->ents);
	s->name[0] = strdup(".");
	s->name[1] = strdup("..");
	for (i = 0; i < n; i++)
		s->name[i + 2] = names[i];
	qsort(s->name, s->n, sizeof(*s->name), cmp_str);
	for (i = 0; i < s->n; i++) {
		s->ents[i].name = (const uint8_t *)s->name[i];
		s->ents[i].name_len = (uint16_t)strlen(s->name[i]);
		s->ents[i].nid = 1000 + i;
		s->ents[i].type = (uint8_t)(1 + i % 7);
	}
}

static void names_free(struct names *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->name[i]);
	free(s->name);
	free(s->ents);
}

/*
 * Encode, then parse every block and compare with the input: each entry
 * back in order, names globally sorted, the size as the spec defines it.
 * Returns the number of blocks.
 */
static uint64_t check_dir(const struct names *s, uint32_t blksz,
			  uint64_t expect_size, uint16_t *nameoff0s,
			  unsigned int *zero_tails)
{
	uint64_t size = fmt_dir_size(s->ents, s->n, blksz);
	uint64_t nblocks, b;
	uint8_t *data;
	struct fmt_dirent *ents = calloc(MAX_ENTS, sizeof(*ents));
	size_t k = 0;
	const uint8_t *prev = NULL;
	size_t prev_len = 0;

	assert_non_null(ents);
	if (expect_size)
		assert_int_equal(size, expect_size);
	nblocks = (size + blksz - 1) / blksz;
	data = malloc(nblocks * blksz);
	assert_non_null(data);
	memset(data, 0xEE, nblocks * blksz);
	fmt_dir_encode(s->ents, s->n, blksz, data);
	for (b = 0; b < nblocks; b++) {
		const uint8_t *blk = data + b * blksz;
		size_t valid = b + 1 < nblocks ? blksz : size - b * blksz;
		unsigned int count = 0, i;
		fmt_why why = { { 0 } };
		size_t end;

		assert_int_equal(fmt_dirblock_parse(blk, valid, blksz, ents,
						    &count, &why), 0);
		assert_true(count > 0);
		assert_true(count <= fmt_dirblock_max_entries(blksz));
		assert_int_equal(get_le16(blk + 8), count * 12);
		if (nameoff0s)
			nameoff0s[b] = get_le16(blk + 8);
		for (i = 0; i < count; i++, k++) {
			assert_true(k < s->n);
			assert_int_equal(ents[i].nid, s->ents[k].nid);
			assert_int_equal(ents[i].type, s->ents[k].type);
			assert_int_equal(ents[i].name_len, s->ents[k].name_len);
			assert_memory_equal(ents[i].name, s->ents[k].name,
					    s->ents[k].name_len);
			/* the reserved byte is zero */
			assert_int_equal(blk[i * 12 + 11], 0);
			if (prev)
				assert_true(fmt_name_cmp(prev, prev_len, ents[i].name,
							 ents[i].name_len) < 0);
			prev = ents[i].name;
			prev_len = ents[i].name_len;
		}
		/* names are packed; the rest of a non-last block is zero */
		end = (size_t)(ents[count - 1].name - blk) + ents[count - 1].name_len;
		assert_true(end <= valid);
		if (b + 1 < nblocks) {
			for (i = (unsigned int)end; i < blksz; i++)
				assert_int_equal(blk[i], 0);
			/* greedy fill: the next entry would not have fitted */
			assert_true(end + 12 + s->ents[k].name_len > blksz);
		} else {
			assert_int_equal(end, valid);
		}
		if (zero_tails)
			zero_tails[b] = (unsigned int)(blksz - end);
		/* prev stays valid: data lives until the end */
	}
	assert_int_equal(k, s->n);
	free(data);
	free(ents);
	return nblocks;
}

/* The root directory of spec A.11: 300 names of 33 bytes plus one short
 * name, i.e. 303 entries with "." and "..". */
static void a11_names(struct names *s)
{
	char *names[301];
	unsigned int i;

	for (i = 0; i < 300; i++) {
		char buf[64];

		snprintf(buf, sizeof(buf), "entry-name-padded-to-33-bytes-%03u", i);
		names[i] = strdup(buf);
		assert_int_equal(strlen(names[i]), 33);
	}
	names[300] = strdup("abc");
	names_init(s, names, 301);
}

/* ------------------------------------------------------------ tests */

static void test_empty_dir(void **state)
{
	struct names s;
	uint8_t data[64];
	struct fmt_dirent ents[MAX_ENTS];
	unsigned int count;
	fmt_why why;

	(void)state;
	names_init(&s, NULL, 0);
	assert_int_equal(fmt_dir_size(s.ents, s.n, 4096), 27);
	assert_int_equal(fmt_dir_size(s.ents, s.n, 512), 27);
	memset(data, 0xEE, sizeof(data));
	fmt_dir_encode(s.ents, s.n, 4096, data);
	/* the encoder writes exactly 27 bytes for the last block */
	assert_int_equal(data[27], 0xEE);
	assert_int_equal(get_le16(data + 8), 24);
	assert_int_equal(get_le16(data + 20), 25);
	assert_memory_equal(data + 24, "...", 3);
	assert_int_equal(fmt_dirblock_parse(data, 27, 4096, ents, &count, &why), 0);
	assert_int_equal(count, 2);
	assert_int_equal(ents[0].name_len, 1);
	assert_int_equal(ents[1].name_len, 2);
	assert_memory_equal(ents[1].name, "..", 2);
	assert_int_equal(ents[0].nid, 1000);
	assert_int_equal(ents[1].nid, 1001);
	names_free(&s);
}

/* The inline directory of spec 11.3, both ways. */
static void test_spec_dir_bytes(void **state)
{
	uint8_t *img = malloc(SPEC_IMAGE_SIZE);
	static const struct fmt_dirent_in in[3] = {
		{ (const uint8_t *)".", 1, 36, EROFS_FT_DIR },
		{ (const uint8_t *)"..", 2, 36, EROFS_FT_DIR },
		{ (const uint8_t *)"hello.txt", 9, 39, EROFS_FT_REG },
	};
	struct fmt_dirent ents[MAX_ENTS];
	unsigned int count;
	fmt_why why;
	uint8_t out[48];

	(void)state;
	assert_non_null(img);
	spec_image_build(img, false);
	assert_int_equal(fmt_dir_size(in, 3, 4096), 48);
	fmt_dir_encode(in, 3, 4096, out);
	assert_memory_equal(out, img + 0x4A0, 48);
	assert_int_equal(fmt_dirblock_parse(img + 0x4A0, 48, 4096, ents, &count,
					    &why), 0);
	assert_int_equal(count, 3);
	assert_int_equal(ents[2].nid, 39);
	assert_int_equal(ents[2].type, EROFS_FT_REG);
	assert_int_equal(ents[2].name_len, 9);
	assert_memory_equal(ents[2].name, "hello.txt", 9);
	free(img);
}

/* Spec A.11: size 13548; nameoff0 1116, 1092, 1092, 336; the last names
 * of the blocks are followed by 4, 1, 1 and 0 zero bytes. */
static void test_large_dir_a11(void **state)
{
	struct names s;
	uint16_t nameoff0[8];
	unsigned int tails[8];

	(void)state;
	a11_names(&s);
	assert_int_equal(s.n, 303);
	assert_int_equal(check_dir(&s, 4096, 13548, nameoff0, tails), 4);
	assert_int_equal(nameoff0[0], 1116);
	assert_int_equal(nameoff0[1], 1092);
	assert_int_equal(nameoff0[2], 1092);
	assert_int_equal(nameoff0[3], 336);
	assert_int_equal(tails[0], 4);
	assert_int_equal(tails[1], 1);
	assert_int_equal(tails[2], 1);
	/* the last block's valid bytes end with its last name */
	assert_int_equal(tails[3], 4096 - 1260);
	names_free(&s);
}

static void test_large_dir_512(void **state)
{
	struct names s;
	uint64_t nblocks;

	(void)state;
	a11_names(&s);
	/* 45 bytes per entry, 11 per 512-byte block */
	nblocks = check_dir(&s, 512, 0, NULL, NULL);
	assert_true(nblocks >= 28);
	names_free(&s);
}

static void test_name_255(void **state)
{
	char *names[40];
	struct names s;
	unsigned int i;

	(void)state;
	for (i = 0; i < 40; i++) {
		char buf[256];

		memset(buf, 'n', 252);
		snprintf(buf + 252, 4, "%03u", i);
		names[i] = strdup(buf);
		assert_int_equal(strlen(names[i]), 255);
	}
	names_init(&s, names, 40);
	/* 4096: 15 entries of 267 bytes per block */
	assert_int_equal(check_dir(&s, 4096, 0, NULL, NULL), 3);
	/* 512: "." ".." and one long name, then one long name per block */
	assert_int_equal(check_dir(&s, 512, 39 * 512 + 267, NULL, NULL), 40);
	names_free(&s);
}

/* A block filled to its last byte: the last name ends at the block end
 * without any NUL after it. */
static void test_exactly_full_block(void **state)
{
	char *names[2];
	struct names s;
	char a[231], b[232];

	(void)state;
	memset(a, 'a', 230);
	a[230] = '\0';
	memset(b, 'b', 231);
	b[231] = '\0';
	names[0] = strdup(a);
	names[1] = strdup(b);
	names_init(&s, names, 2);
	/* 4 * 12 + 1 + 2 + 230 + 231 = 512 */
	assert_int_equal(check_dir(&s, 512, 512, NULL, NULL), 1);
	names_free(&s);
}

static void test_names_sorted_before_dot(void **state)
{
	char *names[4];
	struct names s;

	(void)state;
	names[0] = strdup("-dash");
	names[1] = strdup("+plus");
	names[2] = strdup("zeta");
	names[3] = strdup("\xC3\xA9t\xC3\xA9");  /* bytes >= 0x80 sort last */
	names_init(&s, names, 4);
	assert_string_equal(s.name[0], "+plus");
	assert_string_equal(s.name[1], "-dash");
	assert_string_equal(s.name[2], ".");
	assert_string_equal(s.name[3], "..");
	assert_string_equal(s.name[5], "\xC3\xA9t\xC3\xA9");
	check_dir(&s, 4096, 6 * 12 + 5 + 5 + 1 + 2 + 4 + 5, NULL, NULL);
	names_free(&s);
}

static void test_name_cmp(void **state)
{
	(void)state;
	assert_true(fmt_name_cmp((const uint8_t *)"a", 1, (const uint8_t *)"ab", 2) < 0);
	assert_true(fmt_name_cmp((const uint8_t *)"ab", 2, (const uint8_t *)"a", 1) > 0);
	assert_true(fmt_name_cmp((const uint8_t *)".", 1, (const uint8_t *)"..", 2) < 0);
	assert_int_equal(fmt_name_cmp((const uint8_t *)"same", 4,
				      (const uint8_t *)"same", 4), 0);
	/* unsigned bytes */
	assert_true(fmt_name_cmp((const uint8_t *)"\x80", 1, (const uint8_t *)"z", 1) > 0);
	assert_true(fmt_name_cmp((const uint8_t *)"-", 1, (const uint8_t *)".", 1) < 0);
	/* only the given lengths count */
	assert_int_equal(fmt_name_cmp((const uint8_t *)"abc", 2,
				      (const uint8_t *)"abd", 2), 0);
	assert_true(fmt_name_cmp((const uint8_t *)"b", 1, (const uint8_t *)"abc", 3) > 0);
	assert_true(fmt_name_cmp((const uint8_t *)"", 0, (const uint8_t *)"a", 1) < 0);
}

/* ------------------------------------------------------------ rejects */

/* A hand-made block: entries ".", "..", then `extra` names. */
struct rawblk {
	uint8_t data[4096];
	size_t valid;
};

static void raw_build(struct rawblk *r, const char *const *names,
		      const size_t *lens, unsigned int n)
{
	size_t off = 12u * n;
	unsigned int i;

	memset(r->data, 0, sizeof(r->data));
	for (i = 0; i < n; i++) {
		uint8_t *d = r->data + 12 * i;

		put_le64(d, 100 + i);
		put_le16(d + 8, (uint16_t)off);
		d[10] = EROFS_FT_REG;
		memcpy(r->data + off, names[i], lens[i]);
		off += lens[i];
	}
	r->valid = off;
}

static void raw_simple(struct rawblk *r)
{
	static const char *const names[] = { ".", "..", "alpha", "beta" };
	static const size_t lens[] = { 1, 2, 5, 4 };

	raw_build(r, names, lens, 4);
	assert_int_equal(r->valid, 48 + 12);
}

static void expect_parse(const struct rawblk *r, size_t valid, int code)
{
	struct fmt_dirent ents[MAX_ENTS];
	unsigned int count = 0;
	fmt_why why;

	memset(&why, 0, sizeof(why));
	assert_int_equal(fmt_dirblock_parse(r->data, valid, 4096, ents, &count,
					    &why), code);
	if (code)
		assert_true(strlen(why.text) > 0);
}

static void test_raw_valid(void **state)
{
	struct rawblk r;
	struct fmt_dirent ents[MAX_ENTS];
	unsigned int count;
	fmt_why why;

	(void)state;
	raw_simple(&r);
	assert_int_equal(fmt_dirblock_parse(r.data, r.valid, 4096, ents, &count,
					    &why), 0);
	assert_int_equal(count, 4);
	assert_int_equal(ents[3].name_len, 4);
	/* trailing zero padding up to the block end is fine too */
	assert_int_equal(fmt_dirblock_parse(r.data, 4096, 4096, ents, &count,
					    &why), 0);
	assert_int_equal(ents[3].name_len, 4);
	assert_int_equal(ents[3].nid, 103);
}

static void test_reject_nameoff0_small(void **state)
{
	struct rawblk r;

	(void)state;
	raw_simple(&r);
	put_le16(r.data + 8, 8);
	expect_parse(&r, r.valid, -EUCLEAN);
	put_le16(r.data + 8, 0);
	expect_parse(&r, r.valid, -EUCLEAN);
	put_le16(r.data + 8, 11);
	expect_parse(&r, r.valid, -EUCLEAN);
}

static void test_reject_nameoff0_large(void **state)
{
	struct rawblk r;

	(void)state;
	raw_simple(&r);
	put_le16(r.data + 8, 4096);
	expect_parse(&r, 4096, -EUCLEAN);
	put_le16(r.data + 8, 0xFFFC);
	expect_parse(&r, 4096, -EUCLEAN);
}

static void test_reject_nameoff0_past_valid(void **state)
{
	struct rawblk r;

	(void)state;
	raw_simple(&r);
	/* valid bytes end before the dirent array does */
	expect_parse(&r, 47, -EUCLEAN);
	expect_parse(&r, 48, -EUCLEAN);
	expect_parse(&r, 30, -EUCLEAN);
}

static void test_reject_offsets_not_increasing(void **state)
{
	struct rawblk r;

	(void)state;
	raw_simple(&r);
	/* entry 2 starts where entry 1 does: ".." becomes empty */
	put_le16(r.data + 24 + 8, get_le16(r.data + 12 + 8));
	expect_parse(&r, r.valid, -EUCLEAN);
	raw_simple(&r);
	/* entry 3 before entry 2 */
	put_le16(r.data + 36 + 8, get_le16(r.data + 24 + 8) - 1);
	expect_parse(&r, r.valid, -EUCLEAN);
	raw_simple(&r);
	/* a middle name reaching past the valid bytes */
	put_le16(r.data + 36 + 8, 70);
	expect_parse(&r, 65, -EUCLEAN);
	raw_simple(&r);
	/* the last name starting at the valid end (empty) */
	put_le16(r.data + 36 + 8, (uint16_t)r.valid);
	expect_parse(&r, r.valid, -EUCLEAN);
}

static void test_reject_long_name(void **state)
{
	static char big[257];
	const char *names[3] = { ".", "..", big };
	size_t lens[3] = { 1, 2, 256 };
	struct rawblk r;

	(void)state;
	memset(big, 'x', 256);
	/* as the last name */
	raw_build(&r, names, lens, 3);
	expect_parse(&r, r.valid, -EUCLEAN);
	expect_parse(&r, 4096, -EUCLEAN);
	/* 255 is fine */
	lens[2] = 255;
	raw_build(&r, names, lens, 3);
	expect_parse(&r, r.valid, 0);
	/* as a middle name */
	{
		const char *n4[4] = { ".", "..", big, "y" };
		size_t l4[4] = { 1, 2, 256, 1 };

		raw_build(&r, n4, l4, 4);
		expect_parse(&r, r.valid, -EUCLEAN);
	}
}

static void test_reject_slash(void **state)
{
	static const char *const names[] = { ".", "..", "a/b", "c" };
	static const size_t lens[] = { 1, 2, 3, 1 };
	static const char *const last[] = { ".", "..", "c/" };
	static const size_t last_lens[] = { 1, 2, 2 };
	struct rawblk r;

	(void)state;
	raw_build(&r, names, lens, 4);
	expect_parse(&r, r.valid, -EUCLEAN);
	raw_build(&r, last, last_lens, 3);
	expect_parse(&r, r.valid, -EUCLEAN);
}

static void test_reject_nul_in_name(void **state)
{
	static const char *const names[] = { ".", "..", "a\0b", "c" };
	static const size_t lens[] = { 1, 2, 3, 1 };
	static const char *const last[] = { ".", "..", "ab\0cd" };
	static const size_t last_lens[] = { 1, 2, 5 };
	struct fmt_dirent ents[MAX_ENTS];
	unsigned int count;
	fmt_why why;
	struct rawblk r;

	(void)state;
	raw_build(&r, names, lens, 4);
	expect_parse(&r, r.valid, -EUCLEAN);
	/* a NUL as the first byte of a middle name */
	{
		static const char *const n2[] = { ".", "..", "\0b", "c" };
		static const size_t l2[] = { 1, 2, 2, 1 };

		raw_build(&r, n2, l2, 4);
		expect_parse(&r, r.valid, -EUCLEAN);
	}
	/* the last name ends at its first NUL (spec 4.4) */
	raw_build(&r, last, last_lens, 3);
	assert_int_equal(fmt_dirblock_parse(r.data, r.valid, 4096, ents, &count,
					    &why), 0);
	assert_int_equal(count, 3);
	assert_int_equal(ents[2].name_len, 2);
	/* ... so a last name starting with NUL is empty */
	{
		static const char *const n3[] = { ".", "..", "\0x" };
		static const size_t l3[] = { 1, 2, 2 };

		raw_build(&r, n3, l3, 3);
		expect_parse(&r, r.valid, -EUCLEAN);
	}
}

static void test_reject_file_type(void **state)
{
	struct rawblk r;
	unsigned int t;

	(void)state;
	for (t = 0; t < 8; t++) {
		raw_simple(&r);
		r.data[24 + 10] = (uint8_t)t;
		expect_parse(&r, r.valid, 0);
	}
	for (t = 8; t < 256; t += 31) {
		raw_simple(&r);
		r.data[24 + 10] = (uint8_t)t;
		expect_parse(&r, r.valid, -EUCLEAN);
		raw_simple(&r);
		r.data[36 + 10] = (uint8_t)t;   /* the last entry too */
		expect_parse(&r, r.valid, -EUCLEAN);
	}
}

static void test_reject_unsorted(void **state)
{
	static const char *const names[] = { ".", "..", "beta", "alpha" };
	static const size_t lens[] = { 1, 2, 4, 5 };
	static const char *const dots[] = { "..", ".", "x" };
	static const size_t dot_lens[] = { 2, 1, 1 };
	static const char *const prefix[] = { ".", "..", "ab", "a" };
	static const size_t prefix_lens[] = { 1, 2, 2, 1 };
	struct rawblk r;

	(void)state;
	raw_build(&r, names, lens, 4);
	expect_parse(&r, r.valid, -EUCLEAN);
	raw_build(&r, dots, dot_lens, 3);
	expect_parse(&r, r.valid, -EUCLEAN);
	raw_build(&r, prefix, prefix_lens, 4);
	expect_parse(&r, r.valid, -EUCLEAN);
}

static void test_reject_duplicate(void **state)
{
	static const char *const names[] = { ".", "..", "same", "same" };
	static const size_t lens[] = { 1, 2, 4, 4 };
	static const char *const dots[] = { ".", ".", "z" };
	static const size_t dot_lens[] = { 1, 1, 1 };
	struct rawblk r;

	(void)state;
	raw_build(&r, names, lens, 4);
	expect_parse(&r, r.valid, -EUCLEAN);
	raw_build(&r, dots, dot_lens, 3);
	expect_parse(&r, r.valid, -EUCLEAN);
}

static void test_reject_tiny_valid(void **state)
{
	struct rawblk r;

	(void)state;
	raw_simple(&r);
	expect_parse(&r, 11, -EUCLEAN);
	expect_parse(&r, 0, -EUCLEAN);
	expect_parse(&r, 1, -EUCLEAN);
}

/* As many entries as a block can hold, parsed into an array of exactly
 * fmt_dirblock_max_entries() elements (ASan catches any overrun). */
static void test_max_packed_block(void **state)
{
	static const uint32_t sizes[] = { 512, 1024, 2048, 4096 };
	unsigned int s;

	(void)state;
	for (s = 0; s < 4; s++) {
		uint32_t blksz = sizes[s];
		unsigned int max = fmt_dirblock_max_entries(blksz), n = 0, i, count;
		struct fmt_dirent_in *in = calloc(max + 1, sizeof(*in));
		uint8_t (*names)[2] = calloc(max + 1, 2);
		struct fmt_dirent *ents = malloc(max * sizeof(*ents));
		uint8_t *blk = calloc(1, blksz);
		size_t used = 0;
		fmt_why why;

		assert_non_null(in);
		assert_non_null(names);
		assert_non_null(ents);
		assert_non_null(blk);
		/* 1-byte names 0x01..0xFF (skipping '/'), then 2-byte ones */
		for (i = 1; n < max + 1; i++) {
			uint16_t len;

			if (i < 256) {
				if (i == '/')
					continue;
				names[n][0] = (uint8_t)i;
				len = 1;
			} else {
				if (i - 255 == '/')
					continue;
				names[n][0] = 0xFF;
				names[n][1] = (uint8_t)(i - 255);
				len = 2;
			}
			if (used + 12 + len > blksz)
				break;
			in[n].name = names[n];
			in[n].name_len = len;
			in[n].nid = n;
			in[n].type = EROFS_FT_REG;
			used += 12 + len;
			n++;
		}
		assert_true(n <= max);
		assert_int_equal(fmt_dir_size(in, n, blksz), used);
		fmt_dir_encode(in, n, blksz, blk);
		if (fmt_dirblock_parse(blk, used, blksz, ents, &count, &why))
			fail_msg("%u-byte block, %u entries: %s", blksz, n, why.text);
		assert_int_equal(count, n);
		assert_int_equal(ents[n - 1].nid, n - 1);
		free(blk);
		free(ents);
		free(names);
		free(in);
	}
}

/* Random and half-valid blocks never make the parser read or write out
 * of bounds (run under ASan), and results are self-consistent. */
static void test_parse_random_blocks(void **state)
{
	uint32_t seed = 2024;
	unsigned int round, accepted = 0;

	(void)state;
	for (round = 0; round < 20000; round++) {
		uint32_t blksz = 512u << (round % 4);
		unsigned int max = fmt_dirblock_max_entries(blksz), count = 0, i;
		struct fmt_dirent *ents = malloc(max * sizeof(*ents));
		uint8_t *blk = malloc(blksz);
		size_t valid;
		fmt_why why;
		int ret;

		assert_non_null(ents);
		assert_non_null(blk);
		for (i = 0; i < blksz; i++) {
			seed = seed * 1103515245u + 12345u;
			blk[i] = (uint8_t)(seed >> 16);
		}
		seed = seed * 1103515245u + 12345u;
		valid = (seed >> 8) % (blksz + 1);
		/* often a plausible header: n entries, increasing offsets */
		if (round % 3) {
			unsigned int n = 1 + (seed >> 4) % (round % 5 ? 3 : max + 30);
			uint32_t off = 12 * n;

			for (i = 0; i < n && 12 * i + 12 <= blksz; i++) {
				put_le16(blk + 12 * i + 8, (uint16_t)off);
				blk[12 * i + 10] = (uint8_t)(i % 8);
				off += 1 + (blk[12 * i] % 3);
			}
		}
		ret = fmt_dirblock_parse(blk, valid, blksz, ents, &count, &why);
		if (ret == 0) {
			accepted++;
			assert_true(count >= 1 && count <= max);
			for (i = 0; i < count; i++) {
				assert_true(ents[i].name >= blk + 12 * count);
				assert_true(ents[i].name + ents[i].name_len <= blk + valid);
				assert_true(ents[i].name_len >= 1 && ents[i].name_len <= 255);
				assert_true(ents[i].type < 8);
			}
		} else {
			assert_int_equal(ret, -EUCLEAN);
		}
		free(blk);
		free(ents);
	}
	/* both outcomes were exercised */
	assert_true(accepted > 100);
	assert_true(accepted < 19000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_dir),
		cmocka_unit_test(test_spec_dir_bytes),
		cmocka_unit_test(test_large_dir_a11),
		cmocka_unit_test(test_large_dir_512),
		cmocka_unit_test(test_name_255),
		cmocka_unit_test(test_exactly_full_block),
		cmocka_unit_test(test_names_sorted_before_dot),
		cmocka_unit_test(test_name_cmp),
		cmocka_unit_test(test_raw_valid),
		cmocka_unit_test(test_reject_nameoff0_small),
		cmocka_unit_test(test_reject_nameoff0_large),
		cmocka_unit_test(test_reject_nameoff0_past_valid),
		cmocka_unit_test(test_reject_offsets_not_increasing),
		cmocka_unit_test(test_reject_long_name),
		cmocka_unit_test(test_reject_slash),
		cmocka_unit_test(test_reject_nul_in_name),
		cmocka_unit_test(test_reject_file_type),
		cmocka_unit_test(test_reject_unsorted),
		cmocka_unit_test(test_reject_duplicate),
		cmocka_unit_test(test_reject_tiny_valid),
		cmocka_unit_test(test_max_packed_block),
		cmocka_unit_test(test_parse_random_blocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
