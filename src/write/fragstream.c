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

struct look {
	bool compressible;
	uint8_t digest[DIGEST_SIZE];
	size_t kept;             /* bytes of the file at packed_room(): its
	                            first piece, or 0 */
};

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

static int look_at(struct zbuilder *zb, const struct tnode *n, int fd, bool want_digest,
		   struct look *l)
{
	struct build *b = zb->b;
	struct digest_state *d = want_digest ? digest_begin() : NULL;
	uint64_t off;
	int ret = 0;

	if (want_digest && !d)
		return err_fail(b->err, -ENOMEM, "out of memory");
	l->compressible = false;
	l->kept = 0;
	for (off = 0; off < n->size; off += piece_at(n, off)) {
		size_t len = piece_at(n, off);
		uint8_t *at;

		ret = read_piece(b, n, fd, off, &at);
		if (ret)
			break;
		if (!l->compressible)
			l->compressible = probe_compressible(at, len, zb->codec->entropy_coded);
		if (d)
			digest_add(d, at, len);
		if (l->compressible && !d) {
			l->kept = off ? 0 : len;
			break;
		}
	}
	if (d)
		digest_end(d, l->digest);
	return ret;
}

/* Append the file to the packed data, piece by piece, letting the
 * pipeline take each segment as soon as it is due. */
static int stream_in(struct zbuilder *zb, const struct tnode *n, int fd, size_t kept)
{
	struct build *b = zb->b;
	uint64_t off;
	int ret = 0;

	for (off = 0; off < n->size && !ret; off += piece_at(n, off)) {
		size_t len = piece_at(n, off);
		uint8_t *at;

		if (off == 0 && kept == len)
			at = packed_room(b, len);   /* read already, and still there */
		else
			ret = read_piece(b, n, fd, off, &at);
		if (ret || !at)
			return ret ? ret : -ENOMEM;
		packed_grow(b, len);
		build_progress(b, len);
		ret = zbuild_queue_packed(zb, false);
	}
	return ret;
}

int fragstream_commit(struct zbuilder *zb, struct tnode *n)
{
	struct build *b = zb->b;
	bool want_digest = packed_dedupes(b, true, n->size);
	struct zfile f = { .n = n, .fd = -1 };
	struct look l;
	uint64_t off = 0;
	int fd, ret;

	ret = source_open(b, n, &fd);
	if (ret)
		return ret;
	ret = look_at(zb, n, fd, want_digest, &l);
	if (!ret && !l.compressible) {
		close(fd);
		return data_write_uncompressed(b, n);
	}
	if (!ret && want_digest && packed_find(b, l.digest, n->size, &off)) {
		build_progress(b, n->size);
	} else if (!ret) {
		off = packed_size(b);
		ret = stream_in(zb, n, fd, l.kept);
		if (!ret && want_digest)
			ret = packed_remember(b, l.digest, n->size, off);
	}
	if (!ret)
		ret = source_check_unchanged(b, n, fd);
	close(fd);
	return ret ? ret : zfile_whole_fragment(zb, &f, off);
}
