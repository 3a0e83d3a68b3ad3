/* Private state of the data pipeline (pipeline.c, zsegment.c, zfile.c,
 * compress.c). */
#ifndef EK_WRITE_ZINTERNAL_H
#define EK_WRITE_ZINTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/encoder.h"
#include "erofskit/erofskit.h"
#include "format/zindex.h"
#include "util/bufcache.h"
#include "util/digest.h"
#include "util/digtab.h"
#include "util/fifobuf.h"
#include "util/pool.h"
#include "write/internal.h"

/* One extent a worker produced (addresses come at commit time). */
struct zext {
	uint64_t la;
	uint32_t llen;
	uint16_t blocks;         /* pcluster blocks */
	bool plain;              /* stored uncompressed */
	uint32_t csize;          /* stream bytes, at the end of its blocks */
	uint8_t digest[DIGEST_SIZE]; /* of its input, when deduplicating */
};

/* One of the image's algorithms (-z A:B: a compress hints rule picks
 * one by its place in the list; the first compresses the rest). */
struct zcodec {
	const struct codec *codec;
	struct encoder_params ep;
};

/* Per-worker state: an encoder per algorithm, made when a file of its
 * comes to the worker (the first's at setup), and one pcluster of
 * output. */
struct zworker {
	struct encoder *enc[EK_CODECS_MAX];
	uint8_t *pcluster;
};

/* A file whose data goes through the pipeline: shared by its tasks. */
struct zfile {
	struct tnode *n;
	int fd;                  /* the source, open while tasks read it */
	bool packed;             /* the packed inode itself: no tail tricks */
	bool spills;             /* ... and its segments spill as they finish
	                            (the metabox is compressed as it is, and
	                            placed at once) */
	uint32_t cluster;        /* its pclusters' size, bytes */
	uint8_t codec;           /* its algorithm: zbuilder.codecs[codec] */
	unsigned int queued_segments;
	struct fmt_zextent *ext; /* committed extents, in order */
	size_t next, cap;
	uint64_t blocks;         /* pcluster blocks it refers to (i_u) */
	uint64_t own_blocks;     /* ... of which it wrote itself */
	uint64_t first_blk;      /* where its own blocks start */
	bool shared;             /* some of its pclusters are another's */
	struct digtab fresh;     /* its own pclusters, for dedupe, once it
	                            is sure to keep them */
	struct zfile *next_open, *prev_open; /* the files not yet done with
	                            (zb->open): freed as their last task
	                            commits, the rest at teardown */
};

enum ztask_kind {
	ZT_SEGMENT,              /* a segment of a compressed file, on a worker */
	ZT_FRAGMENT,             /* a whole file into the packed inode */
	ZT_RAW,                  /* an uncompressed file or symlink */
	ZT_STREAMED,             /* a whole file into the packed inode, too
	                            large to hold: read as it commits
	                            (fragstream.c) */
};

/* Whether a task of this kind runs on a worker (the others are only
 * places in the commit order). */
static inline bool ztask_on_worker(enum ztask_kind kind)
{
	return kind == ZT_SEGMENT || kind == ZT_FRAGMENT;
}

struct ztask {
	struct pool_job job;     /* first: the pool hands it back */
	struct zbuilder *zb;
	enum ztask_kind kind;
	struct tnode *n;
	struct zfile *file;
	uint64_t off, len;       /* the segment */
	uint64_t size;           /* the file's, as far as known: the packed
	                            inode's grows until its last segment */
	unsigned int segment;    /* index within the file */
	bool last;               /* the file's last segment */
	uint8_t *in;             /* its bytes, read by the building thread */
	enum ztask_input {       /* ... into memory from: */
		ZIN_MALLOC,      /*   malloc */
		ZIN_RING,        /*   zbuilder.queued_bufs */
		ZIN_CACHE,       /*   zbuilder.packed_bufs */
	} in_from;
	bool ran;                /* compressed (sync or on a worker) */
	int error;
	ek_error err;
	struct zext *ext;
	size_t next, ext_cap;
	uint8_t *data;           /* the pclusters, back to back */
	size_t data_len, data_cap;
	/* The last segment's end: [tail_la, file end) left for the packed
	 * inode (tail_la < end), or a compressed form of a final extent that
	 * started in the last lcluster and is stored plain, for tail packing
	 * (tail_csize > 0, the stream in tail_stream). */
	uint64_t tail_la;
	uint8_t *tail_stream;
	uint32_t tail_csize;
	/* A whole fragment, looked at on a worker: whether it compresses at
	 * all, and its digest (when fragments are deduplicated). */
	bool compressible;
	uint8_t digest[DIGEST_SIZE];
	struct ztask *qnext;     /* commit order */
	/* A segment of the packed inode: its pclusters wait, spilled to
	 * packed_compressed_fd() at spill_off by its worker, for the end. */
	uint64_t spill_off;
};

struct zbuilder {
	struct build *b;
	struct zcodec codecs[EK_CODECS_MAX];
	unsigned int ncodecs;
	uint16_t algorithms;     /* the superblock's bitmap of them */
	uint32_t pcluster;       /* bytes */
	uint32_t extent_input;   /* the most input an extent takes */
	uint32_t packed_pcluster;/* the packed inode's */
	uint32_t metabox_pcluster;/* the metabox's */
	bool big;                /* pclusters above one block */
	uint64_t segment;        /* bytes per segment */
	uint64_t packed_segment; /* ... of the packed inode */
	uint64_t fragment_room;  /* whole fragments up to this long are read
	                            into a task, longer ones streamed */
	unsigned int workers;
	struct pool *pool;       /* NULL: compress in the committing thread */
	struct zworker *wk;
	struct ztask *head, *tail;
	unsigned int inflight;
	uint64_t inflight_bytes;
	uint16_t max_blocks;     /* largest pcluster written */
	struct zfile *open;      /* files with tasks to come (next_open) */
	struct zfile *packed;    /* the packed inode, once its data flows */
	uint64_t packed_queued;  /* ... bytes of it queued */
	uint64_t metabox_segment;/* bytes per segment of the metabox */
	/* The packed inode's segments, off the ordered queue: compressed
	 * beside the files, spilled, placed after them all in this order. */
	struct ztask *packed_head, *packed_tail;
	/* Input buffers, reused (pipeline.c): the ordered queue's tasks
	 * leave in the order they came, the packed inode's in any. */
	struct fifobuf queued_bufs;
	struct bufcache packed_bufs;
	unsigned int packed_compressing;  /* submitted and not yet spilled */
	unsigned int packed_compressing_max;
	uint64_t spill_end;      /* bytes spilled so far */
	pthread_mutex_t lock;    /* guards packed_compressing, spill_end */
	pthread_cond_t spilled;
	bool lock_ready;
	/* Whole small files held back to be queued together, in likeness
	 * order, after the other files' data (pipeline.c). */
	struct tnode **held;
	size_t held_count, held_cap;
	uint64_t held_spooled;   /* ... bytes of theirs waiting in the spool */
};

/* The algorithm f is compressed with. */
static inline const struct codec *zfile_codec(const struct zbuilder *zb, const struct zfile *f)
{
	return zb->codecs[f->codec].codec;
}

/* The algorithm of the packed inode and the metabox: the first given.
 * What goes into the packed inode is judged by it, whatever the file's
 * own (a file of another algorithm there takes this one). */
static inline const struct codec *zbuilder_packed_codec(const struct zbuilder *zb)
{
	return zb->codecs[0].codec;
}

/* Whether f's pclusters are hashed, looked up and remembered for
 * -Ededupe: not those of the packed inode or the metabox, which start
 * wherever the one before filled up, so that none ever equals another
 * (SHA-256 over all of their input took 1.3% of a zstd build's time). */
static inline bool zfile_dedupes_pclusters(const struct build *b, const struct zfile *f)
{
	return b->lay.dedupe && !f->packed;
}

/* pipeline.c: set up the reused input buffers (0 or -ENOMEM) ... */
int zbuild_buffers_init(struct zbuilder *zb);
/* ... wait for every queued task and free it, committing none ... */
void zbuild_drop_queued(struct zbuilder *zb);
/* ... and free the buffers (after zbuild_drop_queued). */
void zbuild_buffers_fini(struct zbuilder *zb);
/* pipeline.c: f off zb->open and freed, its source closed if still open. */
void zfile_release(struct zbuilder *zb, struct zfile *f);

/* fragstream.c: a whole fragment longer than fragment_room, committed
 * FRAGSTREAM_PIECE bytes at a time (whole 64 KiB probe windows, so that
 * it is judged as it would be whole). */
#define FRAGSTREAM_PIECE (1u << 20)
struct fragstream {
	struct tnode *n;
	int fd;
	bool want_digest;        /* fragdedupe compares it */
	uint8_t digest[DIGEST_SIZE];
	bool raw;                /* it does not compress: stored as it is */
	bool found;              /* the packed data holds it already */
	bool first_kept;         /* its first piece, read to look at it, is
	                            still at packed_room() */
	uint64_t at;             /* bytes of it in the packed data so far */
	uint64_t off;            /* where it starts there */
};
/* Look at n (its first piece read), and store it uncompressed if it does
 * not compress ... */
int fragstream_begin(struct zbuilder *zb, struct tnode *n, struct fragstream *s);
/* ... while it has pieces to go into the packed data ... */
bool fragstream_pending(const struct fragstream *s);
/* ... put the next one there ... */
int fragstream_piece(struct zbuilder *zb, struct fragstream *s);
/* ... and finish (ret: the error so far, returned if any): its inode
 * points at its place in the packed data. */
int fragstream_end(struct zbuilder *zb, struct fragstream *s, int ret);

/* zsegment.c: compress task->[off, off+len) of its file. */
void zsegment_compress(struct zbuilder *zb, struct ztask *t, struct zworker *w);

/* zfile.c: a compressed file's extents, as its segments commit ... */
int zfile_add_segment(struct zbuilder *zb, struct zfile *f, struct ztask *t);
/* ... and its end: tail (fragment, inline, pcluster), index; or, when
 * compression saved nothing, the file stored uncompressed instead. */
int zfile_finish(struct zbuilder *zb, struct zfile *f, struct ztask *last);
/* A file whose data is all one fragment, at off in the packed data. */
int zfile_whole_fragment(struct zbuilder *zb, struct zfile *f, uint64_t off);

#endif
