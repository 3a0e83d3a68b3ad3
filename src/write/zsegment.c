/*
 * One segment of a file into extents, by fixed-output compression:
 * each extent takes as much input as fits one physical cluster.  The
 * format's rules decide each extent's form:
 *   - an extent that starts in the file's last lcluster is stored
 *     uncompressed (the reader derives its end from the next lcluster);
 *   - a pcluster of several blocks needs its extent to cover the whole
 *     lcluster after its head (where its block count is recorded), else it
 *     is recompressed into one block;
 *   - an extent that does not save a whole block is stored uncompressed,
 *     one block of it, and compression resumes after it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "write/zinternal.h"
#include "util/error.h"

static int reserve(struct ztask *t, size_t data, ek_error *err)
{
	if (t->next == t->ext_cap) {
		size_t cap = t->ext_cap ? t->ext_cap * 2 : 64;
		struct zext *g = realloc(t->ext, cap * sizeof(*g));

		if (!g)
			return err_fail(err, -ENOMEM, "out of memory");
		t->ext = g;
		t->ext_cap = cap;
	}
	if (t->data_len + data > t->data_cap) {
		size_t cap = t->data_cap ? t->data_cap : data;
		uint8_t *g;

		while (cap < t->data_len + data)
			cap *= 2;
		g = realloc(t->data, cap);
		if (!g)
			return err_fail(err, -ENOMEM, "out of memory");
		t->data = g;
		t->data_cap = cap;
	}
	return 0;
}

static int emit_plain(struct zbuilder *zb, struct ztask *t, const uint8_t *in,
		      uint64_t la, uint32_t llen)
{
	uint32_t blksz = zb->b->blksz;
	int ret = reserve(t, blksz, &t->err);

	if (ret)
		return ret;
	memcpy(t->data + t->data_len, in, llen);
	memset(t->data + t->data_len + llen, 0, blksz - llen);
	t->data_len += blksz;
	t->ext[t->next++] = (struct zext){ la, llen, 1, true };
	return 0;
}

static int emit_compressed(struct zbuilder *zb, struct ztask *t,
			   const uint8_t *stream, size_t csize, uint64_t la,
			   uint32_t llen, uint16_t blocks)
{
	size_t bytes = (size_t)blocks * zb->b->blksz;
	int ret = reserve(t, bytes, &t->err);

	if (ret)
		return ret;
	/* 0padding: the stream sits at the end of its pcluster. */
	memset(t->data + t->data_len, 0, bytes - csize);
	memcpy(t->data + t->data_len + bytes - csize, stream, csize);
	t->data_len += bytes;
	t->ext[t->next++] = (struct zext){ la, llen, blocks, false };
	return 0;
}

static int read_input(struct ztask *t, struct zworker *w)
{
	uint8_t *p;
	uint64_t off = t->off;
	size_t left = (size_t)t->len;

	if (w->in_cap < t->len) {
		p = realloc(w->in, (size_t)t->len);
		if (!p)
			return err_fail(&t->err, -ENOMEM, "out of memory");
		w->in = p;
		w->in_cap = (size_t)t->len;
	}
	p = w->in;
	while (left) {
		ssize_t got = pread(t->file->fd, p, left, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return err_fail(&t->err, -errno, "%s: read error at offset %llu: %s",
				       t->n->src_path, (unsigned long long)off,
				       strerror(errno));
		if (got == 0)
			return err_fail(&t->err, -ESTALE,
				       "%s: shrank while being read (ends before offset %llu of %llu)",
				       t->n->src_path, (unsigned long long)off,
				       (unsigned long long)t->n->size);
		p += got;
		off += (uint64_t)got;
		left -= (size_t)got;
	}
	return 0;
}

void zsegment_compress(struct zbuilder *zb, struct ztask *t, struct zworker *w)
{
	uint32_t blksz = zb->b->blksz;
	uint64_t size = t->n->size;
	uint64_t last_lc = (size - 1) / blksz * blksz;   /* lclusters = blocks */
	uint64_t pos = 0;
	size_t hint = 0;   /* per segment: the same wherever it runs */
	int ret;

	t->ran = true;
	ret = read_input(t, w);
	while (!ret && pos < t->len) {
		uint64_t la = t->off + pos, left = t->len - pos;
		uint64_t cofs = la % blksz;
		size_t consumed = 0, csize = 0;
		uint32_t cap = zb->pcluster;
		uint16_t blocks;

		if (la >= last_lc) {
			/* Starts in the last lcluster: stored as it is. */
			ret = emit_plain(zb, t, w->in + pos, la, (uint32_t)left);
			pos += left;
			continue;
		}
		for (;;) {
			ret = encoder_fill(w->enc, w->in + pos, (size_t)left, w->pcluster,
					      cap, &consumed, &csize,
					      cap == zb->pcluster ? &hint : NULL);
			if (ret == -ENOSPC) {
				consumed = 0;
				ret = 0;
				break;
			}
			if (ret) {
				err_fail(&t->err, ret, "%s: compressor failed (%d)",
					t->n->src_path, ret);
				break;
			}
			blocks = (uint16_t)((csize + blksz - 1) / blksz);
			if (blocks > 1 && cofs + consumed < 2ull * blksz && cap > blksz) {
				cap = blksz;   /* no lcluster to hold the count */
				continue;
			}
			break;
		}
		if (ret)
			break;
		blocks = (uint16_t)((csize + blksz - 1) / blksz);
		if (!consumed || blocks >= (consumed + blksz - 1) / blksz) {
			uint32_t llen = left < blksz ? (uint32_t)left : blksz;

			ret = emit_plain(zb, t, w->in + pos, la, llen);
			pos += llen;
			continue;
		}
		ret = emit_compressed(zb, t, w->pcluster, csize, la, (uint32_t)consumed, blocks);
		pos += consumed;
	}
	t->error = ret;
}
