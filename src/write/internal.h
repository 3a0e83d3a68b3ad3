/* Shared state of one image build (private to src/write). */
#ifndef EK_WRITE_INTERNAL_H
#define EK_WRITE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "format/ondisk.h"
#include "util/digtab.h"
#include "write/tree.h"
#include "write/writer.h"
#include "erofskit/build.h"

struct hardlinks;
struct zbuilder;
struct packed;
struct dedupe;
struct xattr_prefix_rule;

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
	bool metabox;              /* inode records in the metabox */
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
	struct writer *blob;       /* --blobdev: chunk data's, or NULL */
	uint64_t blob_blk;         /* its next free block */
	uint64_t index_blocks;     /* --tar=i: the tar's blocks its files reach */
	uint32_t devt_off;         /* the byte of the device table's one slot
	                              (the blob, or --tar=i's tar), or 0 */
	struct hardlinks *links;
	struct ek_image *src_image;/* the source when it is an EROFS image
	                              (imagesource.c), else NULL */
	struct exclude *exclude;   /* while the source is walked */
	struct hints *hints;       /* per-file cluster sizes, or NULL */
	struct selabels *selabels; /* --file-contexts, or NULL */
	struct fsconfig *fsconfig; /* --fs-config-file, or NULL */
	char *mount_point;         /* --mount-point, no '/' at either end
	                              ("system"; "" the root), or NULL */

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
	/* long xattr name prefixes (prefixes.c) */
	struct xattr_prefix_rule *prefixes;
	unsigned int nprefixes;
	uint8_t *prefix_table;     /* their table, encoded */
	uint32_t prefix_table_size;
	uint32_t prefix_off;       /* its byte in the image's head, or 0 (in
	                              the packed inode's data, at 0) */

	struct zbuilder *z;        /* compression state, NULL if uncompressed */
	struct layouts lay;
	struct packed *packed;     /* fragments (fragments.c) */
	uint64_t packed_waiting_max;/* ... what of it waits at most, but for
	                              larger fragments (the pipeline's) */
	struct tnode *packed_inode;
	struct tnode *metabox_inode;
	uint64_t metabox_size;     /* bytes of inode records in it */
	struct digtab pclusters;   /* dedupe: pclusters stored, by input */
	struct dedupe *dedupe;     /* dedupe: uncompressed files (dedupe.c) */
	uint64_t bytes_done, bytes_total;
	uint64_t files_done;
	uint64_t input_done, input_total;  /* archives' bytes, for progress */
	/* a stream source (tar.c) */
	int spool_fd;              /* file data waiting to be written, or -1 */
	uint64_t unpunched_from, unpunched_to;  /* given back, hole not yet
	                              punched (source.c) */
	const char *image_path;
	/* inline tails waiting for the metadata (tails.c) */
	uint64_t tails_in_memory;  /* bytes of them held */
	int tails_fd;              /* the rest, or -1 */
	uint64_t tails_spilled;    /* bytes in it */
	bool no_shared_xattrs;     /* xattr sizes fixed as inodes arrive */
	uint8_t *copy_buf;         /* COPY_BUF bytes files are copied through
	                              (data.c), taken once: one per file cost
	                              a sanitized build of 24,000 small files
	                              an mmap each */
	struct timespec started;
};

/* phases.c: the phases every source goes through. */
void build_init(struct build *b, const ek_build_options *opts, ek_build_stats *stats,
		ek_build_stats *local, ek_error *err);
/* Open the image (and the packed data); data goes from b->data_blk on. */
int build_open_image(struct build *b, const char *image_path);
/* Place and write the metadata, and the superblock; rename the image. */
int build_close_image(struct build *b);
/* Free everything, whatever happened; the stats get the time taken. */
void build_cleanup(struct build *b);
/* n's core: compact or extended, by the epoch, n's fields and the
 * options (--ignore-mtime may move n's mtime to the epoch); 0 or an
 * error where -Eforce-inode-compact cannot be kept. */
int choose_inode_form(struct build *b, struct tnode *n);
/* Statistics of the whole tree, for the caller and the progress. */
void build_count(struct build *b);

/* owner.c: owner and mtime from the source, as the options override
 * them; 0, or -EOVERFLOW where an id offset takes the owner out of range
 * (never for 0:0: build_check_options sees to it). */
int build_set_owner_time(struct build *b, struct tnode *n, uint32_t uid, uint32_t gid,
			 int64_t mtime, uint32_t mtime_nsec);
/* The owner part of it alone. */
int build_set_owner(struct build *b, struct tnode *n, uint32_t uid, uint32_t gid);

/* options.c: check b->o and resolve what it leaves to the library. */
int build_check_options(struct build *b);
/* prefixes.c: the long xattr name prefixes of b->o, checked and their
 * table encoded ... */
int prefixes_open(struct build *b);
void prefixes_close(struct build *b);
/* ... whether the table goes into the packed inode's data (else after
 * the superblock) ... */
bool prefixes_in_packed(const struct build *b);
/* ... and how x is stored: under its longest long prefix, if any. */
void prefixes_apply(const struct build *b, struct txattr *x);
/* The image's algorithm k: 0 the compressor, k extra_codecs[k - 1]. */
ek_build_codec build_codec(const ek_build_options *o, unsigned int k);

/* scan.c: walk the source directory into b->tree, leaving out what
 * exclude.c says: the file at image_path (the image being replaced)
 * where the tree holds it, and the options' --exclude rules. */
int scan_source(struct build *b, const char *image_path);
void hardlinks_free(struct hardlinks *h);

/* xattr.c: choose shared xattrs (unless b->no_shared_xattrs), size every
 * inode's xattr body. */
int plan_xattrs(struct build *b);
/* Size one inode's body, its xattrs all inline (b->no_shared_xattrs). */
int plan_node_xattrs(struct build *b, struct tnode *n);
/* Give n the xattr name=value (interned); what_path names n in errors.
 * An xattr EROFS has no prefix for is skipped with a warning. */
int xattr_attach(struct build *b, struct tnode *n, const char *name,
		 const void *value, size_t len, const char *what_path);
/* Order n's xattrs as the format wants them (after the last attach). */
void xattr_sort(struct tnode *n);
/* Encode an inode's xattr body into out[n->xattr_size]. */
void encode_xattr_body(struct build *b, const struct tnode *n, uint8_t *out);
/* Encode the shared area into out[b->shared_xattr_size]. */
void encode_shared_xattrs(struct build *b, uint8_t *out);

/* pathrules.c: what rules give an inode by its path in the image
 * ("/usr/bin/sh", "/" the root; under --mount-point for the rules):
 * --fs-config-file's owner, mode and capabilities, then --file-contexts'
 * label.  0, or an error naming the path (one fs_config does not list). */
int path_rules_apply(struct build *b, struct tnode *n, const char *path);
/* Whether any such rules are in use. */
bool path_rules_active(const struct build *b);
/* Whether the rules set the xattr name, so that a source's own is left
 * out (security.selinux with --file-contexts, security.capability with
 * --fs-config-file). */
bool path_rules_replace_xattr(const struct build *b, const char *name);
/* Open and close the rules the options name (b->selabels, b->fsconfig,
 * b->mount_point). */
int path_rules_open(struct build *b);
void path_rules_close(struct build *b);

/* data.c: write regular file and symlink data, choose their layouts. */
int write_data(struct build *b);
/* One file or symlink, uncompressed, at b->data_blk. */
int data_write_uncompressed(struct build *b, struct tnode *n);
/* The same, sparse files chunked, and counted done (write_data's step). */
int data_write_one(struct build *b, struct tnode *n);

/* copy.c: the buffer files are copied through (also lent to dedupe.c and
 * chunks.c), and [off, off + len) of n's source through it to the image
 * at b->data_blk, which moves past it, the last block zero padded ... */
#define COPY_BUF (1u << 20)
int copy_range(struct build *b, struct tnode *n, int fd, uint8_t *buf,
	       uint64_t off, uint64_t len);
/* ... or to w at *blk (the blob's chunks). */
int copy_range_to(struct build *b, struct tnode *n, int fd, uint8_t *buf,
		  uint64_t off, uint64_t len, struct writer *w, uint64_t *blk);

/* chunks.c: chunk-based files.  A sparse regular file's layout, chosen
 * when it pays (n->chunks planned) ... */
int chunks_plan_sparse(struct build *b, struct tnode *n, bool *chunked);
/* ... and n's data written chunk-based: as planned, else (--chunksize)
 * every chunk holding data until looked at. */
int chunks_write(struct build *b, struct tnode *n, int fd, uint8_t *buf);
/* The zero bytes between n's xattrs and its chunk table. */
uint32_t chunks_index_pad(const struct build *b, const struct tnode *n);


/* layout.c: place inode records (assign nids) and directory blocks ... */
int layout_metadata(struct build *b);
/* ... and with a metabox, once its inode is written, the plain area's. */
int layout_plain_area(struct build *b);

/* meta.c: serialize inodes, directories and the superblock. */
int write_metadata(struct build *b);

/* metabox.c: the metabox inode, made from its records (size bytes), its
 * data compressed at b->data_blk on. */
int metabox_write(struct build *b, const uint8_t *records, uint64_t size);

/* The superblock's bytes: one extension slot holds the metabox's nid. */
static inline uint32_t build_super_size(const struct build *b)
{
	return EROFS_SUPER_BASE_SIZE + (b->lay.metabox ? EROFS_SUPER_EXTSLOT_SIZE : 0);
}

/* The nid that names n: in a directory entry or the superblock. */
static inline uint64_t tnode_nid_ref(const struct tnode *n)
{
	return n->in_metabox ? n->nid | EROFS_NID_METABOX : n->nid;
}

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
