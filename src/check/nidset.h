/* The set of inodes a walk has reached, with the first path of each
 * non-directory (hard links are recreated from it). */
#ifndef EK_CHECK_NIDSET_H
#define EK_CHECK_NIDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nid_entry {
	uint64_t nid;
	char *first_path;     /* relative path of the first name; may be NULL */
	bool used;
	bool is_dir;
	bool extracted;       /* the first name was created successfully */
};

struct nidset {
	struct nid_entry *slots;
	size_t cap, used;
};

/* Find nid; if absent insert it and set *inserted.  NULL on ENOMEM. */
struct nid_entry *nidset_get(struct nidset *s, uint64_t nid, bool *inserted);
void nidset_free(struct nidset *s);

#endif
