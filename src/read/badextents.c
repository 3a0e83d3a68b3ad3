/* A small ring of failed extents, checked before every decode. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "read/badextents.h"

#define MEMO_SIZE 256u

struct memo_entry {
	uint64_t nid, la;
	ek_error err;
};

struct bad_extents {
	pthread_mutex_t lock;
	atomic_uint count;          /* lets the common case skip the lock */
	unsigned int next;
	struct memo_entry e[MEMO_SIZE];
};

struct bad_extents *bad_extents_create(void)
{
	struct bad_extents *m = calloc(1, sizeof(*m));

	if (m)
		pthread_mutex_init(&m->lock, NULL);
	return m;
}

void bad_extents_destroy(struct bad_extents *m)
{
	if (m) {
		pthread_mutex_destroy(&m->lock);
		free(m);
	}
}

void bad_extents_add(struct bad_extents *m, uint64_t nid, uint64_t la, const ek_error *err)
{
	if (!m || !err || !err->code)
		return;
	pthread_mutex_lock(&m->lock);
	m->e[m->next].nid = nid;
	m->e[m->next].la = la;
	m->e[m->next].err = *err;
	m->next = (m->next + 1) % MEMO_SIZE;
	if (atomic_load(&m->count) < MEMO_SIZE)
		atomic_fetch_add(&m->count, 1);
	pthread_mutex_unlock(&m->lock);
}

int bad_extents_check(struct bad_extents *m, uint64_t nid, uint64_t la, ek_error *err)
{
	unsigned int i, n;
	int code = 0;

	if (!m || !(n = atomic_load(&m->count)))
		return 0;
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < n; i++) {
		if (m->e[i].nid == nid && m->e[i].la == la) {
			code = m->e[i].err.code;
			if (err)
				*err = m->e[i].err;
			break;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return code;
}
