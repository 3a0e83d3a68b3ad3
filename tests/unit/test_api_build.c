/*
 * ek_build(): the fixture build's statistics, refused builds (missing or
 * non-directory source, bad block sizes) that leave no target and keep an
 * existing one, the hook before the commit, and the fixture tree again with 512-byte blocks, -T and
 * all-root, read back through the whole API; and with chunk-based files.
 */
#include <dirent.h>

#include "format/super.h"
#include "lib_fixture.h"

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

/* ------------------------------------------------------------ build */

/* target still holds "keep" (put there before a failed build); then it
 * goes, and the directory holds only what the fixture made. */
static void expect_kept(const char *target)
{
	uint8_t *back = NULL;
	size_t back_size = 0;

	assert_int_equal(load_file(target, &back, &back_size), 0);
	assert_int_equal(back_size, 4);
	assert_memory_equal(back, "keep", 4);
	free(back);
	unlink(target);
	assert_int_equal(count_entries(g.dir), 2);
}

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
	/* clusters past what the kernel decodes (1 MiB), or not whole blocks */
	ek_build_options_init(&o);
	o.compressor = EK_COMPRESS_ZSTD;   /* (lz4's own bound would come first) */
	o.fragments = EK_FRAGMENTS_ALL;
	o.fragment_cluster = 2u << 20;
	expect_error(ek_build(target, g.src, &o, NULL, &err), -EINVAL, &err);
	assert_non_null(strstr(err.message, "packed inode cluster 2097152"));
	o.fragment_cluster = 0;
	o.pcluster_size = 4096 + 512;
	expect_error(ek_build(target, g.src, &o, NULL, &err), -EINVAL, &err);
	assert_non_null(strstr(err.message, "cluster size 4608: a cluster is whole 4096-byte"));
	assert_int_not_equal(access(target, F_OK), 0);
	/* an existing target survives a failed build untouched */
	assert_int_equal(write_copy(target, (const uint8_t *)"keep", 4), 0);
	ek_build_options_init(&o);
	assert_true(ek_build(target, missing, &o, NULL, &err) < 0);
	expect_kept(target);
}

/* ------------------------------------------------------------ before_commit */

struct commit_seen {
	unsigned int calls;
	int answer;                 /* what the hook returns */
	char path[200];
	uint64_t blocks;            /* of the image it opened there */
};

static int see_commit(void *ctx, const char *path, ek_error *err)
{
	struct commit_seen *s = ctx;
	ek_image *img = NULL;
	ek_super_info si;

	s->calls++;
	snprintf(s->path, sizeof(s->path), "%s", path);
	/* The image is whole under its temporary name. */
	assert_int_equal(ek_open(path, NULL, &img, err), 0);
	ek_get_super_info(img, &si);
	s->blocks = si.blocks;
	ek_close(img);
	if (s->answer) {
		err->code = s->answer;
		snprintf(err->message, sizeof(err->message), "the hook says no");
	}
	return s->answer;
}

/* The hook sees the finished image before it takes its name; its refusal
 * fails the build, leaving the target as it was and no temporary file. */
static void test_build_before_commit(void **state)
{
	struct commit_seen seen = { 0 };
	ek_build_options o;
	ek_build_stats st;
	ek_error err = { 0, "" };
	char target[160];

	(void)state;
	snprintf(target, sizeof(target), "%s/hooked.img", g.dir);
	ek_build_options_init(&o);
	o.before_commit = see_commit;
	o.before_commit_ctx = &seen;
	if (ek_build(target, g.src, &o, &st, &err))
		fail_msg("ek_build: %s", err.message);
	assert_int_equal(seen.calls, 1);
	assert_string_not_equal(seen.path, target);
	assert_int_not_equal(access(seen.path, F_OK), 0);   /* renamed */
	assert_int_equal(seen.blocks * 4096, st.image_bytes);

	/* Refused: the build fails with the hook's error, the image stays. */
	assert_int_equal(write_copy(target, (const uint8_t *)"keep", 4), 0);
	seen.answer = -EXDEV;
	expect_error(ek_build(target, g.src, &o, NULL, &err), -EXDEV, &err);
	assert_string_equal(err.message, "the hook says no");
	assert_int_equal(seen.calls, 2);
	assert_int_not_equal(access(seen.path, F_OK), 0);   /* removed */
	expect_kept(target);
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

/* ------------------------------------------------------------ chunks */

/*
 * The sparse file at 8 KiB chunks: its null chunks map as one hole each
 * side of the data's chunk (not a map per chunk), lseek's answers follow,
 * and a read across both holes and the data gets the file's bytes.
 */
static void check_sparse_chunks(ek_image *img, uint8_t *buf)
{
	const uint64_t chunk = 8192, data = SPARSE_DATA / chunk * chunk;
	const uint8_t *want = NULL;
	ek_inode *sparse = get_in(img, "/sparse");
	ek_error err = { 0, "" };
	ek_extent e;
	unsigned int i;

	for (i = 0; i < g.nfiles; i++)
		if (!strcmp(g.files[i].path, "/sparse"))
			want = g.files[i].data;
	assert_non_null(want);
	assert_int_equal(ek_map(sparse, 0, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_HOLE);
	assert_int_equal(e.logical, 0);
	assert_int_equal(e.length, data);
	assert_int_equal(ek_map(sparse, data - 1, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_HOLE);
	assert_int_equal(e.logical + e.length, data);
	assert_int_equal(ek_map(sparse, SPARSE_DATA, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_PLAIN);
	assert_int_equal(e.logical, data);
	assert_int_equal(e.length, chunk);
	assert_int_equal(ek_map(sparse, data + chunk + 100, &e, &err), 0);
	assert_int_equal(e.kind, EK_EXTENT_HOLE);
	assert_int_equal(e.logical, data + chunk);
	assert_int_equal(e.length, SPARSE_SIZE - data - chunk);
	assert_int_equal(ek_seek(sparse, 0, SEEK_DATA, &err), data);
	assert_int_equal(ek_seek(sparse, data + 1, SEEK_HOLE, &err), data + chunk);
	expect_error(ek_seek(sparse, data + chunk, SEEK_DATA, &err), -ENXIO, &err);
	assert_int_equal(ek_read(sparse, buf, 3 * chunk, data - chunk - 5, &err), 3 * chunk);
	assert_memory_equal(buf, want + data - chunk - 5, 3 * chunk);
	ek_inode_put(sparse);
}

/* chunk_size (with 8-byte indexes): every file reads back; the chunk-based
 * ones (the sparse file at least) have the format asked for, the others
 * are flat; sizes that are no power of two, or under a block, are
 * refused. */
static void test_build_chunks(void **state)
{
	ek_build_options o;
	ek_build_stats st;
	ek_error err = { 0, "" };
	ek_image *img = NULL;
	uint8_t *buf;
	char p[160];
	unsigned int i, chunked = 0;

	(void)state;
	snprintf(p, sizeof(p), "%s/chunks.erofs", g.dir);
	ek_build_options_init(&o);
	o.chunk_size = 3000;
	expect_error(ek_build(p, g.src, &o, NULL, &err), -EINVAL, &err);
	assert_non_null(strstr(err.message, "chunk size 3000"));
	o.chunk_size = 2048;
	expect_error(ek_build(p, g.src, &o, NULL, &err), -EINVAL, &err);
	assert_int_not_equal(access(p, F_OK), 0);
	o.chunk_size = 8192;
	o.chunk_indexes = true;
	if (ek_build(p, g.src, &o, &st, &err))
		fail_msg("ek_build: %s", err.message);
	assert_true(st.chunked_files > 0);
	assert_int_equal(ek_open(p, NULL, &img, &err), 0);
	buf = malloc(SPARSE_SIZE + 1);
	assert_non_null(buf);
	for (i = 0; i < g.nfiles; i++) {
		const struct srcfile *f = &g.files[i];
		ek_inode *inode = get_in(img, f->path);
		ek_inode_detail d;

		assert_int_equal(ek_read(inode, buf, f->size + 1, 0, &err), f->size);
		assert_memory_equal(buf, f->data, f->size);
		ek_inode_get_detail(inode, &d);
		if (d.layout == 4) {                                   /* chunk based */
			assert_int_equal(d.raw_u & 0xffff, 0x21);      /* 8 KiB, indexes */
			chunked++;
		} else {
			/* flat: new chunks only, or small */
			assert_true(d.layout == 0 || d.layout == 2);
		}
		ek_inode_put(inode);
	}
	/* the sparse file's holes are chunks of zeros */
	assert_true(chunked > 0);
	assert_int_equal(chunked, st.chunked_files);
	check_sparse_chunks(img, buf);
	free(buf);
	ek_close(img);
	unlink(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_stats),
		cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_build_before_commit),
		cmocka_unit_test(test_build_512),
		cmocka_unit_test(test_build_chunks),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
