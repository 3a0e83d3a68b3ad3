/*
 * A whole fragment longer than the pipeline holds (fragment_room): read
 * from its file as it commits, a piece at a time, straight into the
 * packed data, which the pipeline takes segment by segment as it grows.
 * Read whole into a task instead, a file was held twice (the task's
 * input, then its copy in the packed data, which had to grow for it):
 * the root filesystem's 48 MiB apt list took a build with the smallest
 * setting to 268 MiB.
 *
 * It is looked at first, as a worker looks at a smaller one: whether it
 * compresses at all, and its digest when fragdedupe compares it.  Most
 * files tell at once (their first 64 KiB shrink) and need no digest (no
 * other file has their size): then the first piece, read to look at,
 * stays where it was read and the file is read once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/probe.h"
#include "util/digest.h"
#include "util/error.h"
#include "write/fragments.h"
#include "write/source.h"
#include "write/zinternal.h"

static size_t piece_at(const struct tnode *n, uint64_t off)
{
	return n->size - off < FRAGSTREAM_PIECE ? (size_t)(n->size - off) : FRAGSTREAM_PIECE;
}

/* Read the piece at off into the room at the packed data's end. */
static int read_piece(struct build *b, const struct tnode *n, int fd, uint64_t off,
		      uint8_t **at)
{
	size_t len = piece_at(n, off);

	*at = packed_room(b, len);
	if (!*at)
		return -ENOMEM;
	return source_pread(b, n, fd, *at, len, off);
}

/* Whether it compresses at all, and its digest if wanted; its first
 * piece stays at packed_room() when that is all there was to read. */
static int look_at(struct zbuilder *zb, struct fragstream *s, bool *compressible)
{
	struct build *b = zb->b;
	const struct tnode *n = s->n;
	struct digest_state *d = s->want_digest ? digest_begin() : NULL;
	uint64_t off;
	int ret = 0;

	if (s->want_digest && !d)
		return err_fail(b->err, -ENOMEM, "out of memory");
	*compressible = false;
	for (off = 0; off < n->size; off += piece_at(n, off)) {
		size_t len = piece_at(n, off);
		uint8_t *at;

		ret = read_piece(b, n, s->fd, off, &at);
		if (ret)
			break;
		if (!*compressible)
			*compressible = probe_compressible(
				at, len, zbuilder_packed_codec(zb)->entropy_coded);
		if (d)
			digest_add(d, at, len);
		if (*compressible && !d) {
			s->first_kept = off == 0;
			break;
		}
	}
	if (d)
		digest_end(d, s->digest);
	return ret;
}

int fragstream_begin(struct zbuilder *zb, struct tnode *n, struct fragstream *s)
{
	struct build *b = zb->b;
	bool compressible = false;
	int ret;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->want_digest = packed_dedupes(b, true, n->size);
	ret = source_open(b, n, &s->fd);
	if (ret) {
		s->fd = -1;
		return ret;
	}
	ret = look_at(zb, s, &compressible);
	if (ret)
		return ret;
	if (!compressible) {
		source_close(b, s->fd);
		s->fd = -1;
		s->raw = true;
		return data_write_uncompressed(b, n);
	}
	if (s->want_digest && packed_find(b, s->digest, n->size, &s->off)) {
		build_progress(b, n->size);
		s->found = true;
		return 0;
	}
	s->off = packed_size(b);
	return 0;
}

bool fragstream_pending(const struct fragstream *s)
{
	return !s->raw && !s->found && s->at < s->n->size;
}

int fragstream_piece(struct zbuilder *zb, struct fragstream *s)
{
	struct build *b = zb->b;
	size_t len = piece_at(s->n, s->at);
	uint8_t *at;
	int ret = 0;

	if (s->at == 0 && s->first_kept) {
		at = packed_room(b, len);   /* read already, and still there */
		ret = at ? 0 : -ENOMEM;
	} else {
		ret = read_piece(b, s->n, s->fd, s->at, &at);
	}
	if (ret)
		return ret;
	packed_grow(b, len);
	build_progress(b, len);
	s->at += len;
	return 0;
}

int fragstream_end(struct zbuilder *zb, struct fragstream *s, int ret)
{
	struct build *b = zb->b;
	struct zfile f = { .n = s->n, .fd = -1 };

	if (!ret && !s->raw && !s->found && s->want_digest)
		ret = packed_remember(b, s->digest, s->n->size, s->off);
	if (!ret && s->fd >= 0)
		ret = source_check_unchanged(b, s->n, s->fd);
	if (s->fd >= 0)
		source_close(b, s->fd);
	s->fd = -1;
	if (ret || s->raw)
		return ret;
	return zfile_whole_fragment(zb, &f, s->off);
}
