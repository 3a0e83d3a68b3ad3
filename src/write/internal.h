/* Shared state of one image build (private to src/write). */
#ifndef EK_WRITE_INTERNAL_H
#define EK_WRITE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "write/tree.h"
#include "write/writer.h"
#include "erofskit/build.h"

struct hardlinks;
struct zbuilder;

struct build {
	ek_build_options o;
	ek_build_stats *stats;
	ek_error *err;
	const char *source;

	uint32_t blksz;
	unsigned int blkszbits;
	unsigned int workers;      /* threads that compress (options resolved) */
	struct tree tree;
	struct writer *w;
	struct hardlinks *links;

	int64_t epoch;             /* superblock epoch: compact inodes' mtime */
	uint32_t fixed_nsec;
	uint32_t feature_compat;
	uint32_t feature_incompat;

	uint64_t first_data_blk;   /* after the superblock block(s) */
	uint64_t data_blk;         /* next free block while writing data */
	uint64_t meta_blkaddr;
	uint64_t meta_size;        /* bytes of the metadata area */
	uint64_t shared_xattr_size;/* bytes at the start of the metadata area */
	uint64_t end_blk;          /* image size in blocks */
	uint8_t sb_tail[512];      /* compression config records */
	uint32_t sb_tail_size;

	struct zbuilder *z;        /* compression state, NULL if uncompressed */
	uint64_t bytes_done, bytes_total;
};

/* scan.c: walk the source directory into b->tree. */
int scan_source(struct build *b);
void hardlinks_free(struct hardlinks *h);

/* xattr.c: choose shared xattrs, size every inode's xattr body. */
int plan_xattrs(struct build *b);
/* Encode an inode's xattr body into out[n->xattr_size]. */
void encode_xattr_body(struct build *b, const struct tnode *n, uint8_t *out);
/* Encode the shared area into out[b->shared_xattr_size]. */
void encode_shared_xattrs(struct build *b, uint8_t *out);

/* data.c: write regular file and symlink data, choose their layouts. */
int write_data(struct build *b);
/* Sparse regular files: choose a chunk-based layout when it pays. */
int data_plan_sparse(struct build *b, struct tnode *n, bool *chunked);
/* One file or symlink, uncompressed, at b->data_blk. */
int data_write_uncompressed(struct build *b, struct tnode *n);

/* layout.c: place inode records (assign nids) and directory blocks. */
int layout_metadata(struct build *b);

/* meta.c: serialize inodes, directories and the superblock. */
int write_metadata(struct build *b);

/* inode core size for a node */
static inline uint32_t tnode_core_size(const struct tnode *n)
{
	return n->extended ? 64u : 32u;
}

/* progress.c: bytes of file data done, reported to the caller. */
void build_progress(struct build *b, uint64_t bytes);

#endif
