/* See u64set.h.  Linear probing at most half full. */
#include <errno.h>
#include <stdlib.h>

#include "u64set.h"

static int grow(struct u64set *s)
{
	size_t cap = s->cap ? 2 * s->cap : 256, i, j;
	uint64_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (j = 0; j < s->cap; j++) {
		if (!s->slots[j])
			continue;
		for (i = s->slots[j] % cap; slots[i]; i = (i + 1) % cap)
			;
		slots[i] = s->slots[j];
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

int u64set_add(struct u64set *s, uint64_t v)
{
	uint64_t key = v + 1;   /* 0 marks a free slot: UINT64_MAX is never added */
	size_t i;

	if (2 * (s->count + 1) > s->cap && grow(s))
		return -ENOMEM;
	for (i = key % s->cap; s->slots[i]; i = (i + 1) % s->cap)
		if (s->slots[i] == key)
			return 1;
	s->slots[i] = key;
	s->count++;
	return 0;
}

void u64set_free(struct u64set *s)
{
	free(s->slots);
	s->slots = NULL;
	s->cap = s->count = 0;
}
