/*
 * Opening images: the superblock as ek_get_super_info() reports it, an
 * image in memory, the open options (io_uring, decoder engines), and
 * images that are missing, truncated or fail their checksum.
 */
#include "format/super.h"
#include "lib_fixture.h"

/* ------------------------------------------------------------ super */

static void test_super_info(void **state)
{
	ek_super_info si;
	struct fmt_super sb;
	fmt_why why;
	char names[256];

	(void)state;
	ek_get_super_info(g.img, &si);
	assert_int_equal(si.block_size, 4096);
	assert_true(si.checksum_present);
	assert_true(si.feature_compat & EROFS_COMPAT_SB_CHKSUM);
	assert_true(si.feature_compat & EROFS_COMPAT_MTIME);
	assert_true(si.feature_compat & EROFS_COMPAT_XATTR_FILTER);
	/* uncompressed; the sparse file is chunk based */
	assert_int_equal(si.feature_incompat, EROFS_INCOMPAT_CHUNKED_FILE);
	assert_int_equal(si.root_nid, ek_root_nid(g.img));
	assert_int_equal(si.inodes, g.stats.files);
	assert_int_equal(si.image_size, g.image_size);
	assert_int_equal(si.blocks * 4096, g.image_size);
	assert_int_equal(si.packed_nid, 0);
	assert_int_equal(si.metabox_nid, 0);
	assert_int_equal(si.extra_devices, 0);
	/* the same values straight from the bytes, checksum included */
	assert_int_equal(fmt_super_decode(g.image_bytes, g.image_size, &sb, &why), 0);
	assert_int_equal(sb.checksum, si.checksum);
	assert_int_equal(sb.checksum,
			 fmt_super_checksum(g.image_bytes + 1024, 3072));
	assert_int_equal(sb.root_nid, si.root_nid);
	assert_int_equal(sb.epoch, si.epoch);
	ek_feature_names(&si, names, sizeof(names));
	assert_non_null(strstr(names, "sb_csum"));
	assert_non_null(strstr(names, "mtime"));
	assert_true(strlen(ek_version()) > 0);
	assert_string_equal(ek_strerror(-EUCLEAN), "image is corrupt");
}

/* ------------------------------------------------------------ open */

static void test_open_memory(void **state)
{
	ek_image *img = NULL;
	ek_error err = { 0, "" };
	ek_super_info a, b;
	ek_nid nid;
	ek_inode *inode;
	const struct srcfile *f = find_file("/big");
	uint8_t *buf = malloc(f->size);

	(void)state;
	assert_non_null(buf);
	assert_int_equal(ek_open_memory(g.image_bytes, g.image_size, NULL, &img, &err), 0);
	ek_get_super_info(img, &a);
	ek_get_super_info(g.img, &b);
	assert_int_equal(a.image_size, g.image_size);
	assert_int_equal(a.root_nid, b.root_nid);
	assert_int_equal(a.checksum, b.checksum);
	assert_int_equal(ek_lookup(img, "/big", &nid, &err), 0);
	assert_int_equal(ek_inode_get(img, nid, &inode, &err), 0);
	assert_int_equal(ek_read(inode, buf, f->size, 0, &err), f->size);
	assert_memory_equal(buf, f->data, f->size);
	ek_inode_put(inode);
	assert_int_equal(ek_lookup(img, "/sub/f0500", &nid, &err), 0);
	ek_close(img);
	free(buf);
}

/* The io_uring option reads the same bytes (or falls back to pread). */
static void test_open_uring_option(void **state)
{
	ek_open_options oo;
	ek_image *img = NULL;
	ek_error err = { 0, "" };
	unsigned int i;

	(void)state;
	ek_open_options_init(&oo);
	assert_int_equal(oo.io, EK_IO_PREAD);
	assert_int_equal(oo.cache_bytes, 0);
	assert_int_equal(oo.workers, 0);
	oo.io = EK_IO_URING;
	if (ek_open(g.image, &oo, &img, &err))
		fail_msg("ek_open with io_uring: %s", err.message);
	for (i = 0; i < NTOP; i++) {
		const struct srcfile *f = &g.files[i];
		ek_inode *inode = get_in(img, f->path);
		uint8_t *buf = malloc(f->size + 1);
		uint64_t off = f->size / 3;

		assert_non_null(buf);
		assert_int_equal(ek_read(inode, buf, f->size, 0, &err), f->size);
		assert_memory_equal(buf, f->data, f->size);
		/* an unaligned range */
		assert_int_equal(ek_read(inode, buf, 5000, off, &err),
				 f->size - off < 5000 ? f->size - off : 5000);
		assert_memory_equal(buf, f->data + off,
				    f->size - off < 5000 ? f->size - off : 5000);
		free(buf);
		ek_inode_put(inode);
	}
	ek_close(img);
}

/* Each decoder name lands in its algorithm's field, as the static spelling;
 * an unknown name is refused naming every choice; a name in the wrong
 * field fails the open. */
static void test_open_engine_option(void **state)
{
	char caller_string[16];
	ek_open_options oo;
	ek_image *img = NULL;
	ek_error err = { 0, "" };

	(void)state;
	ek_open_options_init(&oo);
	assert_null(oo.deflate_engine);
	assert_null(oo.lzma_engine);
	snprintf(caller_string, sizeof(caller_string), "isal");
	assert_int_equal(ek_open_options_set_engine(&oo, caller_string, &err), 0);
	assert_int_equal(ek_open_options_set_engine(&oo, "liblzma", &err), 0);
	memset(caller_string, 0, sizeof(caller_string));
	assert_string_equal(oo.deflate_engine, "isal");
	assert_string_equal(oo.lzma_engine, "liblzma");
	assert_int_equal(ek_open_options_set_engine(&oo, "zlib", &err), 0);
	assert_int_equal(ek_open_options_set_engine(&oo, "builtin", &err), 0);
	assert_string_equal(oo.deflate_engine, "zlib");
	assert_string_equal(oo.lzma_engine, "builtin");
	assert_int_equal(ek_open(g.image, &oo, &img, &err), 0);
	ek_close(img);

	assert_int_equal(ek_open_options_set_engine(&oo, "lzma", &err), -EINVAL);
	assert_non_null(strstr(err.message, "'lzma'"));
	assert_non_null(strstr(err.message, "libdeflate, isal or zlib"));
	assert_non_null(strstr(err.message, "builtin or liblzma"));
	assert_int_equal(ek_open_options_set_engine(&oo, "", &err), -EINVAL);
	assert_int_equal(ek_open_options_set_engine(&oo, NULL, &err), -EINVAL);
	assert_string_equal(oo.deflate_engine, "zlib");   /* unchanged */
	assert_string_equal(oo.lzma_engine, "builtin");

	oo.deflate_engine = "liblzma";
	assert_int_equal(ek_open(g.image, &oo, &img, &err), -EINVAL);
	assert_non_null(strstr(err.message, "unknown deflate decoder 'liblzma'"));
	oo.deflate_engine = NULL;
	oo.lzma_engine = "isal";
	assert_int_equal(ek_open(g.image, &oo, &img, &err), -EINVAL);
	assert_non_null(strstr(err.message, "unknown lzma decoder 'isal'"));
}

static void test_open_nonexistent(void **state)
{
	ek_image *img = NULL;
	ek_error err = { 0, "" };
	char p[160];
	int ret;

	(void)state;
	snprintf(p, sizeof(p), "%s/does-not-exist.img", g.dir);
	ret = ek_open(p, NULL, &img, &err);
	expect_error(ret, -ENOENT, &err);
	assert_null(img);
	assert_non_null(strstr(err.message, "does-not-exist.img"));
	/* a directory is not an image */
	memset(&err, 0, sizeof(err));
	ret = ek_open(g.dir, NULL, &img, &err);
	assert_true(ret < 0);
	assert_int_equal(err.code, ret);
	assert_true(strlen(err.message) > 0);
	/* err may be NULL */
	assert_true(ek_open(p, NULL, &img, NULL) < 0);
}

/* Read every file of an image that opened although it is damaged: each
 * read either gives the right bytes or fails with a message. */
static void read_all_or_fail(ek_image *img)
{
	unsigned int i;

	for (i = 0; i < g.nfiles; i += 7) {
		const struct srcfile *f = &g.files[i];
		ek_error err = { 0, "" };
		uint8_t *buf = malloc(f->size + 1);
		ek_inode *inode = NULL;
		ek_nid nid;
		ssize_t n;
		int ret;

		assert_non_null(buf);
		ret = ek_lookup(img, f->path, &nid, &err);
		if (!ret)
			ret = ek_inode_get(img, nid, &inode, &err);
		if (ret) {
			assert_true(ret < 0);
			assert_true(strlen(err.message) > 0);
			free(buf);
			continue;
		}
		n = ek_read(inode, buf, f->size, 0, &err);
		if (n < 0) {
			assert_true(strlen(err.message) > 0);
		} else {
			assert_int_equal(n, f->size);
			assert_memory_equal(buf, f->data, f->size);
		}
		ek_inode_put(inode);
		free(buf);
	}
}

static void test_open_truncated(void **state)
{
	size_t sizes[] = { 0, 512, 1024, 1151, 1152, 2000, 4095, 4096,
			   g.image_size / 2, g.image_size - 4096, g.image_size - 1 };
	char p[160];
	unsigned int i;

	(void)state;
	snprintf(p, sizeof(p), "%s/truncated.img", g.dir);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		ek_image *img = NULL;
		ek_error err = { 0, "" };
		int ret;

		assert_int_equal(write_copy(p, g.image_bytes, sizes[i]), 0);
		ret = ek_open(p, NULL, &img, &err);
		/* superblock block incomplete, or no root inode (metadata
		 * follows the data) */
		if (sizes[i] <= 4096)
			assert_true(ret < 0);
		if (ret) {
			assert_true(ret < 0);
			assert_null(img);
			assert_int_equal(err.code, ret);
			assert_true(strlen(err.message) > 0);
		} else {
			read_all_or_fail(img);
			ek_close(img);
		}
		/* the same through memory */
		img = NULL;
		memset(&err, 0, sizeof(err));
		ret = ek_open_memory(g.image_bytes, sizes[i], NULL, &img, &err);
		if (sizes[i] <= 4096)
			assert_true(ret < 0);
		if (ret) {
			assert_true(ret < 0);
			assert_null(img);
			assert_int_equal(err.code, ret);
			assert_true(strlen(err.message) > 0);
		} else {
			read_all_or_fail(img);
			ek_close(img);
		}
	}
	unlink(p);
}

static void test_open_corrupt_checksum(void **state)
{
	uint8_t *copy = malloc(g.image_size);
	ek_image *img = NULL;
	ek_error err = { 0, "" };

	(void)state;
	assert_non_null(copy);
	memcpy(copy, g.image_bytes, g.image_size);
	copy[3000] ^= 0x40;
	expect_error(ek_open_memory(copy, g.image_size, NULL, &img, &err),
		     -EUCLEAN, &err);
	assert_null(img);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_super_info),
		cmocka_unit_test(test_open_memory),
		cmocka_unit_test(test_open_uring_option),
		cmocka_unit_test(test_open_engine_option),
		cmocka_unit_test(test_open_nonexistent),
		cmocka_unit_test(test_open_truncated),
		cmocka_unit_test(test_open_corrupt_checksum),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
