/* Every entry of an image, for the tools that look at all of it
 * (mkfs --block-list-file, dump --stats): depth first, each directory's
 * entries in their on-disk (name) order, through the public API. */
#ifndef EK_TOOLS_IMAGEWALK_H
#define EK_TOOLS_IMAGEWALK_H

#include <stdbool.h>

#include "erofskit/erofskit.h"

struct image_entry {
	const char *path;       /* the prefix, then "/NAME..."; the root is the
	                           prefix alone, or "/" without one */
	const char *name;       /* the last component ("" for the root) */
	ek_nid nid;
	ek_inode *inode;        /* loaded; the walk puts it after the call */
	const ek_stat *st;
	/* the first name of its inode the walk meets (a directory met
	 * twice ends the walk: -EUCLEAN): visitors that count inodes skip
	 * the others */
	bool first;
};

/* Return 0 to go on, or an error (err filled) that ends the walk. */
typedef int (*image_visit_fn)(void *ctx, const struct image_entry *e, ek_error *err);

/* Walk img from its root, calling visit for every entry, the root first
 * and a directory before its entries.  prefix ("/system", or "") goes in
 * front of every path.  0, or the first error (err names where). */
int image_walk(ek_image *img, const char *prefix, image_visit_fn visit, void *ctx,
	       ek_error *err);

#endif
