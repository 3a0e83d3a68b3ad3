/*
 * ek_check() on damaged images: a small tree built here (uncompressed, and
 * with lz4hc and deflate), then precise bytes damaged at places found
 * through the public API (ek_inode_get_detail's inode offset, ek_map's
 * physical offsets), then checked, and extracted, as an unprivileged user
 * would (preserve_owner = 0).
 *
 * What users rely on:
 *   - exactly the damage is reported: one problem per damaged inode, under
 *     its path and nid, with -EUCLEAN and a message that says what is
 *     wrong; nothing is reported for the rest of the tree, which is still
 *     checked (the statistics count it);
 *   - the same problems, in the same order, whatever the number of
 *     workers;
 *   - extraction still recreates everything that is intact, byte for
 *     byte; a damaged file keeps what could be read before its first
 *     problem and ends there; what could not be read is not created;
 *     nothing is written outside the target directory;
 *   - an image whose superblock checksum is wrong does not open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include <erofskit/check.h>

#include "format/ondisk.h"
#include "tmp_image.h"

#define BLOCK       4096u
#define SPARSE_SIZE (3u << 20)
#define SPARSE_AT   (1u << 20)    /* its only data: 8 KiB here */
#define SPARSE_DATA 8192u

/* ------------------------------------------------------------ the tree */

enum fate { INTACT, CUT, ABSENT };

static const struct {
	const char *path;
	size_t size;
} files[] = {
	{ "/a.txt", 20000 },
	{ "/b.bin", 100000 },
	{ "/c-small", 100 },          /* inline beside its inode */
	{ "/dir/x", 9000 },
	{ "/dir/y", 50 },
	{ "/sparse", SPARSE_SIZE },   /* chunk based: its holes cost nothing */
	{ "/zz", 30000 },
};
#define NFILES (sizeof(files) / sizeof(files[0]))
#define NINODES (NFILES + 3)      /* the root, /dir, /link */

/* The images: uncompressed, and compressed by two algorithms of different
 * kinds (lz4's raw blocks, deflate's fixed-output search). */
static const char *const specs[] = { NULL, "lz4hc", "deflate" };
#define NIMAGES (sizeof(specs) / sizeof(specs[0]))

static struct {
	char dir[64], src[96];
	uint8_t *data[NFILES];
	uint8_t *image[NIMAGES];
	size_t image_size[NIMAGES];
	unsigned int outs;            /* extraction directories made */
} g;

static int setup(void **state)
{
	char p[160];
	size_t i;

	(void)state;
	if (tmp_dir_make(g.dir, sizeof(g.dir), "damage"))
		return -1;
	snprintf(g.src, sizeof(g.src), "%s/src", g.dir);
	if (mkdir(g.src, 0755) || tmp_mkdir(g.src, "/dir"))
		return -1;
	for (i = 0; i < NFILES; i++) {
		g.data[i] = new_data(files[i].size, DATA_TEXT, (uint32_t)i);
		if (!strcmp(files[i].path, "/sparse")) {
			int fd;

			memset(g.data[i], 0, files[i].size);
			gen_data(g.data[i] + SPARSE_AT, SPARSE_DATA, DATA_RANDOM, 9);
			fd = open(tmp_path(p, sizeof(p), g.src, files[i].path),
				  O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || ftruncate(fd, SPARSE_SIZE) ||
			    pwrite(fd, g.data[i] + SPARSE_AT, SPARSE_DATA, SPARSE_AT) !=
				    SPARSE_DATA || close(fd))
				return -1;
		} else if (tmp_put(g.src, files[i].path, g.data[i], files[i].size)) {
			return -1;
		}
	}
	if (symlink("a.txt", tmp_path(p, sizeof(p), g.src, "/link")))
		return -1;
	for (i = 0; i < NIMAGES; i++) {
		snprintf(p, sizeof(p), "%s/image%zu.erofs", g.dir, i);
		if (tmp_build(p, g.src, specs[i], 0, 1) ||
		    tmp_slurp(p, &g.image[i], &g.image_size[i]))
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NFILES; i++)
		free(g.data[i]);
	for (i = 0; i < NIMAGES; i++)
		free(g.image[i]);
	tmp_dir_remove(g.dir);
	return 0;
}

/* ------------------------------------------------------------ damage */

/* A private copy of image i to damage, and where things are in it (read
 * from the intact image). */
struct copy {
	size_t image;
	uint8_t *bytes;
	size_t size;
	ek_image *img;                /* the intact image, for finding places */
};

static void copy_make(struct copy *c, size_t image)
{
	c->image = image;
	c->size = g.image_size[image];
	c->bytes = malloc(c->size);
	assert_non_null(c->bytes);
	memcpy(c->bytes, g.image[image], c->size);
	c->img = tmp_open_memory(g.image[image], c->size);
	assert_non_null(c->img);
}

static void copy_free(struct copy *c)
{
	ek_close(c->img);
	free(c->bytes);
}

static void inode_detail(struct copy *c, const char *path, ek_inode_detail *d)
{
	ek_inode *inode = tmp_inode(c->img, path);

	ek_inode_get_detail(inode, d);
	ek_inode_put(inode);
}

/* Ruin the compressed pcluster holding `offset` of path: its stream, from
 * its first byte (after the zero padding) to the end, becomes 0xFF, which
 * no decoder takes (lz4: a literal run longer than the input; deflate: the
 * reserved block type).  Returns the extent's first byte: the file is
 * good up to there. */
static uint64_t ruin_pcluster(struct copy *c, const char *path, uint64_t offset)
{
	ek_inode *inode = tmp_inode(c->img, path);
	ek_error err = { 0, "" };
	ek_extent e;
	uint64_t at;

	assert_int_equal(ek_map(inode, offset, &e, &err), 0);
	ek_inode_put(inode);
	assert_int_equal(e.kind, EK_EXTENT_COMPRESSED);
	assert_false(e.in_metadata);
	assert_true(e.physical + e.physical_length <= c->size);
	at = e.physical;
	while (at < e.physical + e.physical_length && !c->bytes[at])
		at++;
	assert_true(at < e.physical + e.physical_length);
	memset(c->bytes + at, 0xFF, e.physical + e.physical_length - at);
	return e.logical;
}

/* The inode's mode (le16 at byte 4 of its core) gets the type bits no
 * file type has. */
static void ruin_mode(struct copy *c, const char *path)
{
	ek_inode_detail d;
	uint16_t mode;

	inode_detail(c, path, &d);
	mode = get_le16(c->bytes + d.inode_offset + 4);
	put_le16(c->bytes + d.inode_offset + 4, (uint16_t)((mode & 07777) | 0xF000));
}

/* A directory's third entry (after "." and "..": its first name) gets a
 * name offset past the end of its block. */
static void ruin_dirent(struct copy *c, const char *path)
{
	ek_inode *dir = tmp_inode(c->img, path);
	ek_error err = { 0, "" };
	ek_extent e;

	assert_int_equal(ek_map(dir, 0, &e, &err), 0);
	ek_inode_put(dir);
	assert_true(e.length >= 3 * 12);
	/* a dirent: nid (8 bytes), nameoff (2), file type, reserved */
	put_le16(c->bytes + e.physical + 2 * 12 + 8, 0xFFF0);
}

/* The entry `name` of the directory at path is renamed `to` (as long), in
 * place in its block. */
static void ruin_name(struct copy *c, const char *path, const char *name, const char *to)
{
	ek_inode *dir = tmp_inode(c->img, path);
	ek_error err = { 0, "" };
	size_t len = strlen(name), k, count;
	ek_extent e;
	uint8_t *blk;

	assert_int_equal(strlen(to), len);
	assert_int_equal(ek_map(dir, 0, &e, &err), 0);
	ek_inode_put(dir);
	blk = c->bytes + e.physical;
	count = get_le16(blk + 8) / 12;        /* the first name follows the entries */
	for (k = 0; k < count; k++) {
		uint16_t off = get_le16(blk + 12 * k + 8);
		uint64_t end = k + 1 < count ? get_le16(blk + 12 * (k + 1) + 8) : e.length;

		if (end - off == len && !memcmp(blk + off, name, len)) {
			memcpy(blk + off, to, len);
			return;
		}
	}
	fail_msg("%s has no entry %s", path, name);
}

/* The chunk of path that holds `offset` points at a block past the end
 * of the image.  Returns the chunk's first byte. */
static uint64_t ruin_chunk(struct copy *c, const char *path, uint64_t offset)
{
	ek_inode *inode = tmp_inode(c->img, path);
	ek_error err = { 0, "" };
	ek_inode_detail d;
	ek_extent e;
	uint64_t table;

	ek_inode_get_detail(inode, &d);
	assert_string_equal(ek_layout_name(d.layout), "chunk based");
	/* the 4-byte index form: one block address per chunk, right after
	 * the inode's core and xattrs */
	assert_int_equal(d.raw_u & EROFS_CHUNK_INDEXES, 0);
	assert_int_equal(ek_map(inode, offset, &e, &err), 0);
	ek_inode_put(inode);
	assert_int_equal(e.kind, EK_EXTENT_PLAIN);
	table = d.inode_offset + (d.extended ? 64 : 32) + d.xattr_size;
	assert_int_equal(get_le32(c->bytes + table + 4 * (e.logical / e.length)),
			 e.physical / BLOCK);
	put_le32(c->bytes + table + 4 * (e.logical / e.length),
		 (uint32_t)(c->size / BLOCK + 1000));
	return e.logical;
}

/* ------------------------------------------------------------ checking */

struct problem {
	char path[128];
	ek_nid nid;
	int code;
	char message[EK_ERROR_MESSAGE_MAX];
	uint64_t offset, image_offset;
	char decoder[16];
};

struct problems {
	struct problem v[16];
	size_t n;
};

static void on_problem(void *ctx, const ek_problem *problem)
{
	struct problems *p = ctx;

	if (p->n < 16) {
		struct problem *v = &p->v[p->n];

		snprintf(v->path, sizeof(v->path), "%s", problem->path);
		v->nid = problem->nid;
		v->code = problem->code;
		snprintf(v->message, sizeof(v->message), "%s", problem->message);
		v->offset = problem->offset;
		v->image_offset = problem->image_offset;
		snprintf(v->decoder, sizeof(v->decoder), "%s",
			 problem->decoder ? problem->decoder : "");
	}
	p->n++;
}

/* One expected problem: its path (and so its nid, looked up in the intact
 * image) and a key part of its message. */
struct expect {
	const char *path;
	const char *says;
};

/* What a damage does to the tree: the problems, and each file's fate. */
struct outcome {
	struct expect problems[4];
	size_t nproblems;
	struct {
		const char *path;    /* a damaged file, extracted ... */
		uint64_t at;         /* ... up to here */
	} cuts[2];
	size_t ncuts;
	bool unmapped;               /* the cut is where the extent map itself
	                                fails: no image byte is known there */
	const char *absent[NINODES]; /* not reachable, or not an inode */
	size_t nabsent;
};

/* What becomes of the entry at path; *cut_at: where a CUT file ends. */
static enum fate fate_of(const struct outcome *o, const char *path, uint64_t *cut_at)
{
	size_t i;

	for (i = 0; i < o->ncuts; i++)
		if (!strcmp(o->cuts[i].path, path)) {
			*cut_at = o->cuts[i].at;
			return CUT;
		}
	for (i = 0; i < o->nabsent; i++)
		if (!strcmp(o->absent[i], path))
			return ABSENT;
	return INTACT;
}

static bool present(const struct outcome *o, const char *path)
{
	uint64_t unused;

	return fate_of(o, path, &unused) != ABSENT;
}

static int check_image(const uint8_t *bytes, size_t size, unsigned int workers,
		       const char *extract_dir, struct problems *p, ek_check_stats *st)
{
	ek_image *img = tmp_open_memory(bytes, size);
	ek_check_options o;
	ek_error err = { 0, "" };
	int ret;

	assert_non_null(img);
	memset(p, 0, sizeof(*p));
	ek_check_options_init(&o);
	o.workers = workers;
	o.extract_dir = extract_dir;
	o.preserve_owner = 0;        /* as any user may */
	o.problem = on_problem;
	o.problem_ctx = p;
	ret = ek_check(img, &o, st, &err);
	if (ret)
		fail_msg("ek_check: %s", err.message);
	ek_close(img);
	return ret;
}

/* A damaged file's problem says where its data went bad: the file offset
 * it is cut at, the image byte of the extent there (found in the intact
 * image; unknown when the map itself is what broke) and, for a compressed
 * extent, the decoder that met it; any other problem has no offset. */
static bool placed_right(const struct copy *c, const struct outcome *o,
			 const struct problem *v)
{
	ek_error err = { 0, "" };
	uint64_t cut_at = 0;
	ek_inode *inode;
	ek_extent e;
	bool ok;

	if (fate_of(o, v->path, &cut_at) != CUT)
		return v->offset == EK_NO_OFFSET && v->image_offset == EK_NO_OFFSET &&
		       !*v->decoder;
	if (o->unmapped)
		return v->offset == cut_at && v->image_offset == EK_NO_OFFSET && !*v->decoder;
	inode = tmp_inode(c->img, v->path);
	assert_int_equal(ek_map(inode, cut_at, &e, &err), 0);
	ek_inode_put(inode);
	if (e.kind == EK_EXTENT_COMPRESSED)
		ok = v->image_offset == e.physical &&
		     !strcmp(v->decoder, ek_algorithm_name(e.algorithm));
	else
		ok = v->image_offset == e.physical + (cut_at - e.logical) && !*v->decoder;
	return ok && v->offset == cut_at;
}

static void expect_problems(const struct copy *c, const struct problems *p,
			    const struct outcome *o, unsigned int workers)
{
	bool as_expected = p->n == o->nproblems;
	size_t i;

	for (i = 0; as_expected && i < o->nproblems; i++)
		as_expected = !strcmp(p->v[i].path, o->problems[i].path) &&
			      p->v[i].nid == tmp_nid(c->img, o->problems[i].path) &&
			      p->v[i].code == -EUCLEAN &&
			      strstr(p->v[i].message, o->problems[i].says) &&
			      placed_right(c, o, &p->v[i]);
	if (as_expected)
		return;
	for (i = 0; i < p->n && i < 16; i++)
		fprintf(stderr, "  workers %u: %s (nid %llu, %d, offset %lld, image "
			"offset %lld, decoder '%s'): %s\n", workers, p->v[i].path,
			(unsigned long long)p->v[i].nid, p->v[i].code,
			(long long)p->v[i].offset, (long long)p->v[i].image_offset,
			p->v[i].decoder, p->v[i].message);
	fail_msg("the %zu problems above are not the %zu expected (first: %s, \"%s\")",
		 p->n, o->nproblems, o->nproblems ? o->problems[0].path : "-",
		 o->nproblems ? o->problems[0].says : "-");
}

/* The statistics count everything that could be reached, and every byte
 * read: all of the intact files, the damaged ones up to their cut. */
static void expect_stats(const ek_check_stats *st, const struct outcome *o)
{
	uint64_t inodes = NINODES - o->nabsent, regular = NFILES, bytes = 0;
	size_t i;

	for (i = 0; i < NFILES; i++) {
		uint64_t cut_at = 0;

		switch (fate_of(o, files[i].path, &cut_at)) {
		case INTACT:
			bytes += files[i].size;
			break;
		case CUT:
			bytes += cut_at;
			break;
		case ABSENT:
			regular--;
			break;
		}
	}
	assert_int_equal(st->problems, o->nproblems);
	assert_int_equal(st->inodes, inodes);
	assert_int_equal(st->directories, present(o, "/dir") ? 2 : 1);
	assert_int_equal(st->regular_files, regular);
	assert_int_equal(st->bytes, bytes);
	assert_int_equal(st->io_errors, 0);
}

/* nftw() has no context argument: the entries of the tree being counted. */
static size_t counted;

static int count_entry(const char *path, const struct stat *st, int flag,
		       struct FTW *ftw)
{
	(void)path;
	(void)st;
	(void)flag;
	(void)ftw;
	counted++;
	return 0;
}

/* Entries in the tree at path, path itself included. */
static size_t count_tree(const char *path)
{
	counted = 0;
	assert_int_equal(nftw(path, count_entry, 16, FTW_PHYS), 0);
	return counted;
}

/* The extracted tree holds exactly what could be read: intact files byte
 * for byte, the damaged ones up to their cut, nothing else. */
static void expect_extracted(const char *out, const struct outcome *o)
{
	size_t i, entries = 1;   /* out itself, the files, /dir and /link */
	char p[256], target[16];
	struct stat st;

	for (i = 0; i < NFILES; i++) {
		uint64_t cut_at = 0;
		enum fate f = fate_of(o, files[i].path, &cut_at);
		uint8_t *got = NULL;
		size_t size = 0;

		tmp_path(p, sizeof(p), out, files[i].path);
		if (f == ABSENT) {
			if (lstat(p, &st) == 0)
				fail_msg("%s was extracted", files[i].path);
			continue;
		}
		entries++;
		if (tmp_slurp(p, &got, &size))
			fail_msg("%s was not extracted", files[i].path);
		if (f == CUT) {
			assert_int_equal(size, cut_at);
			assert_memory_equal(got, g.data[i], size);
		} else {
			assert_int_equal(size, files[i].size);
			if (memcmp(got, g.data[i], size))
				fail_msg("%s: extracted with other bytes", files[i].path);
		}
		free(got);
	}
	if (present(o, "/link")) {
		entries++;
		assert_int_equal(readlink(tmp_path(p, sizeof(p), out, "/link"), target,
					  sizeof(target)), 5);
		assert_memory_equal(target, "a.txt", 5);
	}
	if (present(o, "/dir")) {
		entries++;
		assert_int_equal(lstat(tmp_path(p, sizeof(p), out, "/dir"), &st), 0);
		assert_true(S_ISDIR(st.st_mode));
	}
	assert_int_equal(count_tree(out), entries);
}

/* Nothing appeared in g.dir but the extracted trees: it holds its images,
 * the source tree and the extraction directories, nothing else. */
static void expect_nothing_outside(void)
{
	size_t expected = 1 + NIMAGES + count_tree(g.src);
	unsigned int i;
	char p[160];

	for (i = 0; i < g.outs; i++) {
		snprintf(p, sizeof(p), "%s/out%u", g.dir, i);
		expected += count_tree(p);
	}
	assert_int_equal(count_tree(g.dir), expected);
}

/*
 * Check the damaged copy with 1 and 4 workers, then extract it with 1 and
 * 4 workers into fresh directories: the same problems every time, the
 * statistics and the extracted tree as the outcome says.
 */
static void expect_outcome(struct copy *c, const struct outcome *o)
{
	static const unsigned int workers[] = { 1, 4 };
	struct problems first, p;
	ek_check_stats st;
	size_t w, i;

	for (w = 0; w < 2; w++) {
		char out[160];

		check_image(c->bytes, c->size, workers[w], NULL, &p, &st);
		expect_problems(c, &p, o, workers[w]);
		expect_stats(&st, o);
		if (w == 0)
			first = p;
		assert_int_equal(p.n, first.n);
		for (i = 0; i < p.n; i++) {
			assert_string_equal(p.v[i].path, first.v[i].path);
			assert_int_equal(p.v[i].nid, first.v[i].nid);
			assert_string_equal(p.v[i].message, first.v[i].message);
		}

		snprintf(out, sizeof(out), "%s/out%u", g.dir, g.outs++);
		check_image(c->bytes, c->size, workers[w], out, &p, &st);
		expect_problems(c, &p, o, workers[w]);
		expect_stats(&st, o);
		expect_extracted(out, o);
		expect_nothing_outside();
	}
}

/* A damage done to a copy of an image; it completes the outcome with
 * what it found (where a damaged file is cut). */
typedef void (*damage_fn)(struct copy *c, struct outcome *o);

/* The damage, then its outcome, on each image from `first` on. */
static void on_every_image(damage_fn damage, const struct outcome *expected,
			   size_t first)
{
	size_t i;

	for (i = first; i < NIMAGES; i++) {
		struct outcome o = *expected;
		struct copy c;

		copy_make(&c, i);
		if (damage)
			damage(&c, &o);
		expect_outcome(&c, &o);
		copy_free(&c);
	}
}

/* ------------------------------------------------------------ tests */

/* The intact images check clean and extract whole. */
static void test_intact(void **state)
{
	static const struct outcome o = { .nproblems = 0 };

	(void)state;
	on_every_image(NULL, &o, 0);
}

/* One ruined pcluster in the middle of a compressed file: that file alone,
 * cut where the pcluster's extent starts. */
static void ruin_b(struct copy *c, struct outcome *o)
{
	o->cuts[0].at = ruin_pcluster(c, "/b.bin", 50000);
	assert_true(o->cuts[0].at > 0 && o->cuts[0].at <= 50000);
}

static void test_ruined_pcluster(void **state)
{
	static const struct outcome o = {
		.problems = { { "/b.bin", "malformed stream" } }, .nproblems = 1,
		.cuts = { { "/b.bin", 0 } }, .ncuts = 1,
	};

	(void)state;
	on_every_image(ruin_b, &o, 1);
}

/* Two damaged files: two problems, in path order; /dir/x's only pcluster
 * is its first, so it is extracted empty. */
static void ruin_b_and_x(struct copy *c, struct outcome *o)
{
	assert_int_equal(ruin_pcluster(c, "/dir/x", 0), 0);
	o->cuts[0].at = ruin_pcluster(c, "/b.bin", 90000);
}

static void test_two_ruined_files(void **state)
{
	static const struct outcome o = {
		.problems = { { "/b.bin", "malformed stream" },
			      { "/dir/x", "extent at offset 0 " } }, .nproblems = 2,
		.cuts = { { "/b.bin", 0 }, { "/dir/x", 0 } }, .ncuts = 2,
	};

	(void)state;
	on_every_image(ruin_b_and_x, &o, 1);
}

/* An inode whose mode has no valid file type: reported under its name; it
 * is not extracted; its directory and the rest are. */
static void ruin_c_mode(struct copy *c, struct outcome *o)
{
	(void)o;
	ruin_mode(c, "/c-small");
}

static void test_invalid_mode(void **state)
{
	static const struct outcome o = {
		.problems = { { "/c-small", "invalid file type in mode 0170644" } },
		.nproblems = 1,
		.absent = { "/c-small" }, .nabsent = 1,
	};

	(void)state;
	on_every_image(ruin_c_mode, &o, 0);
}

/* A directory entry whose name lies past its block: the directory is
 * reported, what is below it cannot be reached (its files are neither
 * counted nor extracted), the directory itself is still created. */
static void ruin_dir_entry(struct copy *c, struct outcome *o)
{
	(void)o;
	ruin_dirent(c, "/dir");
}

static void test_bad_dirent(void **state)
{
	static const struct outcome o = {
		.problems = { { "/dir", "name offsets" } }, .nproblems = 1,
		.absent = { "/dir/x", "/dir/y" }, .nabsent = 2,
	};

	(void)state;
	on_every_image(ruin_dir_entry, &o, 0);
}

/* A name with a slash in the root directory (in its place in name order):
 * the directory is refused whole, so nothing of it is created, let alone
 * something outside the target. */
static void ruin_root_name(struct copy *c, struct outcome *o)
{
	(void)o;
	ruin_name(c, "/", "zz", "z/");
}

static void test_name_with_slash(void **state)
{
	static const struct outcome o = {
		.problems = { { "/", "name contains '/'" } }, .nproblems = 1,
		.absent = { "/a.txt", "/b.bin", "/c-small", "/dir", "/dir/x", "/dir/y",
			    "/link", "/sparse", "/zz" },
		.nabsent = 9,
	};

	(void)state;
	on_every_image(ruin_root_name, &o, 0);
}

/* A chunk pointing past the end of the image: the file is reported and
 * extracted up to that chunk (its hole before it included). */
static void ruin_sparse_chunk(struct copy *c, struct outcome *o)
{
	o->cuts[0].at = ruin_chunk(c, "/sparse", SPARSE_AT);
	assert_int_equal(o->cuts[0].at, SPARSE_AT);
}

static void test_chunk_past_end(void **state)
{
	static const struct outcome o = {
		.problems = { { "/sparse", "past the end" } }, .nproblems = 1,
		.cuts = { { "/sparse", 0 } }, .ncuts = 1, .unmapped = true,
	};

	(void)state;
	on_every_image(ruin_sparse_chunk, &o, 0);
}

/* A superblock whose checksum does not match: the image does not open, from
 * memory or from a file, and the error says why. */
static void test_superblock_checksum(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NIMAGES; i++) {
		struct copy c;
		ek_open_options oo;
		ek_error err = { 0, "" };
		ek_image *img = NULL;
		char p[160];

		copy_make(&c, i);
		/* one bit of the volume name (superblock byte 64), which the
		 * checksum covers */
		c.bytes[EROFS_SUPER_OFFSET + 64] ^= 1;
		ek_open_options_init(&oo);
		assert_int_equal(ek_open_memory(c.bytes, c.size, &oo, &img, &err), -EUCLEAN);
		assert_null(img);
		assert_int_equal(err.code, -EUCLEAN);
		assert_non_null(strstr(err.message, "checksum"));
		snprintf(p, sizeof(p), "%s/bad.erofs", g.dir);
		assert_int_equal(tmp_put(p, "", c.bytes, c.size), 0);
		memset(&err, 0, sizeof(err));
		assert_int_equal(ek_open(p, &oo, &img, &err), -EUCLEAN);
		assert_null(img);
		assert_non_null(strstr(err.message, "checksum"));
		unlink(p);
		copy_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intact),
		cmocka_unit_test(test_ruined_pcluster),
		cmocka_unit_test(test_two_ruined_files),
		cmocka_unit_test(test_invalid_mode),
		cmocka_unit_test(test_bad_dirent),
		cmocka_unit_test(test_name_with_slash),
		cmocka_unit_test(test_chunk_past_end),
		cmocka_unit_test(test_superblock_checksum),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
