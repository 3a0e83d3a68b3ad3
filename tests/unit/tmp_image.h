/*
 * Helpers for the unit tests that make their own data, source trees and
 * images (test_encoders.c, test_write_layout.c, test_check_damage.c, and
 * lib_fixture.h for its tree removal):
 *
 *   - gen_data(): test data of a few kinds, each exercising another path
 *     of a compressor (matches, literals, long runs, short periods);
 *   - a temporary directory (tmp_dir_make/tmp_dir_remove) holding a source
 *     tree (tmp_put/tmp_mkdir) and the images built from it (tmp_build);
 *   - tmp_slurp(): a whole file into memory (an image for ek_open_memory).
 *
 * Nothing here needs root.  Every tests/unit/test_*.c is a program built
 * from that one file, so this is header-only: static inline helpers; those
 * that fail a test use cmocka's assertions.
 */
#ifndef EK_TEST_TMP_IMAGE_H
#define EK_TEST_TMP_IMAGE_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <erofskit/build.h>
#include <erofskit/erofskit.h>

/* ------------------------------------------------------------ data */

enum data_kind {
	DATA_TEXT,          /* words and lines: matches near and far */
	DATA_RANDOM,        /* incompressible: literals, stored blocks */
	DATA_ZEROS,         /* one long run: the most input per output */
	DATA_PERIOD,        /* a 7-byte period: overlapping matches */
	DATA_KINDS
};

static inline const char *data_kind_name(enum data_kind k)
{
	static const char *const names[DATA_KINDS] = { "text", "random", "zeros",
						       "period" };
	return names[k];
}

/* n bytes of kind k into p; the same (k, n, seed) gives the same bytes. */
static inline void gen_data(uint8_t *p, size_t n, enum data_kind k, uint32_t seed)
{
	static const char *const vocab[] = {
		"mount ", "superblock ", "the ", "of ", "pcluster ", "nid ",
		"inode\n", "/usr/share/doc/", "EROFS ", "= 0x", "lcluster ",
		"compressed ", "\t", "#include <stdio.h>\n", "data ", "a ",
	};
	uint32_t x = seed * 2654435761u + 1;
	size_t i = 0, len;

	while (i < n) {
		x = x * 1664525u + 1013904223u;
		switch (k) {
		case DATA_TEXT:
			len = strlen(vocab[x >> 28]);
			len = len < n - i ? len : n - i;
			memcpy(p + i, vocab[x >> 28], len);
			i += len;
			break;
		case DATA_RANDOM:
			p[i++] = (uint8_t)(x >> 24);
			break;
		case DATA_ZEROS:
			p[i++] = 0;
			break;
		default:
			p[i] = (uint8_t)("period!"[i % 7] + seed % 3);
			i++;
			break;
		}
	}
}

/* A malloc'd buffer of gen_data(); fails the test on no memory. */
static inline uint8_t *new_data(size_t n, enum data_kind k, uint32_t seed)
{
	uint8_t *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "out of memory (%zu bytes)\n", n);
		abort();
	}
	gen_data(p, n, k, seed);
	return p;
}

/* ------------------------------------------------------------ files */

/* A fresh directory /tmp/ek-unit-TAG-XXXXXX into dir[size]; 0 or -1. */
static inline int tmp_dir_make(char *dir, size_t size, const char *tag)
{
	snprintf(dir, size, "/tmp/ek-unit-%s-XXXXXX", tag);
	if (mkdtemp(dir))
		return 0;
	dir[0] = '\0';
	return -1;
}

static inline int tmp_rm_entry(const char *path, const struct stat *st, int flag,
			       struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove path and everything below it (no symlink is followed). */
static inline void tmp_rm_tree(const char *path)
{
	nftw(path, tmp_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The same for a tmp_dir_make() directory, which is then forgotten. */
static inline void tmp_dir_remove(char *dir)
{
	if (dir[0])
		tmp_rm_tree(dir);
	dir[0] = '\0';
}

/* "base/rel" into buf (rel starts with '/'). */
static inline const char *tmp_path(char *buf, size_t size, const char *base,
				   const char *rel)
{
	snprintf(buf, size, "%s%s", base, rel);
	return buf;
}

/* Write size bytes as the file base/rel; 0 or -1. */
static inline int tmp_put(const char *base, const char *rel, const void *data,
			  size_t size)
{
	char p[512];
	int fd = open(tmp_path(p, sizeof(p), base, rel),
		      O_WRONLY | O_CREAT | O_TRUNC, 0644);
	bool ok = fd >= 0 && (!size || write(fd, data, size) == (ssize_t)size);

	if (fd >= 0 && close(fd))
		ok = false;
	return ok ? 0 : -1;
}

static inline int tmp_mkdir(const char *base, const char *rel)
{
	char p[512];

	return mkdir(tmp_path(p, sizeof(p), base, rel), 0755);
}

/* The whole file into a malloc'd buffer; 0 or -1. */
static inline int tmp_slurp(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long end;
	bool ok;

	*data = NULL;
	*size = 0;
	if (!f)
		return -1;
	ok = !fseek(f, 0, SEEK_END) && (end = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET);
	if (ok) {
		*size = (size_t)end;
		*data = malloc(*size ? *size : 1);
		ok = *data && fread(*data, 1, *size, f) == *size;
	}
	fclose(f);
	if (!ok) {
		free(*data);
		*data = NULL;
	}
	return ok ? 0 : -1;
}

/* ------------------------------------------------------------ images */

/* Options for a reproducible build: fixed time, uuid, owner, so that two
 * builds of one tree are byte-identical; `spec` ("lz4hc,9", NULL for
 * none) the compressor, pcluster bytes (0: one block), workers.  Every
 * file in pclusters of its own, as without the layouts that compressed
 * images get by default (it.layouts checks those against the kernel):
 * what these tests look at is each file's own extents. */
static inline int tmp_options(ek_build_options *o, const char *spec,
			      uint32_t pcluster, unsigned int workers, ek_error *err)
{
	ek_build_options_init(o);
	o->timestamp_set = true;
	o->timestamp = 1700000000;
	o->uuid_set = true;
	memset(o->uuid, 0x5a, sizeof(o->uuid));
	o->all_root = true;
	o->pcluster_size = pcluster;
	o->workers = workers;
	o->fragments = EK_FRAGMENTS_OFF;
	o->dedupe = 0;
	return spec ? ek_parse_compressor(spec, o, err) : 0;
}

/* Build image from src with tmp_options(); 0 or the error, with a message
 * on stderr. */
static inline int tmp_build(const char *image, const char *src, const char *spec,
			    uint32_t pcluster, unsigned int workers)
{
	ek_build_options o;
	ek_error err = { 0, "" };
	int ret = tmp_options(&o, spec, pcluster, workers, &err);

	if (!ret)
		ret = ek_build(image, src, &o, NULL, &err);
	if (ret)
		fprintf(stderr, "building %s from %s (%s): %s\n", image, src,
			spec ? spec : "uncompressed", err.message);
	return ret;
}

/* Open an image held in memory with one decompressing thread. */
static inline ek_image *tmp_open_memory(const uint8_t *bytes, size_t size)
{
	ek_open_options oo;
	ek_error err = { 0, "" };
	ek_image *img = NULL;

	ek_open_options_init(&oo);
	oo.workers = 1;
	if (ek_open_memory(bytes, size, &oo, &img, &err)) {
		fprintf(stderr, "ek_open_memory: %s\n", err.message);
		return NULL;
	}
	return img;
}

/* The inode at path; fails the test if it is not there. */
static inline ek_inode *tmp_inode(ek_image *img, const char *path)
{
	ek_error err = { 0, "" };
	ek_inode *inode = NULL;
	ek_nid nid = 0;

	if (ek_lookup(img, path, &nid, &err) || ek_inode_get(img, nid, &inode, &err))
		fail_msg("%s: %s", path, err.message);
	return inode;
}

static inline ek_nid tmp_nid(ek_image *img, const char *path)
{
	ek_error err = { 0, "" };
	ek_nid nid = 0;

	if (ek_lookup(img, path, &nid, &err))
		fail_msg("%s: %s", path, err.message);
	return nid;
}

/* The file at path reads back as exactly want[0, size). */
static inline void tmp_expect_contents(ek_image *img, const char *path,
				       const uint8_t *want, size_t size)
{
	ek_inode *inode = tmp_inode(img, path);
	ek_error err = { 0, "" };
	uint8_t *buf = malloc(size + 1);
	ssize_t got;

	assert_non_null(buf);
	assert_int_equal(ek_inode_stat(inode)->size, size);
	got = ek_read(inode, buf, size + 1, 0, &err);
	if (got != (ssize_t)size)
		fail_msg("%s: read %zd of %zu bytes: %s", path, got, size, err.message);
	if (memcmp(buf, want, size))
		fail_msg("%s: reads back other bytes", path);
	free(buf);
	ek_inode_put(inode);
}

#endif
