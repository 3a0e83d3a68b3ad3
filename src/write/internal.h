/* Shared state of one image build (private to src/write). */
#ifndef EK_WRITE_INTERNAL_H
#define EK_WRITE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "util/digtab.h"
#include "write/tree.h"
#include "write/writer.h"
#include "erofskit/build.h"

struct hardlinks;
struct zbuilder;
struct packed;
struct dedupe;

/* The layouts this build writes: its options with the defaults filled in
 * (compress.c). */
struct layouts {
	bool tailpack;             /* compressed tails after the inode */
	enum ek_fragments fragments;
	enum ek_fragdedupe fragdedupe;
	bool dedupe;               /* identical pclusters stored once */
	bool inline_data;          /* uncompressed tails after the inode */
	uint64_t inline_max;       /* with fragments: files up to this size
	                              stay uncompressed after their inode */
};

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
	struct layouts lay;
	struct packed *packed;     /* fragments (fragments.c) */
	struct tnode *packed_inode;
	struct digtab pclusters;   /* dedupe: pclusters stored, by input */
	struct dedupe *dedupe;     /* dedupe: uncompressed files (dedupe.c) */
	uint64_t bytes_done, bytes_total;
	uint64_t files_done;
};

/* options.c: check b->o and resolve what it leaves to the library. */
int build_check_options(struct build *b);

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

/* progress.c: bytes of file data done, and a file's data all in,
 * reported to the caller. */
void build_progress(struct build *b, uint64_t bytes);
void build_file_done(struct build *b, const struct tnode *n);

#endif
