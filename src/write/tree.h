/* The builder's in-memory tree: inodes, directory entries, xattrs. */
#ifndef EK_WRITE_TREE_H
#define EK_WRITE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "erofskit/build.h"

/* One distinct (name, value) pair, interned across the whole tree. */
struct txattr {
	uint8_t index;             /* built-in prefix index */
	uint8_t suffix_len;
	uint16_t value_len;
	uint8_t *suffix;
	uint8_t *value;
	char *full_name;
	uint8_t stored_index;      /* index as stored: a long prefix's (0x80
	                              | its number) or the built-in one */
	uint8_t stored_skip;       /* bytes of suffix the long prefix holds */
	uint32_t users;            /* inodes carrying it */
	int64_t shared_id;         /* -1 unless stored in the shared area */
	uint32_t hash;
	struct txattr *next;       /* hash chain */
};

struct tdentry {
	char *name;
	uint16_t name_len;
	struct tnode *inode;
};

/* How a regular file's data is stored. */
struct tchunks {
	unsigned int chunkbits;
	uint64_t count;
	uint32_t *blocks;          /* per chunk start block, or EROFS_NULL_ADDR */
};

/* A compressed file's map, kept until the metadata is written. */
struct tindex {
	uint8_t *index;            /* map header + index, from its aligned start */
	uint32_t index_len;
	uint32_t pad;              /* zero bytes between xattrs and header */
};

/* Fields are grouped by size (the flags last), not only by meaning: a
 * tar of many small files holds one of these per entry until the image
 * is written, and the gaps between mixed fields took 72 of 328 bytes. */
struct tnode {
	/* from the source */
	uint32_t mode;
	uint32_t uid, gid;
	uint32_t mtime_nsec;
	uint64_t size;
	int64_t mtime;
	uint32_t rdev_major, rdev_minor;
	dev_t src_dev;
	ino_t src_ino;
	char *src_path;            /* regular files: where to read the data
	                              (spooled: its name in the archive) */
	uint64_t spool_off;        /* spooled: its data in the build's spool file
	                              from here */
	uint64_t tar_off;          /* indexed: its data in the tar appended to the
	                              image from here (tar index mode) */
	uint64_t tar_entry;        /* tar: the entry that made it (layer << 40 | number) */
	size_t tar_name;           /* tar, directories: the reader's name for it
	                              (index + 1 into its table) */
	char *symlink;             /* symlink target */

	struct txattr **xattrs;
	uint32_t nxattrs;

	/* directories */
	uint32_t nchildren;
	struct tdentry *children;  /* sorted by name, without "." and ".." */
	struct tnode *parent;

	uint32_t nlink;            /* entries naming it in the image */

	/* layout decisions */
	uint16_t xattr_icount;
	uint8_t layout;
	uint8_t hint;              /* its --compress-hints rule (from 1), or 0 */
	uint32_t xattr_size;
	uint32_t serial;           /* i_ino */
	uint32_t inline_size;      /* bytes stored after the inode */
	uint32_t record_size;      /* core + xattrs + index/inline */
	uint32_t meta_extra;       /* compressed: index bytes (incl. padding) */
	uint64_t nid;              /* its slot in its area (in_metabox: which) */
	uint64_t startblk;         /* flat layouts: first full block */
	uint64_t nblocks;          /* data blocks owned (flat / chunk) */
	uint8_t *inline_data;      /* the inline tail (files, symlinks), or
	                              inline_spilled: a file's in the tails
	                              file (tails.c) ... */
	uint64_t inline_off;       /* ... from here */
	uint64_t dir_size;         /* directories: i_size */
	struct tchunks *chunks;    /* CHUNK_BASED */
	struct tindex *z;          /* compressed files */

	struct tnode *copies;      /* dedupe: later files of the same content,
	                              whose records follow this one's in a
	                              metabox (a chain through their own) */
	struct tnode *next;        /* all inodes, in nid-assignment order */

	/* flags */
	bool spooled;              /* data in the build's spool file (spool_off) */
	bool indexed;              /* data in the tar appended to the image (tar_off) */
	bool data_dropped;         /* tar: a later layer deletes or replaces it, so its
	                              data is never written */
	bool has_holes;            /* source file is sparse */
	bool extended;
	bool in_metabox;           /* nid is in the metabox's data, else the plain area */
	bool inline_spilled;       /* the inline tail waits in the tails file */
	bool is_copy;              /* on a copies chain */
};

struct tree {
	struct tnode *root;
	struct tnode *first, *last;  /* inode list */
	uint64_t ninodes;
	/* xattr interning */
	struct txattr **xbuckets;
	size_t nxbuckets, nxattrs;
};

struct tnode *tree_new_inode(struct tree *t);
void tree_free(struct tree *t);
/* Remove (and free) the inodes no name links to any more, but the root
 * and keep. */
void tree_drop_unlinked(struct tree *t, const struct tnode *keep);
/* Put n last on the inode list (the order nids follow). */
void tree_move_last(struct tree *t, struct tnode *n);
/* Sort a directory's children by name, as EROFS directories hold them. */
void tree_sort_children(struct tnode *dir);

/* Intern an xattr; returns NULL on allocation failure. */
struct txattr *tree_intern_xattr(struct tree *t, uint8_t index,
				  const char *full_name, size_t prefix_len,
				  const void *value, size_t value_len);

/* Visit every xattr item once. */
void tree_for_each_xattr(struct tree *t,
			  void (*fn)(struct txattr *x, void *ctx), void *ctx);

#endif
