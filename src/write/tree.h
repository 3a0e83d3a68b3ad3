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

struct tnode {
	/* from the source */
	uint32_t mode;
	uint32_t uid, gid;
	uint64_t size;
	int64_t mtime;
	uint32_t mtime_nsec;
	uint32_t rdev_major, rdev_minor;
	dev_t src_dev;
	ino_t src_ino;
	char *src_path;            /* regular files: where to read the data
	                              (spooled: its name in the archive) */
	bool spooled;              /* data in the build's spool file ... */
	uint64_t spool_off;        /* ... from here */
	bool indexed;              /* data in the tar appended to the image ... */
	uint64_t tar_off;          /* ... from here (tar index mode) */
	uint64_t tar_entry;        /* tar: the entry that made it (layer << 40 | number) */
	size_t tar_name;           /* tar, directories: the reader's name for it
	                              (index + 1 into its table) */
	bool data_dropped;         /* tar: a later layer deletes or replaces it, so its
	                              data is never written */
	char *symlink;             /* symlink target */
	bool has_holes;            /* source file is sparse */

	struct txattr **xattrs;
	uint32_t nxattrs;

	/* directories */
	struct tdentry *children;  /* sorted by name, without "." and ".." */
	uint32_t nchildren;
	struct tnode *parent;

	uint32_t nlink;            /* entries naming it in the image */

	/* layout decisions */
	bool extended;
	uint8_t layout;
	uint16_t xattr_icount;
	uint32_t xattr_size;
	uint64_t nid;              /* its slot in its area ... */
	bool in_metabox;           /* ... the metabox's data, or the plain one */
	uint32_t serial;           /* i_ino */
	uint64_t startblk;         /* flat layouts: first full block */
	uint64_t nblocks;          /* data blocks owned (flat / chunk) */
	uint32_t inline_size;      /* bytes stored after the inode */
	uint8_t *inline_data;      /* the inline tail (files, symlinks) ... */
	bool inline_spilled;       /* ... or a file's in the tails file (tails.c) */
	uint64_t inline_off;       /* ... from here */
	uint64_t dir_size;         /* directories: i_size */
	uint32_t record_size;      /* core + xattrs + index/inline */
	struct tchunks *chunks;    /* CHUNK_BASED */
	struct tindex *z;     /* compressed files */
	uint32_t meta_extra;       /* compressed: index bytes (incl. padding) */

	struct tnode *copies;      /* dedupe: later files of the same content,
	                              whose records follow this one's in a
	                              metabox (a chain through their own) */
	bool is_copy;              /* ... on such a chain */

	struct tnode *next;       /* all inodes, in nid-assignment order */
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
