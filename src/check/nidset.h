/* The set of inodes a walk has reached, with the first path of each
 * non-directory (hard links are recreated from it). */
#ifndef EK_CHECK_NIDSET_H
#define EK_CHECK_NIDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nid_entry {
	uint64_t nid;
	char *first_path;     /* path of the name that claimed it (walked or
	                         extracted under) */
	char *min_path;       /* smallest of its names in walk order: reports */
	uint32_t mode;        /* type bits of the inode, 0 until loaded */
	bool used;
	bool is_dir;
	bool extracted;       /* the first name was created successfully */
};

/* Walk order of paths: component by component, so "/a/x" < "/a-b". */
int path_cmp(const char *a, const char *b);

struct nidset {
	struct nid_entry *slots;
	size_t cap, used;
};

/* Find nid; if absent insert it and set *inserted.  NULL on ENOMEM. */
struct nid_entry *nidset_get(struct nidset *s, uint64_t nid, bool *inserted);
void nidset_free(struct nidset *s);

#endif
