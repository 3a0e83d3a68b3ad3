/* A set of 64-bit numbers (nids, byte offsets) for the tools' walks. */
#ifndef EK_TOOLS_U64SET_H
#define EK_TOOLS_U64SET_H

#include <stddef.h>
#include <stdint.h>

struct u64set {
	uint64_t *slots;        /* value + 1, open addressing; 0: free */
	size_t cap, count;
};

/* Add v: 1 if it was there already, 0 if added, -ENOMEM. */
int u64set_add(struct u64set *s, uint64_t v);
void u64set_free(struct u64set *s);

#endif
