/*
 * File contents: ek_read at every kind of offset and length, every file
 * whole, past the end and on a directory; ek_readlink for short and long
 * targets; ek_map extents of flat, inline and sparse (chunk-based) files.
 */
#include "lib_fixture.h"

/* ------------------------------------------------------------ read */

static void check_read(ek_inode *inode, const struct srcfile *f, uint64_t off,
		       size_t len)
{
	uint8_t *buf = malloc(len + 16);
	ek_error err = { 0, "" };
	size_t expect = off >= f->size ? 0 :
			(len < f->size - off ? len : (size_t)(f->size - off));
	ssize_t n;

	assert_non_null(buf);
	memset(buf, 0xA5, len + 16);
	n = ek_read(inode, buf, len, off, &err);
	if (n < 0)
		fail_msg("read %s at %llu+%zu: %s", f->path,
			 (unsigned long long)off, len, err.message);
	assert_int_equal(n, expect);
	if (expect)
		assert_memory_equal(buf, f->data + off, expect);
	/* nothing written past the returned bytes */
	assert_int_equal(buf[expect], 0xA5);
	free(buf);
}

static void test_read_offsets(void **state)
{
	static const size_t lens[] = { 0, 1, 2, 7, 511, 4095, 4096, 4097, 8192,
				       65536, 200000 };
	uint32_t seed = 777;
	unsigned int i;

	(void)state;
	for (i = 0; i < NTOP; i++) {
		const struct srcfile *f = &g.files[i];
		uint64_t offs[16];
		unsigned int k, l, noffs = 0;
		ek_inode *inode = get_path(f->path);

		assert_int_equal(ek_inode_stat(inode)->size, f->size);
		offs[noffs++] = 0;
		offs[noffs++] = 1;
		offs[noffs++] = 4095;
		offs[noffs++] = 4096;
		offs[noffs++] = 4097;
		offs[noffs++] = f->size ? f->size - 1 : 0;
		offs[noffs++] = f->size;
		offs[noffs++] = f->size + 1;
		offs[noffs++] = f->size + 10000;
		offs[noffs++] = UINT64_MAX - 10;
		for (k = 0; k < 4; k++)
			offs[noffs++] = f->size ? rng(&seed) % f->size : 0;
		for (k = 0; k < noffs; k++)
			for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
				check_read(inode, f, offs[k], lens[l]);
		/* random ranges */
		for (k = 0; k < 200; k++) {
			uint64_t off = rng(&seed) % (f->size + 100);

			check_read(inode, f, off, rng(&seed) % 9000);
		}
		ek_inode_put(inode);
	}
}

static void test_read_all_files(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < g.nfiles; i++) {
		ek_inode *inode = get_path(g.files[i].path);

		check_read(inode, &g.files[i], 0, g.files[i].size + 100);
		ek_inode_put(inode);
	}
}

static void test_read_past_eof_and_dir(void **state)
{
	ek_inode *inode = get_path("/b4097"), *dir = get_path("/sub");
	ek_inode *empty = get_path("/empty");
	ek_error err = { 0, "" };
	uint8_t buf[64];

	(void)state;
	assert_int_equal(ek_read(inode, buf, sizeof(buf), 4097, &err), 0);
	assert_int_equal(ek_read(inode, buf, sizeof(buf), 1ull << 62, &err), 0);
	assert_int_equal(ek_read(inode, buf, sizeof(buf), 4096, &err), 1);
	assert_int_equal(buf[0], find_file("/b4097")->data[4096]);
	assert_int_equal(ek_read(empty, buf, sizeof(buf), 0, &err), 0);
	expect_error((int)ek_read(dir, buf, sizeof(buf), 0, &err), -EISDIR, &err);
	ek_inode_put(empty);
	ek_inode_put(dir);
	ek_inode_put(inode);
}

/* ------------------------------------------------------------ readlink */

static void test_readlink(void **state)
{
	ek_inode *link = get_path("/link"), *file = get_path("/one");
	size_t len = strlen(LINK_TARGET);
	ek_error err = { 0, "" };
	char buf[4096];

	(void)state;
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(ek_readlink(link, buf, sizeof(buf), &err), len);
	assert_string_equal(buf, LINK_TARGET);
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(ek_readlink(link, buf, len + 1, &err), len);
	assert_string_equal(buf, LINK_TARGET);
	expect_error((int)ek_readlink(link, buf, len, &err), -ERANGE, &err);
	expect_error((int)ek_readlink(link, buf, 1, &err), -ERANGE, &err);
	expect_error((int)ek_readlink(file, buf, sizeof(buf), &err), -EINVAL, &err);
	ek_inode_put(file);
	ek_inode_put(link);
}

/* Long targets: 3000 bytes inline, 4095 bytes in a data block (spec 9). */
static void test_readlink_long(void **state)
{
	static const size_t lens[] = { 3000, 4095 };
	static const char *const paths[] = { "/link3000", "/link4095" };
	static const unsigned int layouts[] = { EROFS_LAYOUT_FLAT_INLINE,
						EROFS_LAYOUT_FLAT_PLAIN };
	char *buf = malloc(4096);
	ek_error err = { 0, "" };
	unsigned int i;
	size_t k;

	(void)state;
	assert_non_null(buf);
	for (i = 0; i < 2; i++) {
		ek_inode *link = get_path(paths[i]);
		ek_inode_detail d;

		ek_inode_get_detail(link, &d);
		assert_int_equal(d.layout, layouts[i]);
		assert_int_equal(ek_inode_stat(link)->size, lens[i]);
		memset(buf, 0, 4096);
		assert_int_equal(ek_readlink(link, buf, 4096, &err), lens[i]);
		for (k = 0; k < lens[i]; k++)
			assert_int_equal(buf[k], 'L');
		assert_int_equal(buf[lens[i]], '\0');
		expect_error((int)ek_readlink(link, buf, lens[i], &err), -ERANGE, &err);
		ek_inode_put(link);
	}
	free(buf);
}

/* ------------------------------------------------------------ map */

static void check_map(const struct srcfile *f, uint64_t off)
{
	check_map_in(g.img, g.image_bytes, g.image_size, 4096, f, off);
}

static void test_map_flat(void **state)
{
	unsigned int i;
	ek_inode *big = get_path("/big"), *empty = get_path("/empty");
	ek_inode *fit = get_path("/fit4064"), *nofit = get_path("/fit4065");
	ek_error err = { 0, "" };
	ek_inode_detail d;
	ek_extent e;

	(void)state;
	for (i = 0; i < g.nfiles; i++) {
		const struct srcfile *f = &g.files[i];

		if (!f->size)
			continue;
		check_map(f, 0);
		check_map(f, f->size - 1);
		check_map(f, f->size / 2);
		if (f->size > 4096)
			check_map(f, 4096);
	}
	/* big: 24 full blocks, then a 1696-byte tail */
	assert_int_equal(ek_map(big, 0, &e, &err), 0);
	assert_int_equal(e.logical, 0);
	assert_int_equal(e.length, 98304);
	assert_int_equal(e.kind, EK_EXTENT_PLAIN);
	assert_false(e.in_metadata);
	assert_int_equal(ek_map(big, 99000, &e, &err), 0);
	assert_int_equal(e.logical, 98304);
	assert_int_equal(e.length, 1696);
	assert_int_equal(e.kind, EK_EXTENT_PLAIN);
	assert_true(e.in_metadata);
	expect_error(ek_map(big, 100000, &e, &err), -EINVAL, &err);
	expect_error(ek_map(empty, 0, &e, &err), -EINVAL, &err);

	/* 32-byte core + 4064 bytes fill one block exactly: inline */
	ek_inode_get_detail(fit, &d);
	assert_int_equal(d.layout, EROFS_LAYOUT_FLAT_INLINE);
	assert_false(d.extended);
	assert_int_equal(d.inode_offset % 4096, 0);
	assert_int_equal(d.inline_size, 4064);
	assert_int_equal(ek_map(fit, 0, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_PLAIN);
	assert_true(e.in_metadata);
	assert_int_equal(e.length, 4064);
	/* one more byte does not fit */
	ek_inode_get_detail(nofit, &d);
	assert_int_equal(d.layout, EROFS_LAYOUT_FLAT_PLAIN);
	assert_int_equal(ek_map(nofit, 4064, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_PLAIN);
	assert_false(e.in_metadata);
	assert_int_equal(e.length, 4065);
	ek_inode_put(nofit);
	ek_inode_put(fit);
	ek_inode_put(empty);
	ek_inode_put(big);
}

static void test_map_sparse(void **state)
{
	ek_inode *sp = get_path("/sparse");
	ek_error err = { 0, "" };
	ek_inode_detail d;
	ek_extent e;
	uint64_t hole_bytes = 0, off;

	(void)state;
	ek_inode_get_detail(sp, &d);
	assert_int_equal(d.layout, EROFS_LAYOUT_CHUNK_BASED);
	assert_int_equal(ek_map(sp, 0, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_HOLE);
	assert_int_equal(ek_map(sp, SPARSE_DATA, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_PLAIN);
	assert_int_equal(ek_map(sp, SPARSE_DATA + 4999, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_PLAIN);
	assert_int_equal(ek_map(sp, SPARSE_SIZE - 1, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_HOLE);
	/* walk all extents: contiguous, covering the file, holes dominate */
	for (off = 0; off < SPARSE_SIZE; off = e.logical + e.length) {
		assert_int_equal(ek_map(sp, off, &e, &err), 0);
		assert_int_equal(e.logical, off);
		assert_true(e.length > 0);
		if (e.kind == EK_EXTENT_HOLE)
			hole_bytes += e.length;
		check_map(find_file("/sparse"), off);
	}
	assert_true(hole_bytes >= SPARSE_SIZE - (1u << 20));
	/* holes cost no space */
	assert_true(g.image_size < (2u << 20));
	ek_inode_put(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_offsets),
		cmocka_unit_test(test_read_all_files),
		cmocka_unit_test(test_read_past_eof_and_dir),
		cmocka_unit_test(test_readlink),
		cmocka_unit_test(test_readlink_long),
		cmocka_unit_test(test_map_flat),
		cmocka_unit_test(test_map_sparse),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
