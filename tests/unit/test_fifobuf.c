/* The ring of pieces given back in order (util/fifobuf): pieces out never
 * overlap, stay inside the buffer, keep what was written into them, and
 * the memory is used again once given back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/fifobuf.h"

#define CAP 4096u
#define MAX_OUT 64u

struct piece {
	uint8_t *p;
	size_t len;
	uint8_t fill;
};

static void check_piece(const struct fifobuf *f, const struct piece *pc)
{
	size_t i;

	assert_true(pc->p >= f->base && pc->p + pc->len <= f->base + f->cap);
	for (i = 0; i < pc->len; i++)
		assert_int_equal(pc->p[i], pc->fill);
}

static void check_apart(const struct piece *out, size_t first, size_t count)
{
	size_t i, j;

	for (i = 0; i < count; i++)
		for (j = i + 1; j < count; j++) {
			const struct piece *a = &out[(first + i) % MAX_OUT];
			const struct piece *b = &out[(first + j) % MAX_OUT];

			assert_true(a->p + a->len <= b->p || b->p + b->len <= a->p);
		}
}

/* A queue of pieces of random sizes, taken at the back and given back at
 * the front; sometimes the newest is given back at once instead. */
static void test_random_queue(void **state)
{
	struct piece out[MAX_OUT];
	struct fifobuf f;
	size_t first = 0, count = 0, taken = 0, refused = 0, i;
	unsigned int seed = 7;

	(void)state;
	assert_int_equal(fifobuf_init(&f, CAP), 0);
	for (i = 0; i < 200000; i++) {
		seed = seed * 1103515245u + 12345u;
		if (count < MAX_OUT && (seed >> 16) % 3) {
			size_t len = 1 + (seed >> 8) % 700;
			struct piece *pc = &out[(first + count) % MAX_OUT];

			pc->p = fifobuf_take(&f, len);
			if (!pc->p) {
				refused++;
				assert_true(count > 0);   /* an empty ring takes any len <= CAP */
				goto give;
			}
			pc->len = len;
			pc->fill = (uint8_t)i;
			memset(pc->p, pc->fill, len);
			taken++;
			if ((seed >> 20) % 17 == 0) {   /* not queued after all */
				fifobuf_give(&f, pc->p, pc->len);
				continue;
			}
			count++;
			check_apart(out, first, count);
			continue;
		}
give:
		if (count) {
			check_piece(&f, &out[first]);
			fifobuf_give(&f, out[first].p, out[first].len);
			first = (first + 1) % MAX_OUT;
			count--;
		}
	}
	for (i = 0; i < count; i++)
		check_piece(&f, &out[(first + i) % MAX_OUT]);
	assert_true(taken > 100000);
	assert_true(refused > 0);
	fifobuf_fini(&f);
}

/* Pieces given back make room again: a full ring, emptied, takes the
 * whole buffer at once; a piece that does not fit before the end goes to
 * the start when the front is free. */
static void test_room_comes_back(void **state)
{
	struct fifobuf f;
	uint8_t *a, *b, *c;

	(void)state;
	assert_int_equal(fifobuf_init(&f, CAP), 0);
	assert_null(fifobuf_take(&f, 0));
	assert_null(fifobuf_take(&f, CAP + 1));
	a = fifobuf_take(&f, 3000);
	b = fifobuf_take(&f, 1000);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(fifobuf_take(&f, 200));      /* 96 bytes at the end, none before */
	fifobuf_give(&f, a, 3000);
	c = fifobuf_take(&f, 200);               /* wraps to the start */
	assert_ptr_equal(c, f.base);
	assert_null(fifobuf_take(&f, 2801));     /* 2800 free between c and b */
	fifobuf_give(&f, b, 1000);
	fifobuf_give(&f, c, 200);
	assert_ptr_equal(fifobuf_take(&f, CAP), f.base);
	fifobuf_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_queue),
		cmocka_unit_test(test_room_comes_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
