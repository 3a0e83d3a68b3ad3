/* The shared walk of the fuzz targets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "walk.h"

#define MAX_INODES 400
#define MAX_DEPTH 64
#define MAX_EXTENTS 64
#define READ_BYTES (32u << 10)

struct budget {
	unsigned int inodes;
	uint8_t *buf;
};

/* Touch the last byte of each name and value: out-of-bounds lengths
 * show up under ASan. */
static int xattr_cb(void *ctx, const char *name, size_t name_len,
		    const void *value, size_t value_len)
{
	unsigned int *sum = ctx;

	if (name_len)
		*sum += (uint8_t)name[name_len - 1];
	if (value_len)
		*sum += ((const uint8_t *)value)[value_len - 1];
	return 0;
}

static void walk_data(ek_inode *inode, struct budget *b)
{
	const ek_stat *st = ek_inode_stat(inode);
	uint64_t off = 0;
	unsigned int n;
	ek_extent e;

	/* The extent map, from the start. */
	for (n = 0; n < MAX_EXTENTS && off < st->size; n++) {
		if (ek_map(inode, off, &e, NULL) || e.logical + e.length <= off)
			break;
		off = e.logical + e.length;
	}
	/* Data and holes as lseek(2) asks for them (a walk of its own). */
	if (st->size) {
		ek_seek(inode, 0, SEEK_DATA, NULL);
		ek_seek(inode, st->size / 2, SEEK_HOLE, NULL);
	}
	/* Bytes at the start, the middle and the end. */
	if (st->size) {
		uint64_t at[3] = { 0, st->size / 2, st->size > READ_BYTES ? st->size - READ_BYTES : 0 };

		for (n = 0; n < 3; n++)
			ek_read(inode, b->buf, READ_BYTES, at[n], NULL);
	}
}

struct dir_ctx {
	ek_image *img;
	struct budget *b;
	unsigned int depth;
	ek_nid self;
};

static void walk_nid(ek_image *img, ek_nid nid, struct budget *b, unsigned int depth);

static int dirent_cb(void *ctx, const ek_dirent *d)
{
	struct dir_ctx *c = ctx;

	if (d->name_len <= 2 && d->name[0] == '.' &&
	    (d->name_len == 1 || d->name[1] == '.'))
		return 0;
	if (d->nid == c->self)
		return 0;
	walk_nid(c->img, d->nid, c->b, c->depth + 1);
	return c->b->inodes >= MAX_INODES;
}

static void walk_nid(ek_image *img, ek_nid nid, struct budget *b, unsigned int depth)
{
	ek_inode *inode;
	char link[4096], names[1024];
	unsigned int sum = 0;

	if (depth > MAX_DEPTH || b->inodes++ >= MAX_INODES)
		return;
	if (ek_inode_get(img, nid, &inode, NULL))
		return;
	ek_xattr_iterate(inode, xattr_cb, &sum, NULL);
	ek_xattr_list(inode, names, sizeof(names), NULL);
	ek_xattr_get(inode, "user.x", link, sizeof(link), NULL);
	switch (ek_inode_stat(inode)->mode & S_IFMT) {
	case S_IFDIR: {
		struct dir_ctx c = { img, b, depth, nid };
		ek_nid found;

		ek_readdir(inode, 0, dirent_cb, &c, NULL);
		ek_lookup_child(inode, "a", 1, &found, NULL);
		break;
	}
	case S_IFLNK:
		ek_readlink(inode, link, sizeof(link), NULL);
		break;
	case S_IFREG:
		walk_data(inode, b);
		break;
	}
	ek_inode_put(inode);
}

void fuzz_walk_image(ek_image *img)
{
	struct budget b = { 0, malloc(READ_BYTES) };
	ek_super_info sb;
	char names[512];
	ek_nid nid;

	if (!b.buf)
		return;
	ek_get_super_info(img, &sb);
	ek_feature_names(&sb, names, sizeof(names));
	walk_nid(img, ek_root_nid(img), &b, 0);
	ek_lookup(img, "/a/b/../c", &nid, NULL);
	free(b.buf);
}

void fuzz_open_and_walk(const uint8_t *data, size_t size, const char *engine,
			size_t cache_bytes)
{
	ek_open_options o;
	ek_image *img;

	ek_open_options_init(&o);
	o.deflate_engine = engine;
	o.cache_bytes = cache_bytes;
	if (ek_open_memory(data, size, &o, &img, NULL))
		return;
	fuzz_walk_image(img);
	ek_close(img);
}

void fuzz_open_with_devices(const uint8_t *data, size_t size)
{
	static int fd = -1;
	const char *files[5] = { 0 };
	unsigned int i, devices;
	char path[64];
	ek_open_options o;
	ek_image *img;

	/* The superblock's extra_devices (at 1024 + 86): the open refuses
	 * any other count of files, so it is read here, not opened for. */
	if (size < 1024 + 88)
		return;
	devices = data[1024 + 86] | (unsigned int)data[1024 + 87] << 8;
	if (!devices || devices > 4)
		return;
	if (fd < 0)
		fd = memfd_create("fuzz-device", 0);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (i = 0; i < devices; i++)
		files[i] = path;
	ek_open_options_init(&o);
	o.devices = files;
	if (ek_open_memory(data, size, &o, &img, NULL))
		return;
	fuzz_walk_image(img);
	ek_close(img);
}
