/*
 * A table of content digests: (digest, tag) -> value, for finding data
 * stored before.  The tag tells apart equal bytes stored differently
 * (lengths, forms); the caller picks it.
 */
#ifndef EK_UTIL_DIGTAB_H
#define EK_UTIL_DIGTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/digest.h"

struct digtab_entry {
	uint8_t digest[DIGEST_SIZE];
	uint64_t tag;
	uint64_t value;
	bool used;
};

struct digtab {
	struct digtab_entry *slots;
	size_t cap, used;
};

/* The value stored for (digest, tag), or false. */
bool digtab_find(const struct digtab *t, const uint8_t *digest, uint64_t tag,
		 uint64_t *value);
/* Store (digest, tag) -> value unless present; -ENOMEM. */
int digtab_add(struct digtab *t, const uint8_t *digest, uint64_t tag, uint64_t value);
void digtab_free(struct digtab *t);

#endif
