/*
 * Extended attributes: ek_xattr_list and ek_xattr_get against the source
 * files' xattrs, empty and large values, ERANGE and ENODATA, and the
 * on-disk bodies (shared values stored once, bloom filters).
 */
#include "format/xattr.h"
#include "lib_fixture.h"

/* ------------------------------------------------------------ xattrs */

/* Compare an inode's xattrs with the source file's (those EROFS can
 * store), names and values. */
static void check_xattrs(const char *path)
{
	char p[256], src_names[4096], img_names[4096];
	ssize_t sn, in;
	ek_inode *inode = get_path(path);
	ek_error err = { 0, "" };
	const char *q;
	unsigned int src_count = 0, img_count = 0;
	size_t expect_len = 0;

	src_path(p, sizeof(p), strcmp(path, "/") ? path : "");
	sn = llistxattr(p, src_names, sizeof(src_names));
	assert_true(sn >= 0);
	in = ek_xattr_list(inode, img_names, sizeof(img_names), &err);
	assert_true(in >= 0);
	for (q = src_names; q < src_names + sn; q += strlen(q) + 1) {
		uint8_t index;
		size_t plen;
		uint8_t sv[4096], iv[4096];
		ssize_t svl, ivl;
		const char *r;
		bool found = false;

		if (!fmt_xattr_split(q, strlen(q), &index, &plen))
			continue;
		src_count++;
		expect_len += strlen(q) + 1;
		for (r = img_names; r < img_names + in; r += strlen(r) + 1)
			if (!strcmp(r, q))
				found = true;
		assert_true(found);
		svl = lgetxattr(p, q, sv, sizeof(sv));
		assert_true(svl >= 0);
		assert_int_equal(ek_xattr_get(inode, q, NULL, 0, &err), svl);
		ivl = ek_xattr_get(inode, q, iv, sizeof(iv), &err);
		assert_int_equal(ivl, svl);
		assert_memory_equal(iv, sv, (size_t)svl);
	}
	for (q = img_names; q < img_names + in; q += strlen(q) + 1)
		img_count++;
	assert_int_equal(img_count, src_count);
	assert_int_equal(in, expect_len);
	assert_int_equal(ek_xattr_list(inode, NULL, 0, &err), in);
	ek_inode_put(inode);
}

static void test_xattrs_match_source(void **state)
{
	static const char *const paths[] = { "/", "/sub", "/empty", "/one",
					     "/b4095", "/b4096", "/b4097",
					     "/big", "/link", "/fifo",
					     "/sub/f0042", "/fit4065",
					     "/link3000" };
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		check_xattrs(paths[i]);
}

static void test_xattr_get(void **state)
{
	ek_inode *one = get_path("/one"), *empty = get_path("/empty");
	ek_inode *big = get_path("/big");
	ek_error err = { 0, "" };
	uint8_t buf[4096];
	unsigned int i;

	(void)state;
	/* empty value: size query and real read both give 0 */
	assert_int_equal(ek_xattr_get(one, "user.empty", NULL, 0, &err), 0);
	assert_int_equal(ek_xattr_get(one, "user.empty", buf, sizeof(buf), &err), 0);
	/* 3000-byte value */
	assert_int_equal(ek_xattr_get(one, "user.big", NULL, 0, &err), 3000);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(ek_xattr_get(one, "user.big", buf, 3000, &err), 3000);
	for (i = 0; i < 3000; i++)
		assert_int_equal(buf[i], (uint8_t)(i * 13 + 1));
	expect_error((int)ek_xattr_get(one, "user.big", buf, 2999, &err), -ERANGE, &err);
	expect_error((int)ek_xattr_get(one, "user.big", buf, 1, &err), -ERANGE, &err);
	/* missing names */
	expect_error((int)ek_xattr_get(one, "user.missing", buf, sizeof(buf), &err),
		     -ENODATA, &err);
	expect_error((int)ek_xattr_get(one, "user.bi", buf, sizeof(buf), &err),
		     -ENODATA, &err);
	expect_error((int)ek_xattr_get(one, "trusted.big", buf, sizeof(buf), &err),
		     -ENODATA, &err);
	expect_error((int)ek_xattr_get(empty, "user.shared", buf, sizeof(buf), &err),
		     -ENODATA, &err);
	expect_error((int)ek_xattr_get(empty, "user.shared", NULL, 0, &err),
		     -ENODATA, &err);
	/* shared + inline on one inode */
	assert_int_equal(ek_xattr_get(big, "user.shared", buf, sizeof(buf), &err),
			 strlen(SHARED_VAL));
	assert_memory_equal(buf, SHARED_VAL, strlen(SHARED_VAL));
	assert_int_equal(ek_xattr_get(big, "user.own", buf, sizeof(buf), &err), 4);
	assert_memory_equal(buf, "mine", 4);
	ek_inode_put(big);
	ek_inode_put(empty);
	ek_inode_put(one);
}

static void test_xattr_list(void **state)
{
	static const char expect_one[] = "user.big\0user.empty";
	ek_inode *one = get_path("/one"), *empty = get_path("/empty");
	ek_error err = { 0, "" };
	char buf[256];
	ssize_t n;

	(void)state;
	n = ek_xattr_list(one, NULL, 0, &err);
	assert_int_equal(n, sizeof(expect_one));
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(ek_xattr_list(one, buf, (size_t)n, &err), n);
	/* either order */
	assert_true((!strcmp(buf, "user.big") && !strcmp(buf + 9, "user.empty")) ||
		    (!strcmp(buf, "user.empty") && !strcmp(buf + 11, "user.big")));
	expect_error((int)ek_xattr_list(one, buf, (size_t)n - 1, &err), -ERANGE, &err);
	expect_error((int)ek_xattr_list(one, buf, 1, &err), -ERANGE, &err);
	assert_int_equal(ek_xattr_list(empty, buf, sizeof(buf), &err), 0);
	assert_int_equal(ek_xattr_list(empty, NULL, 0, &err), 0);
	ek_inode_put(empty);
	ek_inode_put(one);
}

/* The on-disk bodies: the shared value is stored once and referenced by
 * id; every body's bloom filter matches its names (spec 5.6, 5.7). */
static void test_xattr_on_disk(void **state)
{
	static const char *const paths[] = { "/one", "/b4095", "/b4096", "/big",
					     "/sub", "/b4097", "/link",
					     "/fit4065" };
	size_t vlen = strlen(SHARED_VAL), i, hits = 0;
	ek_inode_detail d;
	unsigned int k;

	(void)state;
	for (i = 0; i + vlen <= g.image_size; i++)
		if (!memcmp(g.image_bytes + i, SHARED_VAL, vlen))
			hits++;
	assert_int_equal(hits, 1);

	for (k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
		ek_inode *inode = get_path(paths[k]);
		char p[256], names[1024];
		const uint8_t *body;
		uint32_t mask = 0;
		ssize_t n;
		const char *q;

		ek_inode_get_detail(inode, &d);
		assert_true(d.xattr_size >= 16);
		body = g.image_bytes + d.inode_offset + (d.extended ? 64 : 32);
		src_path(p, sizeof(p), paths[k]);
		n = llistxattr(p, names, sizeof(names));
		assert_true(n > 0);
		for (q = names; q < names + n; q += strlen(q) + 1) {
			uint8_t index;
			size_t plen;

			if (!fmt_xattr_split(q, strlen(q), &index, &plen))
				continue;
			mask |= 1u << fmt_xattr_filter_bit(q + plen, strlen(q) - plen, index);
		}
		assert_int_equal(get_le32(body), ~mask);
		if (!strcmp(paths[k], "/b4096")) {
			/* only the shared xattr: header + one id */
			assert_int_equal(d.xattr_size, 16);
			assert_int_equal(body[4], 1);
		}
		ek_inode_put(inode);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xattrs_match_source),
		cmocka_unit_test(test_xattr_get),
		cmocka_unit_test(test_xattr_list),
		cmocka_unit_test(test_xattr_on_disk),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
