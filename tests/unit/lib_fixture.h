/*
 * The fixture shared by the test_api_*.c programs (the public read API).
 *
 * group_setup() builds a small source tree under a fresh /tmp directory
 * (top-level files of awkward sizes, a 700-file directory, a sparse file,
 * symlinks short and long, a fifo, a hard link, a character device where
 * mknod works, xattrs in several namespaces, odd owners and times), builds
 * it with ek_build() into a 4096-byte-block image, reads the image into
 * memory and opens it as g.img; g.files holds every regular file's
 * expected contents.  group_teardown() closes and removes it all.
 *
 * Every tests/unit/test_*.c is a program built from that one file, so this
 * is header-only: static inline helpers, and one `g` per program.
 */
#ifndef EK_TEST_LIB_FIXTURE_H
#define EK_TEST_LIB_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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

#include "tmp_image.h"

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

static inline uint32_t rng(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static inline void src_path(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s%s", g.src, rel);
}

static inline int write_copy(const char *path, const uint8_t *data,
			     size_t size)
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

static inline int write_file(const char *rel, const uint8_t *data,
			     size_t size)
{
	char p[256];

	src_path(p, sizeof(p), rel);
	return write_copy(p, data, size);
}

/* The next entry of g.files: image path `rel`, `size` zeroed bytes. */
static inline struct srcfile *new_srcfile(const char *rel, size_t size)
{
	struct srcfile *f = &g.files[g.nfiles++];

	snprintf(f->path, sizeof(f->path), "%s", rel);
	f->size = size;
	f->data = calloc(1, size ? size : 1);
	return f->data ? f : NULL;
}

static inline int add_file(const char *rel, size_t size, uint32_t seed)
{
	struct srcfile *f = new_srcfile(rel, size);
	size_t i;

	if (!f)
		return -1;
	for (i = 0; i < size; i++)
		f->data[i] = (uint8_t)rng(&seed);
	return write_file(rel, f->data, size);
}

/* A file with a 2 MiB hole, 5000 bytes of data, and a hole to 3 MiB. */
static inline int add_sparse(const char *rel)
{
	struct srcfile *f = new_srcfile(rel, SPARSE_SIZE);
	uint32_t seed = 4242;
	char p[256];
	size_t i;
	int fd;

	if (!f)
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

static inline int set_mtime(const char *rel, int64_t sec, long nsec)
{
	struct timespec ts[2] = { { (time_t)sec, nsec }, { (time_t)sec, nsec } };
	char p[256];

	src_path(p, sizeof(p), rel);
	return utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW);
}

static inline int set_xattr(const char *rel, const char *name, const void *v,
			    size_t n)
{
	char p[256];

	src_path(p, sizeof(p), rel);
	return lsetxattr(p, name, v, n, 0);
}

static inline const struct srcfile *find_file(const char *path)
{
	unsigned int i;

	for (i = 0; i < g.nfiles; i++)
		if (!strcmp(g.files[i].path, path))
			return &g.files[i];
	return NULL;
}

static inline ek_inode *get_path(const char *path)
{
	ek_error err = { 0, "" };
	ek_inode *inode = NULL;
	ek_nid nid = 0;

	assert_int_equal(ek_lookup(g.img, path, &nid, &err), 0);
	assert_int_equal(ek_inode_get(g.img, nid, &inode, &err), 0);
	assert_non_null(inode);
	return inode;
}

static inline ek_nid nid_of(const char *path)
{
	ek_nid nid = 0;

	assert_int_equal(ek_lookup(g.img, path, &nid, NULL), 0);
	return nid;
}

static inline void expect_error(int ret, int code, const ek_error *err)
{
	assert_int_equal(ret, code);
	assert_int_equal(err->code, code);
	assert_true(strlen(err->message) > 0);
}

static inline int load_file(const char *path, uint8_t **data, size_t *size)
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

/* ------------------------------------------------------------ fixture */

static inline int make_tree(void)
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
		f = new_srcfile(rel, n);
		if (!f)
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

static inline int group_teardown(void **state)
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
		tmp_rm_tree(g.dir);
	g.dir[0] = '\0';
	return 0;
}

static inline int setup_fail(const char *what, const char *why)
{
	fprintf(stderr, "lib_fixture setup: %s: %s\n", what, why);
	group_teardown(NULL);
	return -1;
}

static inline int group_setup(void **state)
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

/* ------------------------------------------------------------ readdir */

/* collect() is an ek_readdir callback keeping every entry in a struct
 * collected; it stops (returning 42) after stop_after entries if that is
 * set. */
struct collected {
	unsigned int n, stop_after;
	char names[NSUB + 8][16];
	ek_nid nids[NSUB + 8];
	unsigned int types[NSUB + 8];
	uint64_t next[NSUB + 8];
};

static inline int collect(void *ctx, const ek_dirent *d)
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

/* ------------------------------------------------------------ map */

/* An inode of any image by path; fails the test if it is not there. */
static inline ek_inode *get_in(ek_image *img, const char *path)
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
static inline void check_map_in(ek_image *img, const uint8_t *bytes,
				size_t isize, uint32_t blksz,
				const struct srcfile *f, uint64_t off)
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

#endif
