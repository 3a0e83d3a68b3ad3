/* Private state of the compression pipeline (compress.c, zpipe.c,
 * zsegment.c). */
#ifndef EK_WRITE_ZINTERNAL_H
#define EK_WRITE_ZINTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "write/internal.h"
#include "codec/encoder.h"
#include "erofskit/erofskit.h"
#include "format/zindex.h"
#include "util/pool.h"

/* One extent a worker produced (addresses come at commit time). */
struct zext {
	uint64_t la;
	uint32_t llen;
	uint16_t blocks;
	bool plain;
};

/* Per-worker state: an encoder and an input buffer. */
struct zworker {
	struct encoder *enc;
	uint8_t *in;
	size_t in_cap;
	uint8_t *pcluster;       /* one pcluster of output */
};

/* A file being compressed: shared by its segments' tasks. */
struct zfile {
	struct tnode *n;
	int fd;
	uint64_t first_blk;
	struct fmt_zextent *ext;
	size_t next, cap;
	uint64_t blocks;         /* pcluster blocks so far */
	unsigned int segments;   /* total */
	struct zfile *next_open; /* all files, freed at teardown */
};

enum ztask_kind {
	ZT_COMPRESS,             /* a segment of a file, on a worker */
	ZT_RAW,                  /* an uncompressed file or symlink */
};

struct ztask {
	struct pool_job job;     /* first: the pool hands it back */
	struct zbuilder *zb;
	enum ztask_kind kind;
	struct tnode *n;
	struct zfile *file;
	uint64_t off, len;       /* the segment */
	unsigned int segment;    /* index within the file */
	bool ran;                /* compressed (sync or on a worker) */
	int error;
	ek_error err;
	struct zext *ext;
	size_t next, ext_cap;
	uint8_t *data;           /* the pclusters, back to back */
	size_t data_len, data_cap;
	struct ztask *qnext;     /* commit order */
};

struct zbuilder {
	struct build *b;
	const struct codec *codec;
	struct encoder_params ep;
	uint32_t pcluster;       /* bytes */
	bool big;                /* pclusters above one block */
	uint64_t segment;        /* bytes per segment */
	unsigned int workers;
	struct pool *pool;       /* NULL: compress in the committing thread */
	struct zworker *wk;
	struct ztask *head, *tail;
	unsigned int inflight;
	uint64_t inflight_bytes;
	uint16_t max_blocks;     /* largest pcluster written */
	struct zfile *open;
};

/* zsegment.c: compress task->[off, off+len) of its file. */
void zsegment_compress(struct zbuilder *zb, struct ztask *t, struct zworker *w);

/* compress.c: whether compressing still saves blocks after `more`. */
bool zfile_worthwhile(const struct zbuilder *zb, const struct zfile *f,
		      uint64_t more_blocks);
/* The file's last segment is in: build its index, or (fallback) store
 * it uncompressed from its first block on. */
int zfile_finish(struct zbuilder *zb, struct zfile *f, bool fallback);

#endif
