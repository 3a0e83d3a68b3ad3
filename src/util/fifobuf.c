#include "util/fifobuf.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "util/hugebuf.h"

static void reset(struct fifobuf *f)
{
	f->head = f->tail = f->end = 0;
	f->wrapped = false;
}

int fifobuf_init(struct fifobuf *f, size_t first, size_t max)
{
	f->base = hugebuf_alloc(first);
	f->cap = f->base ? first : 0;
	f->max = f->base ? max : 0;
	f->live = 0;
	f->outgrown = NULL;
	f->outgrown_cap = f->outgrown_live = 0;
	reset(f);
	return f->base ? 0 : -ENOMEM;
}

/*
 * The buffer at its limit, once the first is outgrown (its pieces still
 * out are only counted from then on).  Straight to the limit, not
 * doubling: buffers of a few MiB come from glibc's heap, where they are
 * faulted in 4 KiB at a time and given back when freed, the pipeline's
 * limit (over 32 MiB) from mmap, in huge pages.  A doubling ring cost
 * 10,000 more faults and 5% of a root filesystem's lz4hc build.  So there
 * is one growth, and one outgrown buffer at most.  Whether it grew.
 */
static bool grow(struct fifobuf *f, size_t len)
{
	size_t cap = f->max;
	uint8_t *bigger;

	if (len > cap || cap <= f->cap)
		return false;
	bigger = hugebuf_alloc(cap);
	if (!bigger)
		return false;
	if (f->live) {
		f->outgrown = f->base;
		f->outgrown_cap = f->cap;
		f->outgrown_live = f->live;
	} else {
		free(f->base);
	}
	f->base = bigger;
	f->cap = cap;
	f->live = 0;
	reset(f);
	return true;
}

/* Unwrapped, the pieces out lie in [tail, head) and the free room is
 * [head, cap) and [0, tail); wrapped, they lie in [tail, end) and
 * [0, head), and the room is [head, tail). */
uint8_t *fifobuf_take(struct fifobuf *f, size_t len)
{
	size_t at;

	if (!f->live)
		reset(f);
	if (!len)
		return NULL;
	if (f->wrapped) {
		if (len > f->tail - f->head && !grow(f, len))
			return NULL;
		at = f->head;
	} else if (len <= f->cap - f->head) {
		at = f->head;
	} else if (len <= f->tail) {
		f->end = f->head;
		f->wrapped = true;
		at = 0;
	} else if (grow(f, len)) {
		at = 0;
	} else {
		return NULL;
	}
	f->head = at + len;
	f->live++;
	return f->base + at;
}

void fifobuf_give(struct fifobuf *f, const uint8_t *piece, size_t len)
{
	size_t at;

	if (f->outgrown && piece >= f->outgrown && piece < f->outgrown + f->outgrown_cap) {
		assert(f->outgrown_live);
		if (!--f->outgrown_live) {
			free(f->outgrown);
			f->outgrown = NULL;
		}
		return;
	}
	at = (size_t)(piece - f->base);

	assert(f->live && (at == f->tail || at + len == f->head));
	f->live--;
	if (at == f->tail) {
		f->tail = at + len;
		if (f->wrapped && f->tail == f->end) {
			f->tail = 0;     /* the run before the wrap is done */
			f->wrapped = false;
		}
	} else {
		f->head = at;
		if (f->wrapped && at == 0) {
			f->head = f->end;   /* the wrap is undone */
			f->wrapped = false;
		}
	}
}

void fifobuf_fini(struct fifobuf *f)
{
	free(f->base);
	free(f->outgrown);
	f->base = f->outgrown = NULL;
	f->cap = f->max = f->outgrown_cap = f->outgrown_live = f->live = 0;
	reset(f);
}
