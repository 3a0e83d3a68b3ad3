/*
 * Path and name lookup (ek_lookup, ek_lookup_child), inodes by nid
 * (ek_inode_get, ek_stat_nid) and what ek_inode_stat reports, against
 * lstat() of the source tree.
 */
#include "lib_fixture.h"

/* ------------------------------------------------------------ lookup */

static void test_lookup(void **state)
{
	ek_error err = { 0, "" };
	ek_nid nid = 0, root = ek_root_nid(g.img);

	(void)state;
	assert_int_equal(ek_lookup(g.img, "/", &nid, &err), 0);
	assert_int_equal(nid, root);
	assert_int_equal(nid_of("/."), root);
	assert_int_equal(nid_of("/.."), root);
	assert_int_equal(nid_of("/sub/.."), root);
	assert_int_equal(nid_of("/sub/."), nid_of("/sub"));
	assert_int_equal(nid_of("//sub///f0001"), nid_of("/sub/f0001"));
	assert_int_equal(nid_of("/sub/"), nid_of("/sub"));
	assert_int_not_equal(nid_of("/sub"), root);
	/* hard links share the inode */
	assert_int_equal(nid_of("/hard"), nid_of("/b4097"));
	assert_int_not_equal(nid_of("/b4096"), nid_of("/b4097"));

	expect_error(ek_lookup(g.img, "/missing", &nid, &err), -ENOENT, &err);
	expect_error(ek_lookup(g.img, "/sub/f0700", &nid, &err), -ENOENT, &err);
	expect_error(ek_lookup(g.img, "/missing/x", &nid, &err), -ENOENT, &err);
	expect_error(ek_lookup(g.img, "/b4095/x", &nid, &err), -ENOTDIR, &err);
	expect_error(ek_lookup(g.img, "/sub/f0001/x", &nid, &err), -ENOTDIR, &err);
	expect_error(ek_lookup(g.img, "/fifo/x", &nid, &err), -ENOTDIR, &err);
	/* symlinks are not followed */
	expect_error(ek_lookup(g.img, "/link/x", &nid, &err), -ENOTDIR, &err);
	/* err may be NULL */
	assert_int_equal(ek_lookup(g.img, "/missing", &nid, NULL), -ENOENT);
}

/* POSIX: a trailing slash requires a directory. */
static void test_lookup_trailing_slash_on_file(void **state)
{
	ek_error err = { 0, "" };
	ek_nid nid = 0;

	(void)state;
	expect_error(ek_lookup(g.img, "/b4095/", &nid, &err), -ENOTDIR, &err);
}

static void test_lookup_child(void **state)
{
	ek_inode *root = get_path("/"), *sub = get_path("/sub"), *file;
	ek_error err = { 0, "" };
	ek_nid nid = 0;
	unsigned int i;

	(void)state;
	assert_int_equal(ek_lookup_child(root, "subXYZ", 3, &nid, &err), 0);
	assert_int_equal(nid, nid_of("/sub"));
	assert_int_equal(ek_lookup_child(root, ".", 1, &nid, &err), 0);
	assert_int_equal(nid, ek_root_nid(g.img));
	assert_int_equal(ek_lookup_child(sub, "..", 2, &nid, &err), 0);
	assert_int_equal(nid, ek_root_nid(g.img));
	expect_error(ek_lookup_child(root, "nothing", 7, &nid, &err), -ENOENT, &err);
	expect_error(ek_lookup_child(root, "su", 2, &nid, &err), -ENOENT, &err);
	expect_error(ek_lookup_child(root, "", 0, &nid, &err), -ENOENT, &err);
	/* names before the first and after the last of a multi-block dir */
	expect_error(ek_lookup_child(sub, "-", 1, &nid, &err), -ENOENT, &err);
	expect_error(ek_lookup_child(sub, "zzz", 3, &nid, &err), -ENOENT, &err);
	expect_error(ek_lookup_child(sub, "f0349x", 6, &nid, &err), -ENOENT, &err);
	/* every one of the 700 names */
	for (i = 0; i < NSUB; i++) {
		char name[16];
		ek_inode *child;

		snprintf(name, sizeof(name), "f%04u", i);
		nid = 0;
		assert_int_equal(ek_lookup_child(sub, name, strlen(name), &nid, &err), 0);
		assert_int_equal(ek_inode_get(g.img, nid, &child, &err), 0);
		assert_int_equal(ek_inode_stat(child)->size, (i * 37) % 600);
		ek_inode_put(child);
	}
	file = get_path("/b4095");
	expect_error(ek_lookup_child(file, "x", 1, &nid, &err), -ENOTDIR, &err);
	ek_inode_put(file);
	ek_inode_put(sub);
	ek_inode_put(root);
}

/* ------------------------------------------------------------ stat */

static void check_stat(const char *path, uint32_t expect_nlink)
{
	char p[256];
	struct stat st;
	ek_inode *inode = get_path(path);
	const ek_stat *es = ek_inode_stat(inode);
	ek_stat by_nid;

	src_path(p, sizeof(p), strcmp(path, "/") ? path : "");
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(es->mode, st.st_mode);
	assert_int_equal(es->uid, st.st_uid);
	assert_int_equal(es->gid, st.st_gid);
	assert_int_equal(es->mtime, (int64_t)st.st_mtim.tv_sec);
	assert_int_equal(es->mtime_nsec, st.st_mtim.tv_nsec);
	assert_int_equal(es->nlink, expect_nlink);
	assert_int_equal(es->ino, es->nid);
	if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
		assert_int_equal(es->size, st.st_size);
		assert_int_equal(es->blocks, (es->size + 4095) / 4096 * 8);
	}
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
		assert_int_equal(es->size, 0);
	if (S_ISCHR(st.st_mode)) {
		assert_int_equal(es->rdev_major, major(st.st_rdev));
		assert_int_equal(es->rdev_minor, minor(st.st_rdev));
	}
	assert_int_equal(ek_stat_nid(g.img, es->nid, &by_nid, NULL), 0);
	assert_memory_equal(&by_nid, es, sizeof(by_nid));
	ek_inode_put(inode);
}

static void test_stat(void **state)
{
	(void)state;
	check_stat("/", 3);
	check_stat("/sub", 2);
	check_stat("/empty", 1);
	check_stat("/one", 1);
	check_stat("/b4095", 1);
	check_stat("/b4096", 1);
	check_stat("/b4097", 2);
	check_stat("/hard", 2);
	check_stat("/big", 1);
	check_stat("/link", 1);
	check_stat("/link3000", 1);
	check_stat("/link4095", 1);
	check_stat("/fit4064", 1);
	check_stat("/fit4065", 1);
	check_stat("/sparse", 1);
	check_stat("/fifo", 1);
	check_stat("/sub/f0000", 1);
	check_stat("/sub/f0699", 1);
	if (g.have_chr)
		check_stat("/chr", 1);
}

static void test_inode_get_bad_nid(void **state)
{
	ek_error err = { 0, "" };
	ek_inode *inode = NULL;

	(void)state;
	assert_true(ek_inode_get(g.img, 1ull << 40, &inode, &err) < 0);
	assert_true(strlen(err.message) > 0);
	assert_true(ek_inode_get(g.img, g.image_size / 32, &inode, &err) < 0);
	assert_true(strlen(err.message) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_lookup_trailing_slash_on_file),
		cmocka_unit_test(test_lookup_child),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_inode_get_bad_nid),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
