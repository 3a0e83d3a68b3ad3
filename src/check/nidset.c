/* Open-addressing hash set of nids. */
#include <stdlib.h>

#include "check/nidset.h"

static size_t slot_of(uint64_t nid, size_t cap)
{
	uint64_t h = nid * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 17) & (cap - 1);
}

static int grow(struct nidset *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 1024, i;
	struct nid_entry *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -1;
	for (i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->slots[i].used)
			continue;
		j = slot_of(s->slots[i].nid, ncap);
		while (n[j].used)
			j = (j + 1) & (ncap - 1);
		n[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = n;
	s->cap = ncap;
	return 0;
}

struct nid_entry *nidset_get(struct nidset *s, uint64_t nid, bool *inserted)
{
	size_t i;

	*inserted = false;
	if ((s->used + 1) * 2 > s->cap && grow(s))
		return NULL;
	for (i = slot_of(nid, s->cap); s->slots[i].used; i = (i + 1) & (s->cap - 1))
		if (s->slots[i].nid == nid)
			return &s->slots[i];
	s->slots[i].used = true;
	s->slots[i].nid = nid;
	s->used++;
	*inserted = true;
	return &s->slots[i];
}

void nidset_free(struct nidset *s)
{
	size_t i;

	for (i = 0; i < s->cap; i++)
		if (s->slots[i].used) {
			free(s->slots[i].first_path);
			free(s->slots[i].min_path);
		}
	free(s->slots);
	s->slots = NULL;
	s->cap = s->used = 0;
}

int path_cmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;

	while (*x && *x == *y) {
		x++;
		y++;
	}
	if (*x == *y)
		return 0;
	if (!*x)
		return -1;
	if (!*y)
		return 1;
	/* '/' ends a component: it sorts before any byte of a name. */
	if (*x == '/')
		return -1;
	if (*y == '/')
		return 1;
	return *x < *y ? -1 : 1;
}
