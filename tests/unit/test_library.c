/*
 * The public read API over an image built with ek_build() from a small
 * tree: lookup, stat, readdir, read, readlink, xattrs, map, in-memory
 * images, bad images, and concurrent readers.  Plus the spec 11 image
 * read through the library.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include <erofskit/build.h>
#include <erofskit/erofskit.h>

#include "format/ondisk.h"
#include "format/super.h"
#include "format/xattr.h"
#include "spec_image.h"

#define NSUB        700
#define NTOP        11         /* regular files at the top level */
#define MAX_FILES   (NTOP + NSUB)
#define SPARSE_SIZE (3u << 20)
#define SPARSE_DATA ((2u << 20) + 100u)
#define LINK_TARGET "../some/where/over/the/rainbow.txt"
#define SHARED_VAL  "same-value"

struct srcfile {
	char path[32];          /* image path, "/big" */
	uint8_t *data;
	size_t size;
};

static struct {
	char dir[64];           /* mkdtemp root */
	char src[96];           /* source tree */
	char image[96];         /* built image */
	struct srcfile files[MAX_FILES];
	unsigned int nfiles;
	bool have_chr;
	uint8_t *image_bytes;
	size_t image_size;
	ek_build_stats stats;
	ek_image *img;
} g;

/* ------------------------------------------------------------ helpers */

static uint32_t rng(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void src_path(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s%s", g.src, rel);
}

static int write_file(const char *rel, const uint8_t *data, size_t size)
{
	char p[256];
	int fd;

	src_path(p, sizeof(p), rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int add_file(const char *rel, size_t size, uint32_t seed)
{
	struct srcfile *f = &g.files[g.nfiles++];
	size_t i;

	snprintf(f->path, sizeof(f->path), "%s", rel);
	f->size = size;
	f->data = malloc(size ? size : 1);
	if (!f->data)
		return -1;
	for (i = 0; i < size; i++)
		f->data[i] = (uint8_t)rng(&seed);
	return write_file(rel, f->data, size);
}

/* A file with a 2 MiB hole, 5000 bytes of data, and a hole to 3 MiB. */
static int add_sparse(const char *rel)
{
	struct srcfile *f = &g.files[g.nfiles++];
	uint32_t seed = 4242;
	char p[256];
	size_t i;
	int fd;

	snprintf(f->path, sizeof(f->path), "%s", rel);
	f->size = SPARSE_SIZE;
	f->data = calloc(1, SPARSE_SIZE);
	if (!f->data)
		return -1;
	for (i = 0; i < 5000; i++)
		f->data[SPARSE_DATA + i] = (uint8_t)(rng(&seed) | 1);
	src_path(p, sizeof(p), rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, SPARSE_SIZE) ||
	    pwrite(fd, f->data + SPARSE_DATA, 5000, SPARSE_DATA) != 5000) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int set_mtime(const char *rel, int64_t sec, long nsec)
{
	struct timespec ts[2] = { { (time_t)sec, nsec }, { (time_t)sec, nsec } };
	char p[256];

	src_path(p, sizeof(p), rel);
	return utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW);
}

static int set_xattr(const char *rel, const char *name, const void *v, size_t n)
{
	char p[256];

	src_path(p, sizeof(p), rel);
	return lsetxattr(p, name, v, n, 0);
}

static const struct srcfile *find_file(const char *path)
{
	unsigned int i;

	for (i = 0; i < g.nfiles; i++)
		if (!strcmp(g.files[i].path, path))
			return &g.files[i];
	return NULL;
}

static ek_inode *get_path(const char *path)
{
	ek_error err = { 0, "" };
	ek_inode *inode = NULL;
	ek_nid nid = 0;

	assert_int_equal(ek_lookup(g.img, path, &nid, &err), 0);
	assert_int_equal(ek_inode_get(g.img, nid, &inode, &err), 0);
	assert_non_null(inode);
	return inode;
}

static ek_nid nid_of(const char *path)
{
	ek_nid nid = 0;

	assert_int_equal(ek_lookup(g.img, path, &nid, NULL), 0);
	return nid;
}

static void expect_error(int ret, int code, const ek_error *err)
{
	assert_int_equal(ret, code);
	assert_int_equal(err->code, code);
	assert_true(strlen(err->message) > 0);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int load_file(const char *path, uint8_t **data, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	*size = (size_t)st.st_size;
	*data = malloc(*size ? *size : 1);
	if (!*data)
		return -1;
	n = pread(fd, *data, *size, 0);
	close(fd);
	return n == (ssize_t)*size ? 0 : -1;
}

static int write_copy(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static unsigned int count_entries(const char *dir)
{
	unsigned int n = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* ------------------------------------------------------------ fixture */

static int make_tree(void)
{
	static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 100000,
					4064, 4065, 10, 20 };
	/* "-dash" sorts before ".", the UTF-8 name after everything */
	static const char *const names[] = { "/empty", "/one", "/b4095",
					     "/b4096", "/b4097", "/big",
					     "/fit4064", "/fit4065", "/-dash",
					     "/\xC3\xA9t\xC3\xA9" };
	char p[256], q[256], target[4096];
	uint8_t big_value[3000];
	unsigned int i;

	for (i = 0; i < 10; i++)
		if (add_file(names[i], sizes[i], 0x1234567u + i))
			return -1;
	if (add_sparse("/sparse"))
		return -1;
	src_path(p, sizeof(p), "/sub");
	if (mkdir(p, 0750))
		return -1;
	for (i = 0; i < NSUB; i++) {
		struct srcfile *f;
		char rel[32];
		size_t k, n = (i * 37) % 600;

		snprintf(rel, sizeof(rel), "/sub/f%04u", i);
		f = &g.files[g.nfiles++];
		snprintf(f->path, sizeof(f->path), "%s", rel);
		f->size = n;
		f->data = malloc(n ? n : 1);
		if (!f->data)
			return -1;
		for (k = 0; k < n; k++)
			f->data[k] = (uint8_t)('a' + (i + k) % 26);
		if (write_file(rel, f->data, n) || set_mtime(rel, 1700000000, 0))
			return -1;
	}
	src_path(p, sizeof(p), "/link");
	if (symlink(LINK_TARGET, p))
		return -1;
	/* 3000 bytes: inline beside its inode; 4095: a data block */
	memset(target, 'L', sizeof(target));
	target[3000] = '\0';
	src_path(p, sizeof(p), "/link3000");
	if (symlink(target, p))
		return -1;
	target[3000] = 'L';
	target[4095] = '\0';
	src_path(p, sizeof(p), "/link4095");
	if (symlink(target, p))
		return -1;
	src_path(p, sizeof(p), "/fifo");
	if (mkfifo(p, 0640))
		return -1;
	src_path(p, sizeof(p), "/b4097");
	src_path(q, sizeof(q), "/hard");
	if (link(p, q))
		return -1;
	src_path(p, sizeof(p), "/chr");
	g.have_chr = mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0;

	/* xattrs: empty value, 3000-byte value, one shared by three files */
	for (i = 0; i < sizeof(big_value); i++)
		big_value[i] = (uint8_t)(i * 13 + 1);
	if (set_xattr("/one", "user.empty", "", 0) ||
	    set_xattr("/one", "user.big", big_value, sizeof(big_value)) ||
	    set_xattr("/b4095", "user.shared", SHARED_VAL, strlen(SHARED_VAL)) ||
	    set_xattr("/b4096", "user.shared", SHARED_VAL, strlen(SHARED_VAL)) ||
	    set_xattr("/big", "user.shared", SHARED_VAL, strlen(SHARED_VAL)) ||
	    set_xattr("/big", "user.own", "mine", 4) ||
	    set_xattr("/sub", "user.dir", "d", 1))
		return -1;
	/* other namespaces, where the source file system allows them */
	set_xattr("/link", "trusted.sym", "on-a-symlink", 12);
	set_xattr("/b4097", "security.label", "lbl", 3);
	set_xattr("/b4097", "trusted.overlay.opaque", "y", 1);
	{
		/* a POSIX ACL with a named user (not expressible as a mode) */
		uint8_t acl[4 + 5 * 8];
		static const uint16_t tags[5] = { 0x01, 0x02, 0x04, 0x10, 0x20 };
		static const uint16_t perms[5] = { 6, 4, 4, 4, 4 };
		unsigned int k;

		memset(acl, 0, sizeof(acl));
		put_le32(acl, 2);
		for (k = 0; k < 5; k++) {
			put_le16(acl + 4 + 8 * k, tags[k]);
			put_le16(acl + 6 + 8 * k, perms[k]);
			put_le32(acl + 8 + 8 * k, tags[k] == 0x02 ? 1000 : 0xFFFFFFFFu);
		}
		set_xattr("/fit4065", "system.posix_acl_access", acl, sizeof(acl));
	}

	/* ownership and times: some compact, some extended inodes */
	src_path(p, sizeof(p), "/one");
	if (chown(p, 70000, 70001))
		return -1;
	if (set_mtime("/empty", -1000, 0) ||
	    set_mtime("/big", 1234567890, 123456789) ||
	    set_mtime("/b4095", 1700000000, 0) ||
	    set_mtime("/fit4064", 1700000000, 0) ||
	    set_mtime("/fit4065", 1700000000, 0) ||
	    set_mtime("/link", 1600000000, 5) ||
	    set_mtime("/sub", 1700000000, 0) ||
	    set_mtime("", 1700000001, 999999999))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	unsigned int i;

	(void)state;
	ek_close(g.img);
	g.img = NULL;
	for (i = 0; i < g.nfiles; i++)
		free(g.files[i].data);
	g.nfiles = 0;
	free(g.image_bytes);
	g.image_bytes = NULL;
	if (g.dir[0])
		nftw(g.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	g.dir[0] = '\0';
	return 0;
}

static int setup_fail(const char *what, const char *why)
{
	fprintf(stderr, "test_library setup: %s: %s\n", what, why);
	group_teardown(NULL);
	return -1;
}

static int group_setup(void **state)
{
	ek_build_options o;
	ek_error err = { 0, "" };
	ek_open_options oo;

	(void)state;
	memset(&g, 0, sizeof(g));
	snprintf(g.dir, sizeof(g.dir), "/tmp/ek-unit-lib-XXXXXX");
	if (!mkdtemp(g.dir)) {
		g.dir[0] = '\0';
		return setup_fail("mkdtemp", strerror(errno));
	}
	snprintf(g.src, sizeof(g.src), "%s/src", g.dir);
	snprintf(g.image, sizeof(g.image), "%s/image.erofs", g.dir);
	if (mkdir(g.src, 0755) || make_tree())
		return setup_fail("source tree", strerror(errno));
	ek_build_options_init(&o);
	if (ek_build(g.image, g.src, &o, &g.stats, &err))
		return setup_fail("ek_build", err.message);
	if (load_file(g.image, &g.image_bytes, &g.image_size))
		return setup_fail("reading the image", strerror(errno));
	ek_open_options_init(&oo);
	if (ek_open(g.image, &oo, &g.img, &err))
		return setup_fail("ek_open", err.message);
	return 0;
}

/* ------------------------------------------------------------ build, super */

static void test_build_stats(void **state)
{
	(void)state;
	assert_int_equal(g.stats.directories, 2);
	assert_int_equal(g.stats.regular_files, NTOP + NSUB);
	/* two directories, the regular files, 3 links, fifo (and chr) */
	assert_int_equal(g.stats.files, 2 + NTOP + NSUB + 4 + (g.have_chr ? 1 : 0));
	assert_int_equal(g.stats.image_bytes, g.image_size);
	assert_int_equal(g.image_size % 4096, 0);
	assert_int_equal(count_entries(g.dir), 2);   /* src, image.erofs */
}

static void test_build_errors(void **state)
{
	ek_build_options o;
	ek_error err = { 0, "" };
	char target[160], missing[160], file[160];
	uint8_t *back = NULL;
	size_t back_size = 0;
	int ret;

	(void)state;
	snprintf(target, sizeof(target), "%s/out.img", g.dir);
	snprintf(missing, sizeof(missing), "%s/no-such-source", g.dir);
	src_path(file, sizeof(file), "/big");
	ek_build_options_init(&o);

	/* missing source: error naming it, no target, no temporary left */
	ret = ek_build(target, missing, &o, NULL, &err);
	expect_error(ret, -ENOENT, &err);
	assert_non_null(strstr(err.message, "no-such-source"));
	assert_int_not_equal(access(target, F_OK), 0);
	/* a regular file as the source */
	expect_error(ek_build(target, file, &o, NULL, &err), -ENOTDIR, &err);
	/* bad block sizes */
	o.block_size = 8192;
	expect_error(ek_build(target, g.src, &o, NULL, &err), -EINVAL, &err);
	o.block_size = 1000;
	expect_error(ek_build(target, g.src, &o, NULL, &err), -EINVAL, &err);
	o.block_size = 256;
	expect_error(ek_build(target, g.src, &o, NULL, &err), -EINVAL, &err);
	assert_int_not_equal(access(target, F_OK), 0);
	/* an existing target survives a failed build untouched */
	assert_int_equal(write_copy(target, (const uint8_t *)"keep", 4), 0);
	ek_build_options_init(&o);
	assert_true(ek_build(target, missing, &o, NULL, &err) < 0);
	assert_int_equal(load_file(target, &back, &back_size), 0);
	assert_int_equal(back_size, 4);
	assert_memory_equal(back, "keep", 4);
	free(back);
	unlink(target);
	assert_int_equal(count_entries(g.dir), 2);
}

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

/* ------------------------------------------------------------ readdir */

struct collected {
	unsigned int n, stop_after;
	char names[NSUB + 8][16];
	ek_nid nids[NSUB + 8];
	unsigned int types[NSUB + 8];
	uint64_t next[NSUB + 8];
};

static int collect(void *ctx, const ek_dirent *d)
{
	struct collected *c = ctx;

	if (c->n >= NSUB + 8 || d->name_len >= 16)
		return -1000;
	memcpy(c->names[c->n], d->name, d->name_len);
	c->names[c->n][d->name_len] = '\0';
	c->nids[c->n] = d->nid;
	c->types[c->n] = d->type;
	c->next[c->n] = d->next_offset;
	c->n++;
	if (c->stop_after && c->n == c->stop_after)
		return 42;
	return 0;
}

static int find_name(const struct collected *c, const char *name)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], name))
			return (int)i;
	return -1;
}

static void test_readdir_root(void **state)
{
	static const struct {
		const char *name;
		unsigned int type;
	} expect[] = {
		{ ".", EK_FT_DIR }, { "..", EK_FT_DIR }, { "b4095", EK_FT_REG },
		{ "b4096", EK_FT_REG }, { "b4097", EK_FT_REG }, { "big", EK_FT_REG },
		{ "empty", EK_FT_REG }, { "fifo", EK_FT_FIFO }, { "hard", EK_FT_REG },
		{ "link", EK_FT_LNK }, { "one", EK_FT_REG }, { "sub", EK_FT_DIR },
		{ "fit4064", EK_FT_REG }, { "fit4065", EK_FT_REG },
		{ "sparse", EK_FT_REG }, { "link3000", EK_FT_LNK },
		{ "link4095", EK_FT_LNK }, { "-dash", EK_FT_REG },
		{ "\xC3\xA9t\xC3\xA9", EK_FT_REG },
	};
	struct collected *c = calloc(1, sizeof(*c));
	ek_inode *root = get_path("/");
	ek_error err = { 0, "" };
	unsigned int i;

	(void)state;
	assert_non_null(c);
	assert_int_equal(ek_readdir(root, 0, collect, c, &err), 0);
	assert_int_equal(c->n, 19 + (g.have_chr ? 1 : 0));
	assert_string_equal(c->names[0], "-dash");
	assert_string_equal(c->names[1], ".");
	assert_string_equal(c->names[2], "..");
	assert_string_equal(c->names[c->n - 1], "\xC3\xA9t\xC3\xA9");
	for (i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		int k = find_name(c, expect[i].name);

		assert_true(k >= 0);
		assert_int_equal(c->types[k], expect[i].type);
		if (strcmp(expect[i].name, ".") && strcmp(expect[i].name, "..")) {
			char path[32];

			snprintf(path, sizeof(path), "/%s", expect[i].name);
			assert_int_equal(c->nids[k], nid_of(path));
		} else {
			assert_int_equal(c->nids[k], ek_root_nid(g.img));
		}
	}
	if (g.have_chr)
		assert_int_equal(c->types[find_name(c, "chr")], EK_FT_CHR);
	/* on-disk order is sorted */
	for (i = 1; i < c->n; i++)
		assert_true(strcmp(c->names[i - 1], c->names[i]) < 0);
	free(c);
	ek_inode_put(root);
}

static void test_readdir_large(void **state)
{
	struct collected *all = calloc(1, sizeof(*all));
	struct collected *part = calloc(1, sizeof(*part));
	static const unsigned int stops[] = { 1, 2, 3, 100, 239, 240, 241, 242, 300, 500, 701, 702 };
	ek_inode *sub = get_path("/sub");
	ek_error err = { 0, "" };
	unsigned int i, s;

	(void)state;
	assert_non_null(all);
	assert_non_null(part);
	assert_int_equal(ek_readdir(sub, 0, collect, all, &err), 0);
	assert_int_equal(all->n, NSUB + 2);
	assert_true(ek_inode_stat(sub)->size > 2 * 4096);
	for (i = 0; i < NSUB; i++) {
		char name[16];
		int k;

		snprintf(name, sizeof(name), "f%04u", i);
		k = find_name(all, name);
		assert_true(k >= 0);
		assert_int_equal(all->types[k], EK_FT_REG);
	}
	assert_int_equal(all->nids[find_name(all, "..")], ek_root_nid(g.img));
	assert_int_equal(all->nids[find_name(all, ".")], nid_of("/sub"));
	for (i = 1; i < all->n; i++)
		assert_true(strcmp(all->names[i - 1], all->names[i]) < 0);

	/* stop after k entries, then continue from the last next_offset */
	for (s = 0; s < sizeof(stops) / sizeof(stops[0]); s++) {
		unsigned int k = stops[s], j;
		uint64_t resume;
		int ret;

		memset(part, 0, sizeof(*part));
		part->stop_after = k;
		ret = ek_readdir(sub, 0, collect, part, &err);
		assert_int_equal(ret, 42);
		assert_int_equal(part->n, k);
		resume = part->next[k - 1];
		part->stop_after = 0;
		assert_int_equal(ek_readdir(sub, resume, collect, part, &err), 0);
		assert_int_equal(part->n, all->n);
		for (j = 0; j < all->n; j++) {
			assert_string_equal(part->names[j], all->names[j]);
			assert_int_equal(part->nids[j], all->nids[j]);
		}
	}
	/* every next_offset resumes right after its entry */
	for (i = 0; i < all->n; i += 97) {
		memset(part, 0, sizeof(*part));
		assert_int_equal(ek_readdir(sub, all->next[i], collect, part, &err), 0);
		assert_int_equal(part->n, all->n - i - 1);
		if (part->n)
			assert_string_equal(part->names[0], all->names[i + 1]);
	}
	free(all);
	free(part);
	ek_inode_put(sub);
}

static void test_readdir_not_dir(void **state)
{
	struct collected *c = calloc(1, sizeof(*c));
	ek_inode *file = get_path("/big");
	ek_error err = { 0, "" };

	(void)state;
	assert_non_null(c);
	expect_error(ek_readdir(file, 0, collect, c, &err), -ENOTDIR, &err);
	assert_int_equal(c->n, 0);
	free(c);
	ek_inode_put(file);
}

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

/* ------------------------------------------------------------ map */

static ek_inode *get_in(ek_image *img, const char *path)
{
	ek_error err = { 0, "" };
	ek_inode *inode = NULL;
	ek_nid nid = 0;

	if (ek_lookup(img, path, &nid, &err) || ek_inode_get(img, nid, &inode, &err))
		fail_msg("%s: %s", path, err.message);
	return inode;
}

/* The extent holding `off` covers it, and the image bytes it points at
 * are the file's bytes (zeros for holes). */
static void check_map_in(ek_image *img, const uint8_t *bytes, size_t isize,
			 uint32_t blksz, const struct srcfile *f, uint64_t off)
{
	ek_inode *inode = get_in(img, f->path);
	ek_error err = { 0, "" };
	ek_extent e;
	uint64_t i;

	assert_int_equal(ek_map(inode, off, &e, &err), 0);
	assert_true(e.logical <= off && off < e.logical + e.length);
	assert_true(e.logical + e.length <= f->size);
	switch (e.kind) {
	case EK_EXTENT_HOLE:
		for (i = e.logical; i < e.logical + e.length; i++)
			assert_int_equal(f->data[i], 0);
		break;
	case EK_EXTENT_PLAIN:
		assert_int_equal(e.physical_length, e.length);
		assert_true(e.physical + e.length <= isize);
		assert_memory_equal(bytes + e.physical, f->data + e.logical, e.length);
		if (e.in_metadata) {
			/* an inline tail never crosses a block boundary */
			assert_true(e.physical % blksz + e.length <= blksz);
			assert_int_equal(e.logical + e.length, f->size);
		} else {
			assert_int_equal(e.physical % blksz, 0);
			assert_int_equal(e.logical % blksz, 0);
		}
		break;
	default:
		fail_msg("%s: unexpected extent kind %u", f->path, e.kind);
	}
	ek_inode_put(inode);
}

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
		ret = ek_open_memory(g.image_bytes, sizes[i], NULL, &img, &err);
		if (sizes[i] <= 4096)
			assert_true(ret < 0);
		if (ret) {
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

/* ------------------------------------------------------------ 512 */

/* The same tree with 512-byte blocks, -T and all-root. */
static void test_build_512(void **state)
{
	ek_build_options o;
	ek_build_stats st;
	ek_error err = { 0, "" };
	ek_image *img = NULL;
	ek_super_info si;
	uint8_t *bytes = NULL, *buf;
	size_t size = 0;
	char p[160];
	unsigned int i;

	(void)state;
	snprintf(p, sizeof(p), "%s/image512.erofs", g.dir);
	ek_build_options_init(&o);
	o.block_size = 512;
	o.timestamp_set = true;
	o.timestamp = 1600000000;
	o.all_root = true;
	if (ek_build(p, g.src, &o, &st, &err))
		fail_msg("ek_build: %s", err.message);
	assert_int_equal(load_file(p, &bytes, &size), 0);
	assert_int_equal(size % 512, 0);
	assert_int_equal(get_le32(bytes + 1028), fmt_super_checksum(bytes + 1024, 512));
	assert_int_equal(ek_open(p, NULL, &img, &err), 0);
	ek_get_super_info(img, &si);
	assert_int_equal(si.block_size, 512);
	assert_int_equal(si.epoch, 1600000000);
	assert_int_equal(si.blocks * 512, size);
	buf = malloc(SPARSE_SIZE + 1);
	assert_non_null(buf);
	for (i = 0; i < g.nfiles; i++) {
		const struct srcfile *f = &g.files[i];
		ek_inode *inode = get_in(img, f->path);
		const ek_stat *es = ek_inode_stat(inode);

		assert_int_equal(es->size, f->size);
		assert_int_equal(es->uid, 0);
		assert_int_equal(es->gid, 0);
		assert_int_equal(es->mtime, 1600000000);
		assert_int_equal(es->mtime_nsec, 0);
		assert_int_equal(ek_read(inode, buf, f->size + 1, 0, &err), f->size);
		assert_memory_equal(buf, f->data, f->size);
		if (f->size) {
			check_map_in(img, bytes, size, 512, f, 0);
			check_map_in(img, bytes, size, 512, f, f->size - 1);
		}
		ek_inode_put(inode);
	}
	{
		ek_inode *sub = get_in(img, "/sub"), *one = get_in(img, "/one");
		ek_inode *l = get_in(img, "/link4095");
		struct collected *c = calloc(1, sizeof(*c));

		assert_non_null(c);
		assert_int_equal(ek_readdir(sub, 0, collect, c, &err), 0);
		assert_int_equal(c->n, NSUB + 2);
		assert_int_equal(ek_xattr_get(one, "user.big", buf, 3000, &err), 3000);
		for (i = 0; i < 3000; i++)
			assert_int_equal(buf[i], (uint8_t)(i * 13 + 1));
		assert_int_equal(ek_readlink(l, (char *)buf, 4096, &err), 4095);
		free(c);
		ek_inode_put(l);
		ek_inode_put(one);
		ek_inode_put(sub);
	}
	free(buf);
	free(bytes);
	ek_close(img);
	unlink(p);
}

/* ------------------------------------------------------------ threads */

struct worker {
	pthread_t tid;
	uint32_t seed;
	ek_inode **shared;      /* handles opened by the main thread */
	unsigned int reads, errors, mismatches;
};

static void *reader(void *arg)
{
	struct worker *w = arg;
	uint8_t *buf = malloc(70000);
	unsigned int r;

	if (!buf) {
		w->errors++;
		return NULL;
	}
	for (r = 0; r < 3000; r++) {
		unsigned int i = rng(&w->seed) % g.nfiles;
		const struct srcfile *f = &g.files[i];
		uint64_t off = rng(&w->seed) % (f->size + 64);
		size_t len = rng(&w->seed) % 70000;
		size_t expect = off >= f->size ? 0 :
				(len < f->size - off ? len : (size_t)(f->size - off));
		ek_inode *inode = w->shared[i], *own = NULL;
		ek_error err;
		ssize_t n;

		if (r % 2) {
			ek_nid nid;

			if (ek_lookup(g.img, f->path, &nid, &err) ||
			    ek_inode_get(g.img, nid, &own, &err)) {
				w->errors++;
				continue;
			}
			inode = own;
		}
		n = ek_read(inode, buf, len, off, &err);
		if (n < 0)
			w->errors++;
		else if ((size_t)n != expect || memcmp(buf, f->data + off, expect))
			w->mismatches++;
		w->reads++;
		if (own)
			ek_inode_put(own);
	}
	free(buf);
	return NULL;
}

static void test_threads(void **state)
{
	struct worker w[8];
	ek_inode **shared = calloc(g.nfiles, sizeof(*shared));
	unsigned int i;

	(void)state;
	assert_non_null(shared);
	for (i = 0; i < g.nfiles; i++)
		shared[i] = get_path(g.files[i].path);
	for (i = 0; i < 8; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].seed = 0x9E3779B9u * (i + 1);
		w[i].shared = shared;
		assert_int_equal(pthread_create(&w[i].tid, NULL, reader, &w[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		assert_int_equal(pthread_join(w[i].tid, NULL), 0);
		assert_int_equal(w[i].errors, 0);
		assert_int_equal(w[i].mismatches, 0);
		assert_int_equal(w[i].reads, 3000);
	}
	for (i = 0; i < g.nfiles; i++)
		ek_inode_put(shared[i]);
	free(shared);
}

/* ------------------------------------------------------------ spec 11 */

struct spec_ctx {
	unsigned int n;
	char names[4][16];
	ek_nid nids[4];
};

static int spec_collect(void *ctx, const ek_dirent *d)
{
	struct spec_ctx *c = ctx;

	if (c->n >= 4 || d->name_len >= 16)
		return -1;
	memcpy(c->names[c->n], d->name, d->name_len);
	c->names[c->n][d->name_len] = '\0';
	c->nids[c->n++] = d->nid;
	return 0;
}

static void check_spec_image(bool variant)
{
	uint8_t *bytes = malloc(SPEC_IMAGE_VARIANT_SIZE);
	size_t size = variant ? SPEC_IMAGE_VARIANT_SIZE : SPEC_IMAGE_SIZE;
	ek_image *img = NULL;
	ek_error err = { 0, "" };
	ek_inode *root, *file;
	struct spec_ctx c;
	const ek_stat *st;
	ek_extent e;
	ek_nid nid;
	char buf[32];

	assert_non_null(bytes);
	spec_image_build(bytes, variant);
	put_le32(bytes + 1028, variant ? SPEC_IMAGE_VARIANT_CRC : SPEC_IMAGE_CRC);
	assert_int_equal(ek_open_memory(bytes, size, NULL, &img, &err), 0);
	assert_int_equal(ek_root_nid(img), SPEC_ROOT_NID);
	assert_int_equal(ek_inode_get(img, SPEC_ROOT_NID, &root, &err), 0);
	memset(&c, 0, sizeof(c));
	assert_int_equal(ek_readdir(root, 0, spec_collect, &c, &err), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.names[0], ".");
	assert_string_equal(c.names[1], "..");
	assert_string_equal(c.names[2], "hello.txt");
	assert_int_equal(c.nids[2], SPEC_FILE_NID);
	assert_int_equal(ek_lookup(img, "/hello.txt", &nid, &err), 0);
	assert_int_equal(nid, SPEC_FILE_NID);
	assert_int_equal(ek_inode_get(img, nid, &file, &err), 0);
	st = ek_inode_stat(file);
	assert_int_equal(st->mode, 0100644);
	assert_int_equal(st->size, 14);
	assert_int_equal(st->nlink, 1);
	assert_int_equal(st->mtime, SPEC_EPOCH);
	assert_int_equal(st->mtime_nsec, 0);
	assert_int_equal(ek_inode_stat(root)->nlink, 2);
	assert_int_equal(ek_inode_stat(root)->mode, 040755);
	{
		static const uint8_t uuid[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
						  10, 11, 12, 13, 14, 15 };
		ek_super_info si;
		ek_inode_detail d;

		ek_get_super_info(img, &si);
		assert_int_equal(si.block_size, 4096);
		assert_int_equal(si.inodes, 2);
		assert_int_equal(si.epoch, SPEC_EPOCH);
		assert_int_equal(si.blocks, variant ? 2 : 1);
		assert_memory_equal(si.uuid, uuid, 16);
		assert_string_equal(si.volume_name, "mini");
		assert_int_equal(si.checksum, variant ? SPEC_IMAGE_VARIANT_CRC
						      : SPEC_IMAGE_CRC);
		ek_inode_get_detail(root, &d);
		assert_false(d.extended);
		assert_int_equal(d.layout, EROFS_LAYOUT_FLAT_INLINE);
		assert_int_equal(d.inode_offset, 0x480);
		assert_int_equal(d.inline_offset, 0x4A0);
		assert_int_equal(d.inline_size, 48);
		assert_int_equal(d.on_disk_ino, 1);
		ek_inode_get_detail(file, &d);
		assert_int_equal(d.inode_offset, 0x4E0);
		assert_int_equal(d.on_disk_ino, 2);
		if (variant) {
			assert_int_equal(d.layout, EROFS_LAYOUT_FLAT_PLAIN);
			assert_int_equal(d.raw_u, 1);
		} else {
			assert_int_equal(d.layout, EROFS_LAYOUT_FLAT_INLINE);
			assert_int_equal(d.inline_offset, 0x500);
			assert_int_equal(d.inline_size, 14);
		}
	}
	memset(buf, 0, sizeof(buf));
	assert_int_equal(ek_read(file, buf, sizeof(buf), 0, &err), 14);
	assert_string_equal(buf, "Hello, EROFS!\n");
	assert_int_equal(ek_map(file, 3, &e, &err), 0);
	assert_int_equal(e.logical, 0);
	assert_int_equal(e.length, 14);
	if (variant) {
		assert_int_equal(e.kind, EK_EXTENT_PLAIN);
		assert_false(e.in_metadata);
		assert_int_equal(e.physical, 4096);
	} else {
		assert_int_equal(e.kind, EK_EXTENT_PLAIN);
	assert_true(e.in_metadata);
		assert_int_equal(e.physical, 0x500);
	}
	ek_inode_put(file);
	ek_inode_put(root);
	ek_close(img);
	free(bytes);
}

static void test_spec_image_read(void **state)
{
	(void)state;
	check_spec_image(false);
}

static void test_spec_variant_read(void **state)
{
	(void)state;
	check_spec_image(true);
}

/* Spec A.13: the section 11 image patched (checksum recomputed). */
static uint8_t *patched_spec_image(void)
{
	uint8_t *bytes = malloc(SPEC_IMAGE_SIZE);

	assert_non_null(bytes);
	spec_image_build(bytes, false);
	return bytes;
}

static int open_patched(uint8_t *bytes, ek_image **img, ek_error *err)
{
	put_le32(bytes + 1028, fmt_super_checksum(bytes + 1024, 3072));
	*img = NULL;
	return ek_open_memory(bytes, SPEC_IMAGE_SIZE, NULL, img, err);
}

static int count_dir(void *ctx, const ek_dirent *d)
{
	(void)d;
	(*(unsigned int *)ctx)++;
	return 0;
}

static void test_spec_image_damaged(void **state)
{
	uint8_t *b;
	ek_image *img;
	ek_inode *inode;
	ek_error err = { 0, "" };
	ek_nid nid;
	unsigned int n = 0;
	char buf[64];

	(void)state;
	/* root is not a directory: refused at open */
	b = patched_spec_image();
	put_le16(b + 0x484, 0100755);
	expect_error(open_patched(b, &img, &err), -EUCLEAN, &err);
	assert_null(img);
	free(b);

	/* i_format bit 5 and layout 5: EOPNOTSUPP when the inode is loaded */
	b = patched_spec_image();
	put_le16(b + 0x4E0, 0x0024);
	assert_int_equal(open_patched(b, &img, &err), 0);
	expect_error(ek_inode_get(img, SPEC_FILE_NID, &inode, &err), -EOPNOTSUPP, &err);
	ek_close(img);
	put_le16(b + 0x4E0, 0x000A);
	assert_int_equal(open_patched(b, &img, &err), 0);
	expect_error(ek_inode_get(img, SPEC_FILE_NID, &inode, &err), -EOPNOTSUPP, &err);
	ek_close(img);
	free(b);

	/* NLINK_1 on a compact regular file is accepted: nlink 1 */
	b = patched_spec_image();
	put_le16(b + 0x4E0, 0x0014);
	put_le16(b + 0x4E6, 0);
	assert_int_equal(open_patched(b, &img, &err), 0);
	assert_int_equal(ek_inode_get(img, SPEC_FILE_NID, &inode, &err), 0);
	assert_int_equal(ek_inode_stat(inode)->nlink, 1);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(ek_read(inode, buf, sizeof(buf), 0, &err), 14);
	assert_string_equal(buf, "Hello, EROFS!\n");
	ek_inode_put(inode);
	ek_close(img);
	free(b);

	/* nameoff0 8: readdir and lookups fail as corrupt */
	b = patched_spec_image();
	put_le16(b + 0x4A8, 8);
	assert_int_equal(open_patched(b, &img, &err), 0);
	assert_int_equal(ek_inode_get(img, SPEC_ROOT_NID, &inode, &err), 0);
	expect_error(ek_readdir(inode, 0, count_dir, &n, &err), -EUCLEAN, &err);
	assert_int_equal(n, 0);
	assert_true(ek_lookup(img, "/hello.txt", &nid, &err) < 0);
	ek_inode_put(inode);
	ek_close(img);
	free(b);

	/* '/' in a name: never listed */
	b = patched_spec_image();
	b[0x4C4 + 3 + 3] = '/';    /* "hel/o.txt" */
	assert_int_equal(open_patched(b, &img, &err), 0);
	assert_int_equal(ek_inode_get(img, SPEC_ROOT_NID, &inode, &err), 0);
	n = 0;
	assert_true(ek_readdir(inode, 0, count_dir, &n, &err) < 0);
	assert_int_equal(n, 0);
	assert_true(strlen(err.message) > 0);
	ek_inode_put(inode);
	ek_close(img);
	free(b);

	/* unsorted names: "-ello.txt" sorts before "."; lookups fail */
	b = patched_spec_image();
	b[0x4C4 + 3] = '-';
	assert_int_equal(open_patched(b, &img, &err), 0);
	assert_true(ek_lookup(img, "/-ello.txt", &nid, &err) < 0);
	ek_close(img);
	free(b);

	/* an inline tail crossing the block end (i_size 3000 at 0x500):
	 * the data cannot be read */
	b = patched_spec_image();
	put_le32(b + 0x4E8, 3000);
	assert_int_equal(open_patched(b, &img, &err), 0);
	if (ek_inode_get(img, SPEC_FILE_NID, &inode, &err) == 0) {
		char *big = malloc(3000);

		assert_non_null(big);
		assert_true(ek_read(inode, big, 3000, 0, &err) < 0);
		free(big);
		ek_inode_put(inode);
	}
	assert_true(strlen(err.message) > 0);
	ek_close(img);
	free(b);

	/* i_xattr_icount 1 (a header-only body): xattr calls fail */
	b = patched_spec_image();
	put_le16(b + 0x4E2, 1);
	assert_int_equal(open_patched(b, &img, &err), 0);
	assert_int_equal(ek_inode_get(img, SPEC_FILE_NID, &inode, &err), 0);
	assert_true(ek_xattr_list(inode, buf, sizeof(buf), &err) < 0);
	assert_true(ek_xattr_get(inode, "user.x", buf, sizeof(buf), &err) < 0);
	assert_true(strlen(err.message) > 0);
	ek_inode_put(inode);
	ek_close(img);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_stats),
		cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_super_info),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_lookup_trailing_slash_on_file),
		cmocka_unit_test(test_lookup_child),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_inode_get_bad_nid),
		cmocka_unit_test(test_readdir_root),
		cmocka_unit_test(test_readdir_large),
		cmocka_unit_test(test_readdir_not_dir),
		cmocka_unit_test(test_read_offsets),
		cmocka_unit_test(test_read_all_files),
		cmocka_unit_test(test_read_past_eof_and_dir),
		cmocka_unit_test(test_readlink),
		cmocka_unit_test(test_readlink_long),
		cmocka_unit_test(test_xattrs_match_source),
		cmocka_unit_test(test_xattr_get),
		cmocka_unit_test(test_xattr_list),
		cmocka_unit_test(test_xattr_on_disk),
		cmocka_unit_test(test_map_flat),
		cmocka_unit_test(test_map_sparse),
		cmocka_unit_test(test_open_memory),
		cmocka_unit_test(test_open_uring_option),
		cmocka_unit_test(test_open_engine_option),
		cmocka_unit_test(test_open_nonexistent),
		cmocka_unit_test(test_open_truncated),
		cmocka_unit_test(test_open_corrupt_checksum),
		cmocka_unit_test(test_build_512),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_spec_image_read),
		cmocka_unit_test(test_spec_variant_read),
		cmocka_unit_test(test_spec_image_damaged),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
