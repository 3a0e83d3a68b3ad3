/* Extended attributes: inline bodies, the shared area, long prefixes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/xattr.h"
#include "read/blocks.h"
#include "read/data.h"
#include "read/internal.h"

/* Where the long-prefix table lives (spec 5.5, the 6.18 reader rule). */
static int read_prefix_space(ek_image *img, uint64_t off, void *buf,
			     size_t len, ek_error *err)
{
	const struct fmt_super *sb = &img->sb;

	if (sb->feature_compat & EROFS_COMPAT_PLAIN_XATTR_PFX)
		return image_read(img, off, buf, len, err);
	if (sb->feature_incompat & EROFS_INCOMPAT_METABOX)
		return meta_read(img, true, off, buf, len, err);
	if (img->packed) {
		if (off > img->packed->st.size || len > img->packed->st.size - off)
			return err_fail(err, -EUCLEAN,
				       "long xattr prefix table at %llu is past the end of the packed inode",
				       (unsigned long long)off);
		return data_read(img->packed, buf, len, off, err);
	}
	return image_read(img, off, buf, len, err);
}

int ek_get_xattr_prefix(const ek_image *img, unsigned int index, char *buf, size_t size)
{
	const struct long_prefix *p;
	const char *base;
	size_t base_len;

	if (index >= img->nprefixes)
		return -ENOENT;
	p = &img->prefixes[index];
	base = fmt_xattr_prefix(p->base_index);
	if (!base)
		return -EUCLEAN;
	base_len = strlen(base);
	if (base_len + p->infix_len >= size)
		return -ERANGE;
	memcpy(buf, base, base_len);
	memcpy(buf + base_len, p->infix, p->infix_len);
	buf[base_len + p->infix_len] = '\0';
	return (int)(base_len + p->infix_len);
}

int xattr_load_prefixes(ek_image *img, ek_error *err)
{
	const struct fmt_super *sb = &img->sb;
	uint64_t off = (uint64_t)sb->xattr_prefix_start * 4;
	unsigned int i, n = sb->xattr_prefix_count;

	if (!(sb->feature_incompat & EROFS_INCOMPAT_XATTR_PREFIXES) || !n)
		return 0;
	if (n > EROFS_XATTR_LONG_PREFIX_MAX)
		return err_fail(err, -EUCLEAN, "superblock: %u long xattr prefixes (max 128)", n);
	img->prefixes = calloc(n, sizeof(*img->prefixes));
	if (!img->prefixes)
		return err_fail(err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		uint8_t hdr[2], rec[256];
		uint16_t len;
		int ret;

		off = round_up_u64(off, 4);
		ret = read_prefix_space(img, off, hdr, 2, err);
		if (!ret) {
			len = get_le16(hdr);
			if (len < 1 || len > 256)
				return err_fail(err, -EUCLEAN,
					       "long xattr prefix %u: length %u not in 1..256", i, len);
			ret = read_prefix_space(img, off + 2, rec, len, err);
		}
		if (ret) {
			err_prefix(err, "long xattr prefix %u: ", i);
			return ret;
		}
		/* An unknown base index is not refused (the kernel mounts such
		 * images): names using it are invisible, as the kernel's. */
		img->prefixes[i].base_index = rec[0];
		img->prefixes[i].infix_len = (uint16_t)(len - 1);
		img->prefixes[i].infix = malloc(len);
		if (!img->prefixes[i].infix)
			return err_fail(err, -ENOMEM, "out of memory");
		memcpy(img->prefixes[i].infix, rec + 1, len - 1u);
		img->nprefixes = i + 1;
		off += 2 + len;
	}
	return 0;
}

#define XATTR_NAME_BUF (64 + 256 + 256)
#define XATTR_ENTRY_MAX (EROFS_XATTR_ENTRY_SIZE + 255 + 65535 + 3)

struct walk {
	ek_inode *inode;
	ek_xattr_fn fn;
	void *ctx;
	char name[XATTR_NAME_BUF];
	uint8_t *entry;     /* XATTR_ENTRY_MAX bytes */
};

/* Build the full name of an entry; returns false for entries the kernel
 * never lists (index 0, lustre, unknown indexes). */
static int full_name(struct walk *w, const struct fmt_xattr_entry_hdr *h,
		     const uint8_t *suffix, size_t *len, ek_error *err)
{
	ek_image *img = w->inode->img;
	const char *prefix;
	const uint8_t *infix = NULL;
	size_t plen, ilen = 0;

	if (h->name_index & EROFS_XATTR_LONG_PREFIX) {
		unsigned int k = h->name_index & EROFS_XATTR_LONG_PREFIX_MASK;

		if (k >= img->nprefixes)
			return err_fail(err, -EUCLEAN,
				       "inode %llu: xattr uses long prefix %u of %u",
				       (unsigned long long)w->inode->nid, k,
				       img->nprefixes);
		prefix = fmt_xattr_prefix(img->prefixes[k].base_index);
		if (!prefix || img->prefixes[k].base_index == EROFS_XATTR_INDEX_LUSTRE)
			return 1;   /* invisible */
		infix = img->prefixes[k].infix;
		ilen = img->prefixes[k].infix_len;
	} else {
		prefix = fmt_xattr_prefix(h->name_index);
		if (!prefix || h->name_index == EROFS_XATTR_INDEX_LUSTRE)
			return 1;   /* invisible */
	}
	plen = strlen(prefix);
	memcpy(w->name, prefix, plen);
	if (ilen)
		memcpy(w->name + plen, infix, ilen);
	memcpy(w->name + plen + ilen, suffix, h->name_len);
	*len = plen + ilen + h->name_len;
	w->name[*len] = '\0';
	return 0;
}

static int report(struct walk *w, const struct fmt_xattr_entry_hdr *h,
		  const uint8_t *body, ek_error *err)
{
	size_t len = 0;
	int ret;

	if (!h->name_len && !h->name_index && !h->value_size)
		return 0;   /* zero padding */
	ret = full_name(w, h, body, &len, err);
	if (ret)
		return ret > 0 ? 0 : ret;
	if (memchr(w->name, '\0', len))
		return err_fail(err, -EUCLEAN, "inode %llu: xattr name contains NUL",
			       (unsigned long long)w->inode->nid);
	return w->fn(w->ctx, w->name, len, body + h->name_len, h->value_size);
}

static int walk_shared(struct walk *w, uint32_t id, ek_error *err)
{
	ek_inode *inode = w->inode;
	ek_image *img = inode->img;
	bool metabox = img->sb.feature_compat & EROFS_COMPAT_SHARED_EA_IN_METABOX;
	uint64_t off = ((uint64_t)img->sb.xattr_blkaddr << img->blkszbits) +
		       (uint64_t)id * 4;
	struct fmt_xattr_entry_hdr h;
	int ret;

	ret = meta_read(img, metabox, off, w->entry, EROFS_XATTR_ENTRY_SIZE, err);
	if (!ret) {
		fmt_xattr_entry_decode(w->entry, &h);
		ret = meta_read(img, metabox, off + EROFS_XATTR_ENTRY_SIZE,
				w->entry + EROFS_XATTR_ENTRY_SIZE,
				(size_t)h.name_len + h.value_size, err);
	}
	if (ret) {
		err_prefix(err, "inode %llu: shared xattr %u: ",
				(unsigned long long)inode->nid, id);
		return ret;
	}
	if (!h.name_len && !h.name_index)
		return err_fail(err, -EUCLEAN, "inode %llu: shared xattr %u is empty",
			       (unsigned long long)inode->nid, id);
	return report(w, &h, w->entry + EROFS_XATTR_ENTRY_SIZE, err);
}

int ek_xattr_iterate(ek_inode *inode, ek_xattr_fn fn, void *ctx, ek_error *err)
{
	uint32_t size = inode->raw.xattr_size;
	struct fmt_xattr_body_hdr hdr;
	struct walk w = { .inode = inode, .fn = fn, .ctx = ctx };
	uint8_t *body;
	uint32_t pos, i;
	int ret;

	if (!inode->raw.xattr_icount)
		return 0;
	if (size == EROFS_XATTR_HEADER_SIZE)
		return err_fail(err, -EUCLEAN,
			       "inode %llu: xattr body holds only a header (i_xattr_icount 1)",
			       (unsigned long long)inode->nid);
	body = malloc(size);
	w.entry = malloc(XATTR_ENTRY_MAX);
	if (!body || !w.entry) {
		ret = err_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = meta_read(inode->img, inode->in_metabox, inode->xattr_off, body, size, err);
	if (ret) {
		err_prefix(err, "inode %llu: xattrs: ", (unsigned long long)inode->nid);
		goto out;
	}
	fmt_xattr_body_decode(body, &hdr);
	pos = EROFS_XATTR_HEADER_SIZE + 4u * hdr.shared_count;
	if (pos > size) {
		ret = err_fail(err, -EUCLEAN,
			      "inode %llu: %u shared xattr ids overflow the %u-byte xattr body",
			      (unsigned long long)inode->nid, hdr.shared_count, size);
		goto out;
	}
	/* Inline entries first, then shared: the kernel's listing order. */
	while (pos < size) {
		struct fmt_xattr_entry_hdr h;
		size_t esize;

		fmt_xattr_entry_decode(body + pos, &h);
		esize = fmt_xattr_entry_size(h.name_len, h.value_size);
		if (esize > size - pos) {
			ret = err_fail(err, -EUCLEAN,
				      "inode %llu: xattr entry at body offset %u (%zu bytes) overflows the %u-byte body",
				      (unsigned long long)inode->nid, pos, esize, size);
			goto out;
		}
		ret = report(&w, &h, body + pos + EROFS_XATTR_ENTRY_SIZE, err);
		if (ret)
			goto out;
		pos += (uint32_t)esize;
	}
	for (i = 0; i < hdr.shared_count; i++) {
		ret = walk_shared(&w, get_le32(body + EROFS_XATTR_HEADER_SIZE + 4 * i), err);
		if (ret)
			goto out;
	}
out:
	free(body);
	free(w.entry);
	return ret;
}

struct list_ctx {
	char *buf;
	size_t size, used;
};

static int list_one(void *ctx, const char *name, size_t name_len,
		    const void *value, size_t value_len)
{
	struct list_ctx *l = ctx;

	(void)value;
	(void)value_len;
	if (l->size) {
		if (l->used + name_len + 1 > l->size)
			return -ERANGE;
		memcpy(l->buf + l->used, name, name_len + 1);
	}
	l->used += name_len + 1;
	return 0;
}

ssize_t ek_xattr_list(ek_inode *inode, char *buf, size_t size, ek_error *err)
{
	struct list_ctx l = { buf, size, 0 };
	int ret = ek_xattr_iterate(inode, list_one, &l, err);

	if (ret == -ERANGE)
		return err_fail(err, -ERANGE, "xattr name list needs more than %zu bytes", size);
	return ret ? ret : (ssize_t)l.used;
}

struct get_ctx {
	const char *name;
	size_t name_len;
	void *buf;
	size_t size;
	ssize_t result;
};

static int get_one(void *ctx, const char *name, size_t name_len,
		   const void *value, size_t value_len)
{
	struct get_ctx *g = ctx;

	if (name_len != g->name_len || memcmp(name, g->name, name_len))
		return 0;
	if (g->size && value_len > g->size) {
		g->result = -ERANGE;
		return 1;
	}
	if (g->size && value_len)
		memcpy(g->buf, value, value_len);
	g->result = (ssize_t)value_len;
	return 1;
}

ssize_t ek_xattr_get(ek_inode *inode, const char *name, void *buf,
		     size_t size, ek_error *err)
{
	struct get_ctx g = { name, strlen(name), buf, size, -ENODATA };
	int ret;

	/* As the VFS: names longer than XATTR_NAME_MAX are out of range. */
	if (g.name_len > 255)
		return err_fail(err, -ERANGE, "xattr name of %zu bytes is too long", g.name_len);
	ret = ek_xattr_iterate(inode, get_one, &g, err);

	if (ret < 0)
		return ret;
	if (g.result == -ENODATA)
		return err_fail(err, -ENODATA, "inode %llu has no xattr %s",
			       (unsigned long long)inode->nid, name);
	if (g.result == -ERANGE)
		return err_fail(err, -ERANGE, "xattr %s is larger than %zu bytes", name, size);
	return g.result;
}
