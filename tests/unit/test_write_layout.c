/*
 * The writer's placing and segments, as a user of the image sees them:
 * small trees built here with ek_build() and read back through the public
 * API (ek_map, ek_inode_get_detail, ek_readdir), and one segment cut by
 * zsegment_compress() on its own.
 *
 * What the kernel and every reader rely on:
 *   - a file's tail that fits beside its inode in one block is stored
 *     there ("flat inline"), never across a block boundary; otherwise the
 *     data is in whole blocks;
 *   - inode records sit on 32-byte slots of the metadata area (nid * 32);
 *     a record never crosses a block boundary; records do not overlap;
 *   - directory entries are sorted by name ("." and ".." among them), the
 *     kernel's lookup is a binary search;
 *   - a compressed file's extents cover it exactly, in order; a pcluster is
 *     at most the cluster size chosen (-C); a pcluster of several blocks
 *     covers its head's lcluster and the next (where its block count is
 *     stored); the extent that starts in the last lcluster is stored plain;
 *   - data that does not compress stays uncompressed;
 * and what users rely on: the image does not depend on the number of
 * workers (segments are cut the same way whatever runs where).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "codec/codec.h"
#include "format/dir.h"
#include "format/ondisk.h"
#include "write/zinternal.h"
#include "tmp_image.h"

#define BLOCK   4096u
#define SLOT    32u
#define KiB     1024u
#define MiB     (1u << 20)
#define SEGMENT MiB             /* compress.c: max(1 MiB, 8 clusters) */

static char dir[64];

static int setup(void **state)
{
	(void)state;
	return tmp_dir_make(dir, sizeof(dir), "layout");
}

static int teardown(void **state)
{
	(void)state;
	tmp_dir_remove(dir);
	return 0;
}

/* ------------------------------------------------------------ a tree */

#define FILES_MAX 32

/* A source tree under dir/NAME and the regular files it holds. */
struct srctree {
	char src[128], image[128];
	struct {
		char path[64];
		uint8_t *data;
		size_t size;
	} f[FILES_MAX];
	size_t n;
	uint8_t *bytes;              /* the built image */
	size_t size;
	ek_image *img;
};

static void src_new(struct srctree *t, const char *name)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->src, sizeof(t->src), "%s/%s", dir, name);
	snprintf(t->image, sizeof(t->image), "%s/%s.erofs", dir, name);
	assert_int_equal(mkdir(t->src, 0755), 0);
}

static void src_dir(struct srctree *t, const char *rel)
{
	assert_int_equal(tmp_mkdir(t->src, rel), 0);
}

/* A regular file of `size` bytes of `kind`, remembered for reading back. */
static void src_file(struct srctree *t, const char *rel, size_t size,
		      enum data_kind kind)
{
	assert_true(t->n < FILES_MAX);
	snprintf(t->f[t->n].path, sizeof(t->f[t->n].path), "%s", rel);
	t->f[t->n].data = new_data(size, kind, (uint32_t)t->n + 1);
	t->f[t->n].size = size;
	assert_int_equal(tmp_put(t->src, rel, t->f[t->n].data, size), 0);
	t->n++;
}

/* Parts of several kinds, one after the other, as one file. */
static void src_mixed(struct srctree *t, const char *rel, const size_t *sizes,
		       const enum data_kind *kinds, size_t parts)
{
	size_t i, size = 0, at = 0;
	uint8_t *data;

	for (i = 0; i < parts; i++)
		size += sizes[i];
	data = new_data(size, DATA_ZEROS, 0);
	for (i = 0; i < parts; i++) {
		gen_data(data + at, sizes[i], kinds[i], (uint32_t)i + 40);
		at += sizes[i];
	}
	assert_true(t->n < FILES_MAX);
	snprintf(t->f[t->n].path, sizeof(t->f[t->n].path), "%s", rel);
	t->f[t->n].data = data;
	t->f[t->n].size = size;
	assert_int_equal(tmp_put(t->src, rel, data, size), 0);
	t->n++;
}

static void src_symlink(struct srctree *t, const char *rel, size_t len)
{
	char p[256], *target = malloc(len + 1);

	assert_non_null(target);
	memset(target, 'L', len);
	target[len] = '\0';
	assert_int_equal(symlink(target, tmp_path(p, sizeof(p), t->src, rel)), 0);
	free(target);
}

/* Build it (spec: compressor or NULL), load and open the image. */
static void src_build(struct srctree *t, const char *spec, uint32_t pcluster,
		       unsigned int workers)
{
	ek_close(t->img);
	free(t->bytes);
	assert_int_equal(tmp_build(t->image, t->src, spec, pcluster, workers), 0);
	assert_int_equal(tmp_slurp(t->image, &t->bytes, &t->size), 0);
	t->img = tmp_open_memory(t->bytes, t->size);
	assert_non_null(t->img);
}

static void src_free(struct srctree *t)
{
	size_t i;

	ek_close(t->img);
	free(t->bytes);
	for (i = 0; i < t->n; i++)
		free(t->f[i].data);
	tmp_rm_tree(t->src);
	unlink(t->image);
	memset(t, 0, sizeof(*t));
}

static void expect_all_contents(const struct srctree *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		tmp_expect_contents(t->img, t->f[i].path, t->f[i].data, t->f[i].size);
}

/* ------------------------------------------------------------ walking */

/* Every inode of an image, in the order the writer places them: the root,
 * then each directory's entries together (in name order), directories
 * entered depth first.  Also checks each directory's entry order. */
struct node {
	char path[128];
	ek_nid nid;
	unsigned int type;
};

struct walk {
	struct node v[512];
	size_t n;
};

struct entries {
	char name[320][64];
	size_t len[320];
	ek_nid nid[320];
	unsigned int type[320];
	size_t n;
};

static int collect(void *ctx, const ek_dirent *d)
{
	struct entries *e = ctx;

	assert_true(e->n < 320 && d->name_len < 64);
	memcpy(e->name[e->n], d->name, d->name_len);
	e->name[e->n][d->name_len] = '\0';
	e->len[e->n] = d->name_len;
	e->nid[e->n] = d->nid;
	e->type[e->n] = d->type;
	e->n++;
	return 0;
}

static void walk_dir(ek_image *img, struct walk *w, const char *path, ek_nid nid)
{
	struct entries *e = calloc(1, sizeof(*e));
	ek_error err = { 0, "" };
	ek_inode *d;
	size_t i, first = w->n;

	assert_non_null(e);
	assert_int_equal(ek_inode_get(img, nid, &d, &err), 0);
	assert_int_equal(ek_readdir(d, 0, collect, e, &err), 0);
	ek_inode_put(d);
	for (i = 0; i < e->n; i++) {
		/* strictly increasing: sorted, no name twice (the kernel's
		 * lookup is a binary search over the blocks and names) */
		if (i && fmt_name_cmp((const uint8_t *)e->name[i - 1], e->len[i - 1],
				      (const uint8_t *)e->name[i], e->len[i]) >= 0)
			fail_msg("%s: \"%s\" before \"%s\"", path, e->name[i - 1], e->name[i]);
		if (!strcmp(e->name[i], ".") || !strcmp(e->name[i], ".."))
			continue;
		assert_true(w->n < sizeof(w->v) / sizeof(w->v[0]));
		snprintf(w->v[w->n].path, sizeof(w->v[w->n].path), "%s/%s",
			 strcmp(path, "/") ? path : "", e->name[i]);
		w->v[w->n].nid = e->nid[i];
		w->v[w->n].type = e->type[i];
		w->n++;
	}
	for (i = first; i < w->n; i++)
		if (w->v[i].type == EK_FT_DIR) {
			char sub[128];

			memcpy(sub, w->v[i].path, sizeof(sub));
			walk_dir(img, w, sub, w->v[i].nid);
		}
	free(e);
}

static void walk_image(ek_image *img, struct walk *w)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->v[0].path, sizeof(w->v[0].path), "/");
	w->v[0].nid = ek_root_nid(img);
	w->v[0].type = EK_FT_DIR;
	w->n = 1;
	walk_dir(img, w, "/", w->v[0].nid);
}

/* The bytes an uncompressed image's inode record takes in the metadata
 * area: its core, xattrs and inline data. */
static uint64_t record_size(const ek_inode_detail *d)
{
	return (d->extended ? 64u : 32u) + d->xattr_size + d->inline_size;
}

/* ------------------------------------------------------------ placing */

/* The tree most placing tests read: tails that fit beside their inode
 * and tails one byte too long, a directory of several blocks, awkward
 * names, symlinks short and long. */
static void make_plain_tree(struct srctree *t)
{
	static const char *const names[] = {
		"-dash", "ab", "abc", "abd", "\xC3\xA9t\xC3\xA9", "Z", "a.b",
	};
	char rel[64];
	size_t i;

	src_new(t, "plain");
	src_file(t, "/empty", 0, DATA_TEXT);
	src_file(t, "/b1", 1, DATA_TEXT);
	src_file(t, "/b4063", 4063, DATA_TEXT);   /* 32 + 4063 < 4096 */
	src_file(t, "/b4064", 4064, DATA_TEXT);   /* 32 + 4064 = 4096: fits */
	src_file(t, "/b4065", 4065, DATA_RANDOM); /* one byte too many */
	src_file(t, "/b4096", 4096, DATA_RANDOM); /* no tail */
	src_file(t, "/b4097", 4097, DATA_RANDOM); /* a block and one byte */
	src_file(t, "/b16352", 3 * 4096 + 4064, DATA_PERIOD);
	src_symlink(t, "/link-short", 10);
	src_symlink(t, "/link-4064", 4064);       /* fits beside its inode */
	src_symlink(t, "/link-4065", 4065);       /* a block of its own */
	src_dir(t, "/names");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(rel, sizeof(rel), "/names/%s", names[i]);
		src_file(t, rel, i, DATA_TEXT);
	}
	src_dir(t, "/many");                      /* entries over 3 blocks */
	for (i = 0; i < 300; i++) {
		snprintf(rel, sizeof(rel), "/many/entry-with-a-long-name-%03zu", 299 - i);
		src_dir(t, rel);
	}
	src_build(t, NULL, 0, 1);
}

/* Where a file's bytes live, by the public map: inline beside the inode
 * (the detail's inline offset, right after its core), or whole blocks. */
static void expect_flat(ek_image *img, const char *path, uint64_t size, bool inline_tail)
{
	ek_inode *inode = tmp_inode(img, path);
	ek_inode_detail d;
	ek_error err = { 0, "" };
	ek_extent e;
	uint64_t tail = size % BLOCK;

	ek_inode_get_detail(inode, &d);
	assert_int_equal(d.extended, 0);
	if (inline_tail) {
		assert_string_equal(ek_layout_name(d.layout), "flat inline");
		assert_int_equal(d.inline_size, tail ? tail : BLOCK);
		assert_int_equal(d.inline_offset, d.inode_offset + 32 + d.xattr_size);
		/* beside its inode, in the same block */
		assert_true(d.inline_offset % BLOCK + d.inline_size <= BLOCK);
		assert_int_equal(ek_map(inode, size - 1, &e, &err), 0);
		assert_int_equal(e.kind, EK_EXTENT_PLAIN);
		assert_true(e.in_metadata);
		assert_int_equal(e.physical, d.inline_offset);
		assert_int_equal(e.logical, size - d.inline_size);
		assert_int_equal(e.length, d.inline_size);
		if (e.logical) {   /* the blocks before the tail */
			assert_int_equal(ek_map(inode, 0, &e, &err), 0);
			assert_false(e.in_metadata);
			assert_int_equal(e.length, size - d.inline_size);
			assert_int_equal(e.physical % BLOCK, 0);
		}
	} else {
		assert_string_equal(ek_layout_name(d.layout), "flat plain");
		assert_int_equal(d.inline_size, 0);
		if (size) {
			assert_int_equal(ek_map(inode, size - 1, &e, &err), 0);
			assert_int_equal(e.kind, EK_EXTENT_PLAIN);
			assert_false(e.in_metadata);
			assert_int_equal(e.logical, 0);
			assert_int_equal(e.length, size);
			assert_int_equal(e.physical % BLOCK, 0);
		}
	}
	ek_inode_put(inode);
}

/* A tail is inline exactly when core + tail fits one block. */
static void test_tails_inline_or_blocks(void **state)
{
	struct srctree t;
	ek_inode *l;
	ek_inode_detail d;
	char target[4200];
	ek_error err = { 0, "" };

	(void)state;
	make_plain_tree(&t);
	expect_flat(t.img, "/empty", 0, false);
	expect_flat(t.img, "/b1", 1, true);
	expect_flat(t.img, "/b4063", 4063, true);
	expect_flat(t.img, "/b4064", 4064, true);
	expect_flat(t.img, "/b4065", 4065, false);
	expect_flat(t.img, "/b4096", 4096, false);
	expect_flat(t.img, "/b4097", 4097, true);
	expect_flat(t.img, "/b16352", 3 * 4096 + 4064, true);
	/* symlinks follow the same rule */
	expect_flat(t.img, "/link-short", 10, true);
	expect_flat(t.img, "/link-4064", 4064, true);
	expect_flat(t.img, "/link-4065", 4065, false);
	l = tmp_inode(t.img, "/link-4065");
	assert_int_equal(ek_readlink(l, target, sizeof(target), &err), 4065);
	ek_inode_put(l);
	/* a directory of several blocks: whole blocks and maybe a tail */
	l = tmp_inode(t.img, "/many");
	ek_inode_get_detail(l, &d);
	assert_true(ek_inode_stat(l)->size > 2 * BLOCK);
	assert_true(d.layout == EROFS_LAYOUT_FLAT_PLAIN || d.layout == EROFS_LAYOUT_FLAT_INLINE);
	ek_inode_put(l);
	expect_all_contents(&t);
	src_free(&t);
}

/*
 * Every inode record on its 32-byte slot of the metadata area, none
 * crossing a block boundary, none overlapping another; no inode at nid 0
 * (read as "none"); placed in the writer's order, each right after the
 * previous one while it fits its block.
 */
static void expect_records(ek_image *img, bool back_to_back)
{
	struct walk *w = malloc(sizeof(*w));
	uint64_t *start, *end;
	ek_super_info sb;
	size_t i, k;

	assert_non_null(w);
	ek_get_super_info(img, &sb);
	walk_image(img, w);
	start = calloc(w->n, sizeof(*start));
	end = calloc(w->n, sizeof(*end));
	assert_true(start && end);
	for (i = 0; i < w->n; i++) {
		ek_error err = { 0, "" };
		ek_inode *inode;
		ek_inode_detail d;

		assert_int_not_equal(w->v[i].nid, 0);
		assert_int_equal(ek_inode_get(img, w->v[i].nid, &inode, &err), 0);
		ek_inode_get_detail(inode, &d);
		ek_inode_put(inode);
		assert_int_equal(d.inode_offset, sb.meta_blkaddr * BLOCK + w->v[i].nid * SLOT);
		start[i] = d.inode_offset;
		end[i] = d.inode_offset + record_size(&d);
		if (start[i] / BLOCK != (end[i] - 1) / BLOCK)
			fail_msg("%s: record %llu..%llu crosses a block boundary", w->v[i].path,
				 (unsigned long long)start[i], (unsigned long long)end[i]);
		assert_true(end[i] <= sb.blocks * BLOCK);
		if (back_to_back && i) {
			uint64_t next = (end[i - 1] + SLOT - 1) / SLOT * SLOT;

			/* the next slot, or the next block when it does not fit */
			if (next / BLOCK != (next + record_size(&d) - 1) / BLOCK)
				next = (next + BLOCK - 1) / BLOCK * BLOCK;
			if (start[i] != next)
				fail_msg("%s at %llu, expected right after %s, at %llu",
					 w->v[i].path, (unsigned long long)start[i],
					 w->v[i - 1].path, (unsigned long long)next);
		}
	}
	for (i = 0; i < w->n; i++)
		for (k = i + 1; k < w->n; k++)
			if (start[i] < end[k] && start[k] < end[i])
				fail_msg("records of %s and %s overlap", w->v[i].path,
					 w->v[k].path);
	free(start);
	free(end);
	free(w);
}

static void test_records_placed(void **state)
{
	struct srctree t;

	(void)state;
	make_plain_tree(&t);
	expect_records(t.img, false);
	src_free(&t);

	/* records small enough to follow each other in one block */
	src_new(&t, "small");
	src_dir(&t, "/d");
	src_file(&t, "/d/x", 100, DATA_TEXT);
	src_file(&t, "/d/y", 0, DATA_TEXT);
	src_file(&t, "/a", 10, DATA_TEXT);
	src_file(&t, "/c", 300, DATA_TEXT);
	src_dir(&t, "/e");
	src_file(&t, "/e/z", 7, DATA_TEXT);
	src_build(&t, NULL, 0, 1);
	expect_records(t.img, true);
	src_free(&t);
}

/*
 * A record that does not fit the rest of a block starts the next one,
 * and the space it left is used by a later record that fits there: the
 * metadata does not grow by a block for every big inline tail.
 */
static void test_records_fill_gaps(void **state)
{
	struct srctree t;
	ek_inode_detail da, db, dc;
	ek_inode *a, *b, *c;
	ek_super_info sb;

	(void)state;
	src_new(&t, "gaps");
	src_file(&t, "/a", 3000, DATA_TEXT);   /* record 3032 bytes */
	src_file(&t, "/b", 3000, DATA_TEXT);   /* does not fit after a */
	src_file(&t, "/c", 10, DATA_TEXT);     /* fits after a */
	src_build(&t, NULL, 0, 1);
	expect_records(t.img, false);
	a = tmp_inode(t.img, "/a");
	b = tmp_inode(t.img, "/b");
	c = tmp_inode(t.img, "/c");
	ek_inode_get_detail(a, &da);
	ek_inode_get_detail(b, &db);
	ek_inode_get_detail(c, &dc);
	ek_get_super_info(t.img, &sb);
	assert_int_equal(da.inode_offset / BLOCK, db.inode_offset / BLOCK - 1);
	assert_int_equal(db.inode_offset % BLOCK, 0);
	assert_int_equal(dc.inode_offset,
			 (da.inode_offset + record_size(&da) + SLOT - 1) / SLOT * SLOT);
	/* so c, placed after b, has the smaller nid */
	assert_true(tmp_nid(t.img, "/c") < tmp_nid(t.img, "/b"));
	ek_inode_put(a);
	ek_inode_put(b);
	ek_inode_put(c);
	expect_all_contents(&t);
	src_free(&t);
}

/* Directory entries in name order, byte by byte, "." and ".." in their
 * place among them ("-dash" sorts before "."), every entry once; a lookup
 * of each name finds it. */
static void test_dirs_sorted(void **state)
{
	struct srctree t;
	struct walk *w = malloc(sizeof(*w));
	size_t i;

	(void)state;
	assert_non_null(w);
	make_plain_tree(&t);
	walk_image(t.img, w);   /* checks the order of every directory */
	assert_int_equal(w->n, 1 + 13 + 7 + 300);
	for (i = 0; i < w->n; i++)
		assert_int_equal(tmp_nid(t.img, w->v[i].path), w->v[i].nid);
	{
		struct entries *e = calloc(1, sizeof(*e));
		ek_inode *d = tmp_inode(t.img, "/names");
		ek_error err = { 0, "" };

		assert_non_null(e);
		assert_int_equal(ek_readdir(d, 0, collect, e, &err), 0);
		assert_int_equal(e->n, 9);
		assert_string_equal(e->name[0], "-dash");
		assert_string_equal(e->name[1], ".");
		assert_string_equal(e->name[2], "..");
		assert_string_equal(e->name[3], "Z");
		assert_string_equal(e->name[4], "a.b");
		assert_string_equal(e->name[5], "ab");
		assert_string_equal(e->name[6], "abc");
		assert_string_equal(e->name[8], "\xC3\xA9t\xC3\xA9");
		ek_inode_put(d);
		free(e);
	}
	free(w);
	src_free(&t);
}

/* ------------------------------------------------------------ compressed */

/* The tree of the compression tests: files that compress, one that does
 * not, one in between, sizes at the edges of "worth compressing". */
static void make_z_tree(struct srctree *t, const char *name)
{
	static const size_t sizes[] = { 40 * KiB, 40 * KiB, 40 * KiB, 40 * KiB, 3000 };
	static const enum data_kind kinds[] = { DATA_TEXT, DATA_RANDOM, DATA_ZEROS,
						DATA_PERIOD, DATA_RANDOM };

	src_new(t, name);
	src_file(t, "/text", 300 * KiB, DATA_TEXT);
	src_file(t, "/random", 100 * KiB, DATA_RANDOM);
	src_mixed(t, "/mixed", sizes, kinds, 5);
	src_file(t, "/zeros", MiB, DATA_ZEROS);
	src_file(t, "/text8k", 8 * KiB, DATA_TEXT);
	src_file(t, "/text4096", 4096, DATA_TEXT);  /* one block: never */
	src_file(t, "/text4097", 4097, DATA_TEXT);  /* saves nothing */
}

/* Which of make_z_tree's files end up compressed. */
static bool z_expected(const char *path)
{
	return !strcmp(path, "/text") || !strcmp(path, "/mixed") ||
	       !strcmp(path, "/zeros") || !strcmp(path, "/text8k");
}

/*
 * A compressed file's extents, walked from offset 0 by ek_map: each starts
 * where the previous ended and the last ends at the file's end; pclusters
 * are whole blocks, at most `pcluster`, in increasing order; a compressed
 * extent saves at least a block; one of several blocks covers the lcluster
 * after its head; the extent that starts in the last lcluster is plain.
 * Returns the number of plain extents before the last lcluster.
 */
static size_t expect_extents(ek_image *img, const char *path, unsigned int algorithm,
			     uint32_t pcluster)
{
	ek_inode *inode = tmp_inode(img, path);
	uint64_t size = ek_inode_stat(inode)->size, off = 0, phys_end = 0;
	uint64_t last_lc = (size - 1) / BLOCK * BLOCK;
	size_t plain_inside = 0, compressed = 0;
	ek_inode_detail d;

	ek_inode_get_detail(inode, &d);
	assert_string_equal(ek_layout_name(d.layout), "compressed compact");
	while (off < size) {
		ek_error err = { 0, "" };
		ek_extent e;

		if (ek_map(inode, off, &e, &err))
			fail_msg("%s: map at %llu: %s", path, (unsigned long long)off,
				 err.message);
		if (e.logical != off || !e.length || e.length > size - off)
			fail_msg("%s: extent %llu+%llu at offset %llu", path,
				 (unsigned long long)e.logical, (unsigned long long)e.length,
				 (unsigned long long)off);
		assert_false(e.in_metadata);
		assert_int_equal(e.physical % BLOCK, 0);
		assert_int_equal(e.physical_length % BLOCK, 0);
		assert_in_range(e.physical_length, BLOCK, pcluster);
		assert_true(e.physical >= phys_end);
		phys_end = e.physical + e.physical_length;
		if (e.kind == EK_EXTENT_COMPRESSED) {
			compressed++;
			assert_int_equal(e.algorithm, algorithm);
			assert_true(e.physical_length < (e.length + BLOCK - 1) / BLOCK * BLOCK);
			if (e.physical_length > BLOCK)
				assert_true(e.logical % BLOCK + e.length >= 2 * BLOCK);
			if (e.logical >= last_lc)
				fail_msg("%s: extent at %llu starts in the last lcluster but "
					 "is compressed", path, (unsigned long long)e.logical);
		} else {
			assert_int_equal(e.kind, EK_EXTENT_PLAIN);
			assert_int_equal(e.physical_length, BLOCK);
			assert_true(e.length <= BLOCK);
			if (e.logical < last_lc)
				plain_inside++;
		}
		off += e.length;
	}
	assert_true(compressed > 0);
	ek_inode_put(inode);
	return plain_inside;
}

/* Every row of the codec table at its default level, with clusters of
 * 16 KiB, and lz4 with one-block clusters. */
static void test_compressed_extents(void **state)
{
	size_t row;

	(void)state;
	for (row = 0; row <= CODEC_COUNT; row++) {
		const struct codec *c = codec_get(row < CODEC_COUNT ? (enum ek_compressor)row
								   : EK_COMPRESS_LZ4);
		uint32_t pcluster = row < CODEC_COUNT ? 16 * KiB : BLOCK;
		char name[32];
		struct srctree t;
		size_t i, expected = 0;
		ek_build_options o;
		ek_build_stats st;
		ek_error err = { 0, "" };

		snprintf(name, sizeof(name), "z-%s-%u", c->name, pcluster);
		make_z_tree(&t, name);
		assert_int_equal(tmp_options(&o, c->name, pcluster, 1, &err), 0);
		if (ek_build(t.image, t.src, &o, &st, &err))
			fail_msg("%s: %s", name, err.message);
		assert_int_equal(tmp_slurp(t.image, &t.bytes, &t.size), 0);
		t.img = tmp_open_memory(t.bytes, t.size);
		assert_non_null(t.img);
		for (i = 0; i < t.n; i++) {
			ek_inode *inode = tmp_inode(t.img, t.f[i].path);
			ek_inode_detail d;
			ek_extent e;

			ek_inode_get_detail(inode, &d);
			if (z_expected(t.f[i].path)) {
				size_t plain = expect_extents(t.img, t.f[i].path,
							      c->algorithm, pcluster);

				expected++;
				/* its 40 KiB of random data is stored as it is, but
				 * for what the extents around it take along (at most
				 * a pcluster each) */
				if (!strcmp(t.f[i].path, "/mixed") &&
				    plain < (40 * KiB - 2 * pcluster) / BLOCK)
					fail_msg("%s: /mixed has %zu plain extents", name, plain);
			} else {
				if (d.layout != EROFS_LAYOUT_FLAT_PLAIN &&
				    d.layout != EROFS_LAYOUT_FLAT_INLINE)
					fail_msg("%s %s: layout %s, expected uncompressed", name,
						 t.f[i].path, ek_layout_name(d.layout));
				assert_int_equal(ek_map(inode, 0, &e, &err), 0);
				assert_int_equal(e.kind, EK_EXTENT_PLAIN);
			}
			ek_inode_put(inode);
		}
		assert_int_equal(st.compressed_files, expected);
		expect_all_contents(&t);
		src_free(&t);
	}
}

/*
 * A file of several segments compresses into the same image bytes with
 * 1, 2 and 4 workers, and no extent crosses a segment boundary (each
 * segment is cut on its own, wherever it runs).
 */
static void test_workers_same_image(void **state)
{
	static const size_t sizes[] = { 700 * KiB, 300 * KiB, 500 * KiB, 200 * KiB, 900 * KiB };
	static const enum data_kind kinds[] = { DATA_TEXT, DATA_RANDOM, DATA_PERIOD,
						DATA_ZEROS, DATA_TEXT };
	static const char *const specs[] = { "lz4hc", "deflate" };
	size_t s;

	(void)state;
	for (s = 0; s < 2; s++) {
		uint8_t *first = NULL;
		size_t first_size = 0;
		unsigned int workers;
		struct srctree t;
		char name[32];

		snprintf(name, sizeof(name), "seg-%s", specs[s]);
		src_new(&t, name);
		src_file(&t, "/before", 20 * KiB, DATA_TEXT);
		src_mixed(&t, "/big", sizes, kinds, 5);     /* 2.5 MiB: 3 segments */
		src_file(&t, "/after", 50 * KiB, DATA_TEXT);
		for (workers = 1; workers <= 4; workers *= 2) {
			src_build(&t, specs[s], 16 * KiB, workers);
			if (!first) {
				first = t.bytes;   /* kept; t.img still reads it */
				first_size = t.size;
				t.bytes = NULL;
				continue;
			}
			assert_int_equal(t.size, first_size);
			if (memcmp(t.bytes, first, first_size))
				fail_msg("%s: the image with %u workers differs from one worker's",
					 specs[s], workers);
		}
		{
			ek_inode *big = tmp_inode(t.img, "/big");
			uint64_t seg;

			expect_extents(t.img, "/big", codec_by_name(specs[s])->algorithm,
				       16 * KiB);
			for (seg = SEGMENT; seg < ek_inode_stat(big)->size; seg += SEGMENT) {
				ek_error err = { 0, "" };
				ek_extent e;

				assert_int_equal(ek_map(big, seg, &e, &err), 0);
				assert_int_equal(e.logical, seg);
			}
			ek_inode_put(big);
		}
		expect_all_contents(&t);
		free(first);
		src_free(&t);
	}
}

/* ------------------------------------------------------------ a segment */

/* One segment of a file held in a memfd, by zsegment_compress() with a
 * hand-made builder: what a worker does, without the pipeline. */
struct seg {
	struct build b;
	struct zbuilder zb;
	struct zworker w;
	struct tnode n;
	struct zfile f;
	struct fmt_zconfig cfg;
	const uint8_t *data;
};

static void seg_open(struct seg *s, const char *codec, uint32_t pcluster,
		     const uint8_t *data, size_t size)
{
	memset(s, 0, sizeof(*s));
	s->b.blksz = BLOCK;
	s->b.blkszbits = 12;
	s->zb.b = &s->b;
	s->zb.codecs[0].codec = codec_by_name(codec);
	assert_non_null(s->zb.codecs[0].codec);
	s->zb.ncodecs = 1;
	s->zb.pcluster = pcluster;
	s->zb.big = pcluster > BLOCK;
	s->zb.codecs[0].ep.level = s->zb.codecs[0].codec->level_default;
	s->zb.codecs[0].ep.block_size = BLOCK;
	s->zb.codecs[0].codec->encoder->configure(&s->zb.codecs[0].ep, pcluster, &s->cfg);
	s->w.pcluster = malloc(pcluster);
	assert_non_null(s->w.pcluster);
	s->n.size = size;
	s->n.src_path = (char *)"memfd";
	s->f.n = &s->n;
	s->f.cluster = pcluster;
	s->f.fd = -1;
	s->data = data;
}

static void seg_close(struct seg *s)
{
	encoder_destroy(s->w.enc[0]);
	free(s->w.pcluster);
}

static void task_free(struct ztask *t)
{
	free(t->ext);
	free(t->data);
	memset(t, 0, sizeof(*t));
}

static void seg_run(struct seg *s, struct ztask *t, uint64_t off, uint64_t len)
{
	memset(t, 0, sizeof(*t));
	t->kind = ZT_SEGMENT;
	t->zb = &s->zb;
	t->n = &s->n;
	t->file = &s->f;
	t->off = off;
	t->len = len;
	t->in = (uint8_t *)s->data + off;   /* read by the building thread */
	zsegment_compress(&s->zb, t, &s->w);
	if (t->error)
		fail_msg("zsegment_compress: %s", t->err.message);
	assert_true(t->ran);
}

/* The segment's extents cover [off, off + len) in order; its pclusters lie
 * back to back in t->data; a compressed one holds its stream at its end
 * after zero padding and decodes to the file's bytes, a plain one holds
 * them at its start. */
static void seg_expect(const struct seg *s, const struct ztask *t)
{
	const struct decoder *dec = codec_of_algorithm(s->zb.codecs[0].codec->algorithm)->decoders[0];
	struct dparams dp = { s->cfg.lzma_dict_size, s->cfg.zstd_windowlog };
	uint64_t la = t->off, last_lc = (s->n.size - 1) / BLOCK * BLOCK;
	size_t i, at = 0;
	uint8_t *out = malloc(s->zb.pcluster * 64);

	assert_non_null(out);
	for (i = 0; i < t->next; i++) {
		const struct zext *x = &t->ext[i];
		const uint8_t *p = t->data + at;
		size_t bytes = (size_t)x->blocks * BLOCK;

		assert_int_equal(x->la, la);
		assert_true(x->llen > 0);
		assert_in_range(bytes, BLOCK, s->zb.pcluster);
		assert_true(at + bytes <= t->data_len);
		if (x->plain) {
			assert_int_equal(x->blocks, 1);
			assert_true(x->llen <= BLOCK);
			assert_memory_equal(p, s->data + la, x->llen);
		} else {
			void *ctx = dec->ctx_new ? dec->ctx_new() : NULL;
			size_t pad = 0;
			struct dreq r = { .algorithm = s->zb.codecs[0].codec->algorithm };

			assert_true(la < last_lc);
			assert_true(x->blocks < (x->llen + BLOCK - 1) / BLOCK);
			if (x->blocks > 1)
				assert_true(la % BLOCK + x->llen >= 2 * BLOCK);
			while (pad < bytes && !p[pad])
				pad++;
			assert_true(pad < BLOCK);   /* padding shorter than a block */
			r.in = p + pad;
			r.in_len = bytes - pad;
			r.out = out;
			r.out_len = x->llen;
			assert_true(x->llen <= s->zb.pcluster * 64);
			if (dec->decode(ctx, &dp, &r))
				fail_msg("extent at %llu: %s", (unsigned long long)la, r.why);
			assert_memory_equal(out, s->data + la, x->llen);
			if (dec->ctx_free)
				dec->ctx_free(ctx);
		}
		la += x->llen;
		at += bytes;
	}
	assert_int_equal(la, t->off + t->len);
	assert_int_equal(at, t->data_len);
	free(out);
}

static bool same_task(const struct ztask *a, const struct ztask *b)
{
	size_t i;

	if (a->next != b->next || a->data_len != b->data_len ||
	    memcmp(a->data, b->data, a->data_len))
		return false;
	for (i = 0; i < a->next; i++)
		if (a->ext[i].la != b->ext[i].la || a->ext[i].llen != b->ext[i].llen ||
		    a->ext[i].blocks != b->ext[i].blocks || a->ext[i].plain != b->ext[i].plain)
			return false;
	return true;
}

/*
 * zsegment_compress() alone: a file's middle segment gives the same
 * extents and bytes whether the worker's encoder is fresh or has just
 * compressed the segment before (so the pipeline may run segments
 * anywhere, in any order); the last segment ends with its last lcluster
 * stored plain; incompressible data is cut into plain blocks.
 */
static void test_segment_alone(void **state)
{
	static const char *const codecs[] = { "lz4hc", "zstd" };
	const size_t size = 2 * SEGMENT + 5000;
	uint8_t *data = new_data(size, DATA_TEXT, 5);
	size_t c;

	(void)state;
	/* random data at the start of the middle segment and the end */
	gen_data(data + SEGMENT, 40 * KiB, DATA_RANDOM, 6);
	gen_data(data + size - 6000, 6000, DATA_RANDOM, 7);
	for (c = 0; c < 2; c++) {
		struct seg a, b;
		struct ztask t0, t1, t1b, t2;
		size_t i, plain = 0;

		seg_open(&a, codecs[c], 16 * KiB, data, size);
		seg_open(&b, codecs[c], 16 * KiB, data, size);
		seg_run(&a, &t0, 0, SEGMENT);
		seg_run(&a, &t1, SEGMENT, SEGMENT);      /* after segment 0 */
		seg_run(&b, &t1b, SEGMENT, SEGMENT);     /* fresh worker */
		seg_run(&a, &t2, 2 * SEGMENT, size - 2 * SEGMENT);
		seg_expect(&a, &t0);
		seg_expect(&a, &t1);
		seg_expect(&a, &t2);
		if (!same_task(&t1, &t1b))
			fail_msg("%s: the middle segment depends on what ran before it",
				 codecs[c]);
		for (i = 0; i < t1.next; i++)
			if (t1.ext[i].la < SEGMENT + 40 * KiB)
				plain += t1.ext[i].plain;
		/* the random start of the segment is stored as it is, but for
		 * the pcluster that reaches into the text after it */
		assert_true(plain >= (40 * KiB - 16 * KiB) / BLOCK);
		/* the file ends with an extent in its last lcluster, plain */
		assert_true(t2.ext[t2.next - 1].plain);
		assert_true(t2.ext[t2.next - 1].la >= (size - 1) / BLOCK * BLOCK);
		task_free(&t0);
		task_free(&t1);
		task_free(&t1b);
		task_free(&t2);
		seg_close(&a);
		seg_close(&b);
	}
	free(data);
}

/*
 * A big file that falls back to being stored uncompressed (random data)
 * rewinds over the blocks its compressed segments took.  The packed
 * inode's segments must not be queued among that file's, or the fall
 * back overwrites them: here the small files before it fill a packed
 * segment while its segments are queued (the queue's window, 32 MiB,
 * commits them only then).  Every file must read back.
 */
static void test_fall_back_keeps_packed(void **state)
{
	enum { SMALL = 60, SMALL_SIZE = 100 * KiB };
	const size_t big_size = 40 * MiB;
	uint8_t *small[SMALL], *big = new_data(big_size, DATA_RANDOM, 77);
	char top[64], src[96], image[96], name[32];
	ek_build_options o;
	ek_error err = { 0, "" };
	uint8_t *bytes;
	size_t size, i;
	ek_image *img;

	(void)state;
	assert_int_equal(tmp_dir_make(top, sizeof(top), "fallback"), 0);
	snprintf(src, sizeof(src), "%s/src", top);
	snprintf(image, sizeof(image), "%s/img", top);
	assert_int_equal(mkdir(src, 0755), 0);
	for (i = 0; i < SMALL; i++) {
		small[i] = new_data(SMALL_SIZE, DATA_TEXT, (uint32_t)i + 100);
		snprintf(name, sizeof(name), "/a%02zu", i);
		assert_int_equal(tmp_put(src, name, small[i], SMALL_SIZE), 0);
	}
	assert_int_equal(tmp_put(src, "/z-random", big, big_size), 0);
	assert_int_equal(tmp_options(&o, "lz4", 128 * KiB, 2, &err), 0);
	o.fragments = EK_FRAGMENTS_TAILS;
	if (ek_build(image, src, &o, NULL, &err))
		fail_msg("%s", err.message);
	assert_int_equal(tmp_slurp(image, &bytes, &size), 0);
	img = tmp_open_memory(bytes, size);
	assert_non_null(img);
	for (i = 0; i < SMALL; i++) {
		snprintf(name, sizeof(name), "/a%02zu", i);
		tmp_expect_contents(img, name, small[i], SMALL_SIZE);
		free(small[i]);
	}
	tmp_expect_contents(img, "/z-random", big, big_size);
	ek_close(img);
	free(bytes);
	free(big);
	tmp_dir_remove(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tails_inline_or_blocks),
		cmocka_unit_test(test_records_placed),
		cmocka_unit_test(test_records_fill_gaps),
		cmocka_unit_test(test_dirs_sorted),
		cmocka_unit_test(test_compressed_extents),
		cmocka_unit_test(test_workers_same_image),
		cmocka_unit_test(test_segment_alone),
		cmocka_unit_test(test_fall_back_keeps_packed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
