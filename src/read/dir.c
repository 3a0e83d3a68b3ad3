/* Directories: iteration and lookup over validated directory blocks. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/dir.h"
#include "read/data.h"
#include "read/internal.h"

#define DIRBLK_MAX (1u << EROFS_MAX_BLKSZBITS)

struct dirblock {
	uint8_t data[DIRBLK_MAX];
	struct fmt_dirent ents[DIRBLK_MAX / (EROFS_DIRENT_SIZE + 1)];
	unsigned int count;
};

static int load_block(ek_inode *dir, uint64_t index, struct dirblock *b,
		      ek_error *err)
{
	ek_image *img = dir->img;
	uint64_t start = index << img->blkszbits;
	size_t valid = dir->raw.size - start < img->blksz ?
		       (size_t)(dir->raw.size - start) : img->blksz;
	fmt_why why;
	int ret;

	ret = data_read(dir, b->data, valid, start, err);
	if (ret) {
		err_prefix(err, "directory %llu, block %llu: ",
				(unsigned long long)dir->nid,
				(unsigned long long)index);
		return ret;
	}
	ret = fmt_dirblock_parse(b->data, valid, img->blksz, b->ents,
				 &b->count, &why);
	if (ret)
		return err_fail(err, ret, "directory %llu, block %llu: %s",
			       (unsigned long long)dir->nid,
			       (unsigned long long)index, why.text);
	return 0;
}

static int require_dir(ek_inode *dir, ek_error *err)
{
	if (!S_ISDIR(dir->raw.mode))
		return err_fail(err, -ENOTDIR, "inode %llu is not a directory",
			       (unsigned long long)dir->nid);
	return 0;
}

/* A directory stored without its "." entry (DOT_OMITTED, Linux 6.15):
 * the readers make one up, as the kernel does. */
static bool dot_omitted(const ek_inode *dir)
{
	ek_inode_detail d;

	ek_inode_get_detail(dir, &d);
	return d.dot_omitted;
}

/* The "." of a DOT_OMITTED directory, after every stored entry, where
 * the kernel lists it: at offset end, the offset the last block ends at. */
static int made_up_dot(ek_inode *dir, uint64_t end, ek_readdir_fn fn, void *ctx)
{
	ek_dirent d = {
		.nid = dir->nid,
		.type = EROFS_FT_DIR,
		.name = ".",
		.name_len = 1,
		.next_offset = end + 1,
	};

	return fn(ctx, &d);
}

int ek_readdir(ek_inode *dir, uint64_t offset, ek_readdir_fn fn, void *ctx,
	       ek_error *err)
{
	ek_image *img = dir->img;
	uint64_t nblocks, b;
	unsigned int first;
	struct dirblock *blk;
	int ret = require_dir(dir, err);

	if (ret)
		return ret;
	nblocks = div_round_up_u64(dir->raw.size, img->blksz);
	b = offset >> img->blkszbits;
	first = (unsigned int)((offset & (img->blksz - 1)) / EROFS_DIRENT_SIZE);
	uint8_t prev[EROFS_NAME_MAX];
	size_t prev_len = 0;

	blk = malloc(sizeof(*blk));
	if (!blk)
		return err_fail(err, -ENOMEM, "out of memory");
	/* Lookups bisect over blocks: the order must hold across them too,
	 * so a walk starting mid-directory first reads the block before. */
	if (b > 0 && b < nblocks) {
		ret = load_block(dir, b - 1, blk, err);
		if (ret)
			goto out;
		prev_len = blk->ents[blk->count - 1].name_len;
		memcpy(prev, blk->ents[blk->count - 1].name, prev_len);
	}
	for (; b < nblocks; b++, first = 0) {
		unsigned int i;

		ret = load_block(dir, b, blk, err);
		if (ret)
			break;
		if (prev_len && fmt_name_cmp(prev, prev_len, blk->ents[0].name,
					     blk->ents[0].name_len) >= 0) {
			ret = err_fail(err, -EUCLEAN,
				      "directory %llu, block %llu: names out of order across blocks: \"%.*s\" comes after the previous block's last name",
				      (unsigned long long)dir->nid, (unsigned long long)b,
				      (int)blk->ents[0].name_len, blk->ents[0].name);
			break;
		}
		prev_len = blk->ents[blk->count - 1].name_len;
		memcpy(prev, blk->ents[blk->count - 1].name, prev_len);
		for (i = first; i < blk->count; i++) {
			ek_dirent d = {
				.nid = blk->ents[i].nid,
				.type = blk->ents[i].type,
				.name = (const char *)blk->ents[i].name,
				.name_len = blk->ents[i].name_len,
				.next_offset = i + 1 < blk->count ?
					(b << img->blkszbits) + (i + 1) * EROFS_DIRENT_SIZE :
					(b + 1) << img->blkszbits,
			};

			ret = fn(ctx, &d);
			if (ret)
				goto out;
		}
	}
	if (!ret && dot_omitted(dir) && offset <= nblocks << img->blkszbits)
		ret = made_up_dot(dir, nblocks << img->blkszbits, fn, ctx);
out:
	free(blk);
	return ret;
}

int ek_lookup_child(ek_inode *dir, const char *name, size_t name_len,
		    ek_nid *out, ek_error *err)
{
	ek_image *img = dir->img;
	const uint8_t *key = (const uint8_t *)name;
	uint64_t lo = 0, hi;
	struct dirblock *blk;
	int ret = require_dir(dir, err);

	if (ret)
		return ret;
	if (name_len == 0 || name_len > EROFS_NAME_MAX)
		return err_fail(err, -ENOENT, "no entry of that name");
	if (name_len == 1 && name[0] == '.' && dot_omitted(dir)) {
		*out = dir->nid;
		return 0;
	}
	hi = div_round_up_u64(dir->raw.size, img->blksz);
	blk = malloc(sizeof(*blk));
	if (!blk)
		return err_fail(err, -ENOMEM, "out of memory");
	/* Names are sorted across blocks: find the last block whose first
	 * name is <= key, then search inside it. */
	ret = -ENOENT;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		unsigned int a, z;
		int c;

		ret = load_block(dir, mid, blk, err);
		if (ret)
			break;
		c = fmt_name_cmp(key, name_len, blk->ents[0].name,
				 blk->ents[0].name_len);
		if (c < 0) {
			hi = mid;
			ret = -ENOENT;
			continue;
		}
		c = fmt_name_cmp(key, name_len, blk->ents[blk->count - 1].name,
				 blk->ents[blk->count - 1].name_len);
		if (c > 0) {
			lo = mid + 1;
			ret = -ENOENT;
			continue;
		}
		a = 0;
		z = blk->count;
		ret = -ENOENT;
		while (a < z) {
			unsigned int m = a + (z - a) / 2;

			c = fmt_name_cmp(key, name_len, blk->ents[m].name,
					 blk->ents[m].name_len);
			if (c == 0) {
				*out = blk->ents[m].nid;
				ret = 0;
				break;
			}
			if (c < 0)
				z = m;
			else
				a = m + 1;
		}
		break;
	}
	free(blk);
	if (ret == -ENOENT)
		err_fail(err, -ENOENT, "no entry named \"%.*s\" in directory %llu",
			(int)name_len, name, (unsigned long long)dir->nid);
	return ret;
}

int ek_lookup(ek_image *img, const char *path, ek_nid *out, ek_error *err)
{
	ek_nid nid = img->sb.root_nid;
	size_t len = strlen(path);
	const char *p = path;
	int ret;

	if (!len)
		return err_fail(err, -ENOENT, "empty path");

	while (*p) {
		const char *end;
		ek_inode *dir;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		ret = inode_load(img, nid, &dir, err);
		if (ret)
			return ret;
		ret = ek_lookup_child(dir, p, (size_t)(end - p), &nid, err);
		ek_inode_put(dir);
		if (ret) {
			if (ret == -ENOENT)
				err_fail(err, -ENOENT, "%s: no such file or directory", path);
			return ret;
		}
		p = end;
	}
	/* "file/" names a directory or nothing. */
	if (path[len - 1] == '/' && nid != img->sb.root_nid) {
		ek_inode *last;

		ret = inode_load(img, nid, &last, err);
		if (ret)
			return ret;
		ret = S_ISDIR(last->raw.mode) ? 0 :
		      err_fail(err, -ENOTDIR, "%s: not a directory", path);
		ek_inode_put(last);
		if (ret)
			return ret;
	}
	*out = nid;
	return 0;
}
