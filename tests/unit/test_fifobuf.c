/* The ring of pieces given back in order (util/fifobuf): pieces out never
 * overlap, stay inside the buffer, keep what was written into them, and
 * the memory is used again once given back. */
#include <setjmp.h>
#include <stdbool.h>
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

	bool in_current = pc->p >= f->base && pc->p + pc->len <= f->base + f->cap;
	bool in_outgrown = f->outgrown && pc->p >= f->outgrown &&
			   pc->p + pc->len <= f->outgrown + f->outgrown_cap;

	assert_true(in_current || in_outgrown);
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
 * the front; sometimes the newest is given back at once instead.  The
 * ring is CAP bytes from the start, or grows to it from start_cap. */
static void random_queue(size_t start_cap)
{
	struct piece out[MAX_OUT];
	struct fifobuf f;
	size_t first = 0, count = 0, taken = 0, refused = 0, i;
	unsigned int seed = 7;

	assert_int_equal(fifobuf_init(&f, start_cap, CAP), 0);
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
	assert_int_equal(f.cap, CAP);
	fifobuf_fini(&f);
}

static void test_random_queue(void **state)
{
	(void)state;
	random_queue(CAP);
}

static void test_random_queue_growing(void **state)
{
	(void)state;
	random_queue(700);
}

/* Pieces given back make room again: a full ring, emptied, takes the
 * whole buffer at once; a piece that does not fit before the end goes to
 * the start when the front is free. */
static void test_room_comes_back(void **state)
{
	struct fifobuf f;
	uint8_t *a, *b, *c;

	(void)state;
	assert_int_equal(fifobuf_init(&f, CAP, CAP), 0);
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

/* A ring that starts small grows to its limit when a piece does not
 * fit, also while pieces are out of the buffer it outgrows: those keep
 * their bytes until they come back, and that buffer goes with the last
 * of them. */
static void test_growth(void **state)
{
	struct piece out[MAX_OUT];
	struct fifobuf f;
	uint8_t *first;
	size_t i;

	(void)state;
	assert_int_equal(fifobuf_init(&f, 1024, CAP), 0);
	assert_null(fifobuf_take(&f, CAP + 1));           /* over the limit */
	for (i = 0; i < 4; i++) {
		out[i].len = 400;
		out[i].fill = (uint8_t)(i + 1);
		out[i].p = fifobuf_take(&f, out[i].len);
		assert_non_null(out[i].p);
		memset(out[i].p, out[i].fill, out[i].len);
	}
	assert_int_equal(f.cap, CAP);                     /* the third did not fit in 1024 */
	assert_non_null(f.outgrown);
	assert_int_equal(f.outgrown_live, 2);
	first = f.outgrown;
	assert_true(out[0].p >= first && out[1].p + out[1].len <= first + 1024);
	check_apart(out, 0, 4);
	for (i = 0; i < 4; i++) {
		check_piece(&f, &out[i]);
		fifobuf_give(&f, out[i].p, out[i].len);
		if (i == 1)
			assert_null(f.outgrown);          /* gone with its last piece */
	}
	assert_ptr_equal(fifobuf_take(&f, CAP), f.base);  /* empty: the whole buffer */
	assert_null(fifobuf_take(&f, 1));                 /* and no more */
	fifobuf_fini(&f);
	fifobuf_fini(&f);
	assert_null(fifobuf_take(&f, 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_queue),
		cmocka_unit_test(test_random_queue_growing),
		cmocka_unit_test(test_room_comes_back),
		cmocka_unit_test(test_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
