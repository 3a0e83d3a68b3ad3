/*
 * dump --stats (dump.erofs -S): inodes by type and layout, file sizes,
 * and where file data is stored, counted once per inode and, for data
 * blocks that several files share (dedupe), once per block.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "dumpstats.h"
#include "imagewalk.h"
#include "u64set.h"

/* File sizes below 1 KiB, 4 KiB, ... 16 MiB, then the rest. */
#define SIZE_CLASSES 10
#define LAYOUTS 5       /* ek_inode_detail.layout: 0..4 */
#define ALGORITHMS 4    /* ek_extent.algorithm: lz4, lzma, deflate, zstd */

/* STORE_ABSENT ("elsewhere"): chunks on an extra device whose file was
 * not given (--device), so neither their place nor their blocks are
 * known. */
enum store {
	STORE_PLAIN, STORE_COMPRESSED, STORE_INLINE, STORE_FRAGMENT, STORE_HOLE, STORE_ABSENT,
	STORES
};

static const char *const store_names[STORES] = {
	"plain", "compressed", "inline", "fragments", "holes", "elsewhere",
};

static const struct {
	uint32_t type;          /* S_IFMT bits */
	const char *name;
} types[] = {
	{ S_IFREG, "regular" }, { S_IFDIR, "directories" }, { S_IFLNK, "symlinks" },
	{ S_IFCHR, "character devices" }, { S_IFBLK, "block devices" },
	{ S_IFIFO, "fifos" }, { S_IFSOCK, "sockets" },
};
#define TYPES (sizeof(types) / sizeof(types[0]))

struct stats {
	uint32_t blksz;
	uint64_t names, inodes, by_type[TYPES], by_layout[LAYOUTS];
	uint64_t size_files[SIZE_CLASSES], size_bytes[SIZE_CLASSES];
	uint64_t data;                  /* bytes of regular files */
	uint64_t logical[STORES];       /* file bytes, by where they are */
	uint64_t stored;                /* bytes of blocks of their own, once */
	uint64_t alg_logical[ALGORITHMS], alg_stored[ALGORITHMS];
	uint64_t xattr_inodes, xattr_bytes;
	struct u64set counted;          /* physical offsets of extents
	                                   whose blocks are counted */
};

static unsigned int size_class(uint64_t size)
{
	unsigned int c = 0;
	uint64_t bound = 1024;

	while (c + 1 < SIZE_CLASSES && size >= bound) {
		bound *= 4;
		c++;
	}
	return c;
}

static enum store store_of(const ek_extent *x)
{
	switch (x->kind) {
	case EK_EXTENT_HOLE:
		return STORE_HOLE;
	case EK_EXTENT_FRAGMENT:
		return STORE_FRAGMENT;
	case EK_EXTENT_COMPRESSED:
		return x->in_metadata ? STORE_INLINE : STORE_COMPRESSED;
	default:
		return x->in_metadata ? STORE_INLINE : STORE_PLAIN;
	}
}

/* The chunk at `offset` of a chunk-based file as an extent of
 * STORE_ABSENT: ek_map refuses it (-ENXIO) as its device is not given,
 * which the counts report instead of failing the listing. */
static void absent_chunk(const struct stats *s, const struct image_entry *e, uint64_t offset,
			 ek_extent *x)
{
	ek_inode_detail d;
	uint64_t chunk;

	ek_inode_get_detail(e->inode, &d);
	/* i_u's low five bits: log2 of the chunk size in blocks. */
	chunk = (uint64_t)s->blksz << (d.raw_u & 31);
	memset(x, 0, sizeof(*x));
	x->logical = offset / chunk * chunk;
	x->length = chunk;
}

/* Where a regular file's bytes are, extent by extent; and the blocks
 * that hold them.  The packed inode's bytes are files' already
 * (file_bytes false): only its blocks and their algorithm count. */
static int count_data(struct stats *s, const struct image_entry *e, bool file_bytes,
		      ek_error *err)
{
	uint64_t offset = 0;

	while (offset < e->st->size) {
		ek_extent x;
		enum store where;
		uint64_t stored;
		int ret = ek_map(e->inode, offset, &x, err), seen;
		bool absent = ret == -ENXIO;

		if (absent)
			absent_chunk(s, e, offset, &x);
		else if (ret)
			return ret;
		/* The last extent may run past the end (a pcluster's tail). */
		if (x.length > e->st->size - x.logical)
			x.length = e->st->size - x.logical;
		where = absent ? STORE_ABSENT : store_of(&x);
		if (file_bytes)
			s->logical[where] += x.length;
		if (where == STORE_COMPRESSED && x.algorithm < ALGORITHMS)
			s->alg_logical[x.algorithm] += x.length;
		if (where == STORE_PLAIN || where == STORE_COMPRESSED) {
			seen = u64set_add(&s->counted, x.physical);
			if (seen < 0)
				return cli_fail(err, -ENOMEM, "out of memory");
			/* Whole blocks: a flat file's last one is its own. */
			stored = (x.physical_length + s->blksz - 1) / s->blksz * s->blksz;
			if (!seen) {
				s->stored += stored;
				if (where == STORE_COMPRESSED && x.algorithm < ALGORITHMS)
					s->alg_stored[x.algorithm] += stored;
			}
		}
		offset = x.logical + x.length;
	}
	return 0;
}

static int count_entry(void *ctx, const struct image_entry *e, ek_error *err)
{
	struct stats *s = ctx;
	ek_inode_detail d;
	unsigned int i, c;

	s->names++;
	if (!e->first)
		return 0;
	s->inodes++;
	for (i = 0; i < TYPES; i++)
		if ((e->st->mode & S_IFMT) == types[i].type)
			s->by_type[i]++;
	ek_inode_get_detail(e->inode, &d);
	if (d.xattr_size) {
		s->xattr_inodes++;
		s->xattr_bytes += d.xattr_size;
	}
	if (!S_ISREG(e->st->mode))
		return 0;
	if (d.layout < LAYOUTS)
		s->by_layout[d.layout]++;
	c = size_class(e->st->size);
	s->size_files[c]++;
	s->size_bytes[c] += e->st->size;
	s->data += e->st->size;
	return count_data(s, e, true, err);
}

/* The packed inode's own blocks: the fragments' stored form. */
static int count_packed(struct stats *s, ek_image *img, ek_nid nid, ek_error *err)
{
	struct image_entry e = { .path = "(packed inode)", .name = "", .nid = nid, .first = true };
	int ret = ek_inode_get(img, nid, &e.inode, err);

	if (ret)
		return ret;
	e.st = ek_inode_stat(e.inode);
	ret = count_data(s, &e, false, err);
	ek_inode_put(e.inode);
	return ret;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static void print_json(const struct stats *s, const ek_super_info *sb)
{
	unsigned int i;

	printf("{\"image_size\": %" PRIu64 ", \"block_size\": %u, \"names\": %" PRIu64
	       ", \"inodes\": %" PRIu64 ", \"types\": {", sb->image_size, sb->block_size,
	       s->names, s->inodes);
	for (i = 0; i < TYPES; i++)
		printf("%s\"%s\": %" PRIu64, i ? ", " : "", types[i].name, s->by_type[i]);
	printf("}, \"layouts\": {");
	for (i = 0; i < LAYOUTS; i++)
		printf("%s\"%s\": %" PRIu64, i ? ", " : "", ek_layout_name(i), s->by_layout[i]);
	printf("}, \"data_bytes\": %" PRIu64 ", \"data_by_store\": {", s->data);
	for (i = 0; i < STORES; i++)
		printf("%s\"%s\": %" PRIu64, i ? ", " : "", store_names[i], s->logical[i]);
	printf("}, \"stored_bytes\": %" PRIu64 ", \"algorithms\": {", s->stored);
	for (i = 0; i < ALGORITHMS; i++)
		printf("%s\"%s\": {\"data_bytes\": %" PRIu64 ", \"stored_bytes\": %" PRIu64 "}",
		       i ? ", " : "", ek_algorithm_name(i), s->alg_logical[i], s->alg_stored[i]);
	printf("}, \"sizes\": [");
	for (i = 0; i < SIZE_CLASSES; i++) {
		printf("%s{\"below\": ", i ? ", " : "");
		if (i + 1 < SIZE_CLASSES)
			printf("%llu", 1024ull << (2 * i));
		else
			printf("null");
		printf(", \"files\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", s->size_files[i],
		       s->size_bytes[i]);
	}
	printf("], \"xattr_inodes\": %" PRIu64 ", \"xattr_bytes\": %" PRIu64 "}\n",
	       s->xattr_inodes, s->xattr_bytes);
}

static void size_name(unsigned int c, char *out, size_t size)
{
	static const char *const names[SIZE_CLASSES] = {
		"1K", "4K", "16K", "64K", "256K", "1M", "4M", "16M", "64M", "",
	};

	if (c + 1 < SIZE_CLASSES)
		snprintf(out, size, "< %s", names[c]);
	else
		snprintf(out, size, ">= %s", names[c - 1]);
}

static void print_text(const struct stats *s, const ek_super_info *sb)
{
	uint64_t own = s->logical[STORE_PLAIN] + s->logical[STORE_COMPRESSED];
	unsigned int i;
	char name[16];

	printf("Image size:          %" PRIu64 " bytes (%u-byte blocks)\n", sb->image_size,
	       sb->block_size);
	printf("Names:               %" PRIu64 " (%" PRIu64 " inodes)\n", s->names, s->inodes);
	for (i = 0; i < TYPES; i++)
		if (s->by_type[i])
			printf("  %-19s%" PRIu64 "\n", types[i].name, s->by_type[i]);
	printf("Regular files by layout:\n");
	for (i = 0; i < LAYOUTS; i++)
		if (s->by_layout[i])
			printf("  %-19s%" PRIu64 "\n", ek_layout_name(i), s->by_layout[i]);
	printf("File data:           %" PRIu64 " bytes\n", s->data);
	for (i = 0; i < STORES; i++)
		if (s->logical[i])
			printf("  %-19s%" PRIu64 "%s\n", store_names[i], s->logical[i],
			       i == STORE_ABSENT ? " (on extra devices not given: --device FILE)" : "");
	/* Inline data and holes take no blocks of their own. */
	printf("Data blocks:         %" PRIu64 " bytes, for the %" PRIu64 " bytes above in plain, "
	       "compressed and fragments (%.2fx)\n", s->stored, own + s->logical[STORE_FRAGMENT],
	       ratio(own + s->logical[STORE_FRAGMENT], s->stored));
	for (i = 0; i < ALGORITHMS; i++)
		if (s->alg_logical[i])
			printf("  %-19s%" PRIu64 " bytes of data in %" PRIu64 " (%.2fx)\n",
			       ek_algorithm_name(i), s->alg_logical[i], s->alg_stored[i],
			       ratio(s->alg_logical[i], s->alg_stored[i]));
	printf("File sizes:\n");
	for (i = 0; i < SIZE_CLASSES; i++) {
		if (!s->size_files[i])
			continue;
		size_name(i, name, sizeof(name));
		printf("  %-8s %10" PRIu64 " files %16" PRIu64 " bytes\n", name, s->size_files[i],
		       s->size_bytes[i]);
	}
	printf("Xattrs:              %" PRIu64 " bytes on %" PRIu64 " inodes\n", s->xattr_bytes,
	       s->xattr_inodes);
}

int dump_stats(ek_image *img, bool json, ek_error *err)
{
	struct stats s = { 0 };
	ek_super_info sb;
	int ret;

	ek_get_super_info(img, &sb);
	s.blksz = sb.block_size;
	ret = image_walk(img, "", count_entry, &s, err);
	if (!ret && sb.packed_nid)
		ret = count_packed(&s, img, sb.packed_nid, err);
	if (!ret && json)
		print_json(&s, &sb);
	else if (!ret)
		print_text(&s, &sb);
	u64set_free(&s.counted);
	return ret;
}
