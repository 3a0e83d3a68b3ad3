/* Chunks made ahead (write/chunk_ahead): every chunk comes out once, in
 * order, whole, and stays so until the next is taken while the producer
 * fills the others; the end and an error are told again on every later
 * call; a stop while the producer waits on a full ring returns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "write/chunk_ahead.h"

#define SIZE 4096u

struct source {
	unsigned int made, last;   /* chunks filled, and how many there are */
	ssize_t end;               /* what follows the last: 0 or -1 */
};

/* Chunk k: SIZE - k bytes of (k & 0xff), so that each is told apart. */
static ssize_t fill(void *ctx, void *buf, size_t size)
{
	struct source *s = ctx;
	unsigned int k = s->made;

	assert_int_equal(size, SIZE);
	if (k == s->last)
		return s->end;
	s->made++;
	memset(buf, (int)(k & 0xff), SIZE - k % SIZE);
	return (ssize_t)(SIZE - k % SIZE);
}

static void take_all(struct source *s)
{
	struct chunk_ahead *c;
	const void *p, *before = NULL;
	unsigned int k;

	assert_int_equal(chunk_ahead_start(fill, s, SIZE, &c), 0);
	for (k = 0; k < s->last; k++) {
		ssize_t n = chunk_ahead_next(c, &p);
		const uint8_t *b = p;

		assert_int_equal(n, SIZE - k % SIZE);
		assert_ptr_not_equal(p, before);
		/* Held while the producer goes on: unchanged however long. */
		if (k % 97 == 0)
			usleep(2000);
		for (ssize_t i = 0; i < n; i++)
			assert_int_equal(b[i], k & 0xff);
		before = p;
	}
	for (k = 0; k < 3; k++) {
		assert_int_equal(chunk_ahead_next(c, &p), s->end);
		assert_null(p);
	}
	chunk_ahead_stop(c);
}

static void test_in_order(void **state)
{
	struct source s = { 0, 1000, 0 };

	(void)state;
	take_all(&s);
	assert_int_equal(s.made, 1000);
}

static void test_error_repeats(void **state)
{
	struct source s = { 0, 5, -1 };

	(void)state;
	take_all(&s);
}

static void test_stop_early(void **state)
{
	struct source s = { 0, 1000000, 0 };
	struct chunk_ahead *c;
	const void *p;

	(void)state;
	assert_int_equal(chunk_ahead_start(fill, &s, SIZE, &c), 0);
	assert_int_equal(chunk_ahead_next(c, &p), SIZE);
	usleep(20000);   /* the ring fills; the producer waits */
	chunk_ahead_stop(c);
	/* It made no more than the ring holds beyond what was taken. */
	assert_true(s.made >= 1 && s.made <= 5);
}

static void test_stop_untaken(void **state)
{
	struct source s = { 0, 3, 0 };
	struct chunk_ahead *c;

	(void)state;
	assert_int_equal(chunk_ahead_start(fill, &s, SIZE, &c), 0);
	chunk_ahead_stop(c);   /* nothing taken: all is freed */
	chunk_ahead_stop(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_error_repeats),
		cmocka_unit_test(test_stop_early),
		cmocka_unit_test(test_stop_untaken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
