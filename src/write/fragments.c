/*
 * The packed inode's data.  Fragments are appended in commit order, so
 * offsets are the same whatever the number of workers.  The data can be
 * as large as the whole tree (all-fragments), far beyond the memory a
 * build may take, but the pipeline takes it in segments as it grows: only
 * what it has not taken yet waits here, in memory: a segment, the
 * reserve the pipeline keeps back and room for one more fragment (33 MiB
 * at 1 MiB clusters; a longer one comes in pieces, fragstream.c).  Gathered
 * in a temporary file instead, every byte was written to it and read back
 * by the building thread: 5% of that thread's time on the small-files
 * tree, most of it page faults on the buffers read into.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/digtab.h"
#include "util/error.h"
#include "util/hugebuf.h"
#include "util/path.h"
#include "write/dedupe.h"
#include "write/fragments.h"
#include "write/internal.h"

#define STAGE_FIRST ((size_t)64 << 10)

struct packed {
	uint64_t size;
	uint8_t *stage;            /* [taken, size) of the data, from stage_head */
	size_t stage_head, stage_cap;
	size_t stage_most;         /* what callers keep the waiting bytes to */
	uint64_t taken;
	int compressed_fd;         /* its compressed segments, until placed */
	struct digtab seen;        /* (digest, length) -> offset */
};

int packed_open(struct build *b, const char *image_path)
{
	struct packed *p = calloc(1, sizeof(*p));
	int e;

	if (!p)
		return err_fail(b->err, -ENOMEM, "out of memory");
	/* Unnamed, so that nothing is left behind, on the image's own
	 * filesystem, which has room for the image anyway. */
	p->compressed_fd = path_scratch_beside(image_path);
	if (p->compressed_fd < 0) {
		e = errno;
		free(p);
		return err_fail(b->err, -e, "%s: cannot create a temporary file for the packed inode: %s",
				image_path, strerror(e));
	}
	p->stage_most = (size_t)b->packed_waiting_max;
	b->packed = p;
	return 0;
}

void packed_close(struct build *b)
{
	struct packed *p = b->packed;

	if (p) {
		free(p->stage);
		close(p->compressed_fd);
		digtab_free(&p->seen);
		free(p);
		b->packed = NULL;
	}
}

int packed_compressed_fd(const struct build *b)
{
	return b->packed->compressed_fd;
}

/*
 * Room for len more bytes after what waits: the waiting bytes move to
 * the front when that makes room, the stage grows when it does not.  It
 * is 64 KiB first, then what callers keep to (packed_waiting_max,
 * megabytes), so that a build with a few small fragments allocates
 * little: under AddressSanitizer each allocation and free writes shadow
 * for all of it.  (Not doubling: see fifobuf's grow().)
 */
static int stage_room(struct build *b, struct packed *p, size_t len)
{
	size_t waiting = (size_t)(p->size - p->taken);
	size_t need = waiting + len, cap;
	uint8_t *grown;

	if (p->stage_head + need <= p->stage_cap)
		return 0;
	if (need <= p->stage_cap) {
		memmove(p->stage, p->stage + p->stage_head, waiting);
		p->stage_head = 0;
		return 0;
	}
	cap = p->stage_cap ? p->stage_most : STAGE_FIRST;
	if (cap < need)
		cap = need + need / 4;   /* beyond what callers keep to */
	grown = hugebuf_alloc(cap);
	if (!grown)
		return err_fail(b->err, -ENOMEM, "out of memory for %zu bytes of the packed inode's data",
				cap);
	if (waiting)
		memcpy(grown, p->stage + p->stage_head, waiting);
	free(p->stage);
	p->stage = grown;
	p->stage_cap = cap;
	p->stage_head = 0;
	return 0;
}

uint8_t *packed_room(struct build *b, size_t len)
{
	struct packed *p = b->packed;

	if (stage_room(b, p, len))
		return NULL;
	return p->stage + p->stage_head + (p->size - p->taken);
}

void packed_grow(struct build *b, size_t len)
{
	b->packed->size += len;
	b->stats->packed_bytes = b->packed->size;
}

int packed_take(struct build *b, uint64_t off, size_t len, uint8_t *out)
{
	struct packed *p = b->packed;

	if (off != p->taken || len > p->size - p->taken)
		return err_fail(b->err, -EINVAL,
				"internal error: the packed inode's data taken at %llu+%zu, not at %llu",
				(unsigned long long)off, len, (unsigned long long)p->taken);
	memcpy(out, p->stage + p->stage_head, len);
	p->stage_head += len;
	p->taken += len;
	return 0;
}

/* A whole file no other file is as long as is not hashed (SHA-256 was
 * 2% of an lz4hc or zstd build's time with every file in the packed
 * inode; the small-files tree has 42% of its bytes in files of a shared
 * size, the root filesystem 15%).  It could equal the tail of a longer
 * file: that rare match is given up. */
bool packed_dedupes(const struct build *b, bool whole, uint64_t len)
{
	if (whole && !dedupe_size_shared(b, len))
		return false;
	return b->lay.fragdedupe == EK_FRAGDEDUPE_FULL ||
	       (whole && b->lay.fragdedupe == EK_FRAGDEDUPE_INODE);
}

bool packed_find(struct build *b, const uint8_t *digest, uint64_t len, uint64_t *off)
{
	if (!digtab_find(&b->packed->seen, digest, len, off))
		return false;
	b->stats->dedupe_hits++;
	return true;
}

int packed_remember(struct build *b, const uint8_t *digest, uint64_t len, uint64_t off)
{
	if (digtab_add(&b->packed->seen, digest, len, off))
		return err_fail(b->err, -ENOMEM, "out of memory");
	return 0;
}

int packed_append(struct build *b, const uint8_t *data, size_t len, bool whole,
		  const uint8_t *known, uint64_t *off)
{
	bool dedupe = packed_dedupes(b, whole, len);
	uint8_t digest[DIGEST_SIZE];
	uint8_t *room;

	if (dedupe) {
		if (known)
			memcpy(digest, known, DIGEST_SIZE);
		else
			digest_of(data, len, digest);
		if (packed_find(b, digest, len, off))
			return 0;
	}
	room = packed_room(b, len);
	if (!room)
		return -ENOMEM;
	memcpy(room, data, len);
	*off = b->packed->size;
	packed_grow(b, len);
	return dedupe ? packed_remember(b, digest, len, *off) : 0;
}

uint64_t packed_size(const struct build *b)
{
	return b->packed->size;
}

int packed_node(struct build *b, struct tnode **out)
{
	struct packed *p = b->packed;
	struct tnode *n;

	*out = b->packed_inode;
	if (*out)
		return 0;
	n = tree_new_inode(&b->tree);
	if (!n)
		return err_fail(b->err, -ENOMEM, "out of memory");
	/* A regular file no directory names, as mkfs.erofs writes it. */
	n->mode = S_IFREG | 0644;
	n->nlink = 1;
	n->size = p->size;
	n->mtime = b->epoch;
	n->mtime_nsec = b->fixed_nsec;
	n->src_path = strdup("the packed inode's data");
	if (!n->src_path)
		return err_fail(b->err, -ENOMEM, "out of memory");
	b->packed_inode = n;
	b->stats->files++;
	*out = n;
	return 0;
}
