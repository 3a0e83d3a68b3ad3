/* Digest table: open addressing on the digest's first bytes, which a
 * cryptographic hash makes uniform. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/digtab.h"

static size_t slot_of(const uint8_t *digest, size_t cap)
{
	uint64_t h;

	memcpy(&h, digest, sizeof(h));
	return (size_t)h & (cap - 1);
}

static struct digtab_entry *probe(const struct digtab *t, const uint8_t *digest,
				  uint64_t tag)
{
	size_t k;

	for (k = slot_of(digest, t->cap); t->slots[k].used; k = (k + 1) & (t->cap - 1))
		if (t->slots[k].tag == tag && !memcmp(t->slots[k].digest, digest, DIGEST_SIZE))
			break;
	return &t->slots[k];
}

bool digtab_find(const struct digtab *t, const uint8_t *digest, uint64_t tag,
		 uint64_t *value)
{
	struct digtab_entry *e;

	if (!t->cap)
		return false;
	e = probe(t, digest, tag);
	if (e->used)
		*value = e->value;
	return e->used;
}

static int grow(struct digtab *t)
{
	struct digtab old = *t;
	size_t i;

	/* Small at first: a table per compressed file (zfile.c's pclusters
	 * not yet committed) mostly holds one entry, and 1,024 slots (57
	 * KB) cleared for each cost a sanitized build of 8,067 small files
	 * 2,032 mmaps. */
	t->cap = old.cap ? old.cap * 2 : 16;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		*t = old;
		return -ENOMEM;
	}
	for (i = 0; i < old.cap; i++)
		if (old.slots[i].used)
			*probe(t, old.slots[i].digest, old.slots[i].tag) = old.slots[i];
	free(old.slots);
	return 0;
}

int digtab_add(struct digtab *t, const uint8_t *digest, uint64_t tag, uint64_t value)
{
	struct digtab_entry *e;

	if ((t->used + 1) * 2 > t->cap && grow(t))
		return -ENOMEM;
	e = probe(t, digest, tag);
	if (!e->used) {
		memcpy(e->digest, digest, DIGEST_SIZE);
		e->tag = tag;
		e->value = value;
		e->used = true;
		t->used++;
	}
	return 0;
}

void digtab_free(struct digtab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->used = 0;
}
