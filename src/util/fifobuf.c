#include "util/fifobuf.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "util/hugebuf.h"

int fifobuf_init(struct fifobuf *f, size_t cap)
{
	f->base = hugebuf_alloc(cap);
	f->cap = f->base ? cap : 0;
	f->head = f->tail = f->end = f->live = 0;
	f->wrapped = false;
	return f->base ? 0 : -ENOMEM;
}

/* Unwrapped, the pieces out lie in [tail, head) and the free room is
 * [head, cap) and [0, tail); wrapped, they lie in [tail, end) and
 * [0, head), and the room is [head, tail). */
uint8_t *fifobuf_take(struct fifobuf *f, size_t len)
{
	size_t at;

	if (!f->live) {
		f->head = f->tail = f->end = 0;
		f->wrapped = false;
	}
	if (!len)
		return NULL;
	if (f->wrapped) {
		if (len > f->tail - f->head)
			return NULL;
		at = f->head;
	} else if (len <= f->cap - f->head) {
		at = f->head;
	} else if (len <= f->tail) {
		f->end = f->head;
		f->wrapped = true;
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
	size_t at = (size_t)(piece - f->base);

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
	f->base = NULL;
	f->cap = 0;
}
