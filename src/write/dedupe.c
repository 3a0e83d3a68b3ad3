/*
 * Whole-file dedupe of uncompressed files, and the chunks of chunk-based
 * ones.  Whole files: sizes first, a table of the sizes two files or more
 * share; then, for those only, a digest of the content, read in a first
 * pass (the second pass, the copy, reads it from the page cache).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/ondisk.h"
#include "util/digest.h"
#include "util/digtab.h"
#include "util/error.h"
#include "write/dedupe.h"
#include "write/internal.h"
#include "write/source.h"
#include "write/tails.h"

struct size_count {
	uint64_t size;
	uint32_t count;
};

struct dedupe {
	struct size_count *sizes;   /* open addressing; size 0 never stored */
	bool every_size;            /* a stream: sizes to come are unknown */
	size_t cap;
	struct digtab flat;         /* (digest, size) -> startblk << 1 | inline */
	struct digtab first;        /* (digest, size) -> the first copy's tnode */
	struct digtab chunks;       /* (digest, length) -> a chunk's block */
	struct tnode *pending;      /* the file being written, and its digest */
	uint8_t digest[DIGEST_SIZE];
};

/* Files smaller than this are not looked at.  Their data is all inline,
 * so there are no blocks to share; but in a metabox the records of copies
 * are placed together (layout.c), where compression finds their tails
 * again, so every size counts there. */
static uint64_t min_size(const struct build *b)
{
	return b->lay.metabox ? 1 : b->blksz + 1ull;
}

static size_t size_slot(const struct dedupe *d, uint64_t size)
{
	size_t k = (size_t)((size * 0x9E3779B97F4A7C15ull) >> 20) & (d->cap - 1);

	while (d->sizes[k].size && d->sizes[k].size != size)
		k = (k + 1) & (d->cap - 1);
	return k;
}

int dedupe_plan(struct build *b)
{
	struct dedupe *d;
	struct tnode *n;
	size_t files = 0;

	if (!b->lay.dedupe)
		return 0;
	for (n = b->tree.first; n; n = n->next)
		files += S_ISREG(n->mode) && n->size >= min_size(b);
	d = calloc(1, sizeof(*d));
	for (d && (d->cap = 64); d && d->cap < files * 2; d->cap *= 2)
		;
	if (!d || !(d->sizes = calloc(d->cap, sizeof(*d->sizes)))) {
		free(d);
		return err_fail(b->err, -ENOMEM, "out of memory");
	}
	for (n = b->tree.first; n; n = n->next) {
		struct size_count *s;

		if (!S_ISREG(n->mode) || n->size < min_size(b))
			continue;
		s = &d->sizes[size_slot(d, n->size)];
		s->size = n->size;
		s->count++;
	}
	b->dedupe = d;
	return 0;
}

int dedupe_plan_stream(struct build *b)
{
	struct dedupe *d;

	if (!b->lay.dedupe)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->sizes = calloc(d->cap = 1, sizeof(*d->sizes)))) {
		free(d);
		return err_fail(b->err, -ENOMEM, "out of memory");
	}
	d->every_size = true;
	b->dedupe = d;
	return 0;
}

void dedupe_free(struct build *b)
{
	struct dedupe *d = b->dedupe;

	if (d) {
		digtab_free(&d->flat);
		digtab_free(&d->first);
		digtab_free(&d->chunks);
		free(d->sizes);
		free(d);
		b->dedupe = NULL;
	}
}

bool dedupe_size_shared(const struct build *b, uint64_t size)
{
	const struct dedupe *d = b->dedupe;

	return !d || d->every_size || size < min_size(b) ||
	       d->sizes[size_slot(d, size)].count >= 2;
}

static int file_digest(struct build *b, const struct tnode *n, int fd, uint8_t *buf,
		       uint8_t *out)
{
	struct digest_state *s = digest_begin();
	uint64_t off;
	int ret = 0;

	if (!s)
		return err_fail(b->err, -ENOMEM, "out of memory");
	for (off = 0; off < n->size && !ret; off += COPY_BUF) {
		size_t want = n->size - off < COPY_BUF ? (size_t)(n->size - off) : COPY_BUF;

		ret = source_pread(b, n, fd, buf, want, off);
		if (!ret)
			digest_add(s, buf, want);
	}
	digest_end(s, out);
	return ret;
}

/* n has first's content: its record goes after first's (and the copies
 * before it) in a metabox. */
static void link_copy(struct tnode *first, struct tnode *n)
{
	struct tnode **at = &first->copies;

	while (*at)
		at = &(*at)->copies;
	*at = n;
	n->is_copy = true;
}

int dedupe_flat(struct build *b, struct tnode *n, int fd, uint8_t *buf, bool *done)
{
	struct dedupe *d = b->dedupe;
	uint64_t tail = n->size % b->blksz, body = n->size - tail, found;
	bool inline_tail;
	int ret;

	*done = false;
	if (!d || n->size < min_size(b) || !dedupe_size_shared(b, n->size))
		return 0;
	ret = file_digest(b, n, fd, buf, d->digest);
	if (ret)
		return ret;
	d->pending = n;
	/* Only a metabox places records by their copies. */
	if (b->lay.metabox && digtab_find(&d->first, d->digest, n->size, &found))
		link_copy((struct tnode *)(uintptr_t)found, n);
	if (n->size <= b->blksz) {
		/* All inline: written as it is, only its record placed. */
		d->pending = NULL;
		if (!n->is_copy && digtab_add(&d->first, d->digest, n->size, (uintptr_t)n))
			return err_fail(b->err, -ENOMEM, "out of memory");
		return 0;
	}
	if (!digtab_find(&d->flat, d->digest, n->size, &found))
		return 0;
	/* The first copy's tail is inline only if it fitted beside its own
	 * inode: this one takes the same form if its tail fits too; else
	 * it is written out like any other file. */
	inline_tail = found & 1;
	if (inline_tail && !tail_fits_inline(b, n, tail))
		return 0;
	n->startblk = found >> 1;
	if (inline_tail) {
		n->layout = EROFS_LAYOUT_FLAT_INLINE;
		n->inline_size = (uint32_t)tail;
		ret = tail_read(b, n, fd, body);
	} else {
		n->layout = EROFS_LAYOUT_FLAT_PLAIN;
		body = n->size;
	}
	n->nblocks = div_round_up_u64(body, b->blksz);
	d->pending = NULL;
	b->stats->dedupe_hits++;
	build_progress(b, n->size);
	*done = !ret;
	return ret;
}

int dedupe_flat_written(struct build *b, const struct tnode *n)
{
	struct dedupe *d = b->dedupe;
	uint64_t value;

	if (!d || d->pending != n)
		return 0;
	d->pending = NULL;
	value = n->startblk << 1 | (n->layout == EROFS_LAYOUT_FLAT_INLINE);
	if (digtab_add(&d->flat, d->digest, n->size, value) ||
	    (b->lay.metabox && !n->is_copy &&
	     digtab_add(&d->first, d->digest, n->size, (uintptr_t)n)))
		return err_fail(b->err, -ENOMEM, "out of memory");
	return 0;
}

/* A file's last chunk given up to its inline tail is keyed apart, by
 * this bit over its length. */
#define TAIL_GIVEN_UP (1ull << 63)

bool dedupe_tail_given_up(const struct build *b, const uint8_t *digest, uint64_t len)
{
	uint64_t unused;

	return b->dedupe && digtab_find(&b->dedupe->chunks, digest, len | TAIL_GIVEN_UP, &unused);
}

int dedupe_tail_giving_up(struct build *b, const uint8_t *digest, uint64_t len)
{
	if (b->dedupe && digtab_add(&b->dedupe->chunks, digest, len | TAIL_GIVEN_UP, 0))
		return err_fail(b->err, -ENOMEM, "out of memory");
	return 0;
}

bool dedupe_chunk_find(const struct build *b, const uint8_t *digest, uint64_t len,
		       uint64_t *blk)
{
	return b->dedupe && digtab_find(&b->dedupe->chunks, digest, len, blk);
}

int dedupe_chunk_stored(struct build *b, const uint8_t *digest, uint64_t len, uint64_t blk)
{
	if (b->dedupe && digtab_add(&b->dedupe->chunks, digest, len, blk))
		return err_fail(b->err, -ENOMEM, "out of memory");
	return 0;
}
