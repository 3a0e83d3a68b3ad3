/* The decoder context pool: contexts are reused, and a thread gets back
 * the one it used last when that one is idle. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/ctxpool.h"

static int created, destroyed;

static void *make_ctx(void)
{
	created++;
	return malloc(16);
}

static void free_ctx(void *c)
{
	destroyed++;
	free(c);
}

struct other_thread {
	struct ctxpool *pool;
	void *ctx;
};

/* Take a context and give it back from another thread. */
static void *use_elsewhere(void *arg)
{
	struct other_thread *o = arg;

	o->ctx = ctxpool_get(o->pool);
	ctxpool_put(o->pool, o->ctx);
	return NULL;
}

static void *take_elsewhere(void *arg)
{
	struct other_thread *o = arg;

	o->ctx = ctxpool_get(o->pool);
	return NULL;
}

static void *give_back_elsewhere(void *arg)
{
	struct other_thread *o = arg;

	ctxpool_put(o->pool, o->ctx);
	return NULL;
}

static void in_thread(void *(*fn)(void *), struct other_thread *o)
{
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, fn, o), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
}

static void start(struct ctxpool *pool)
{
	created = destroyed = 0;
	ctxpool_init(pool, make_ctx, free_ctx);
}

/* Every context made is idle again, and destroyed with the pool. */
static void finish(struct ctxpool *pool, int made)
{
	assert_int_equal(created, made);
	ctxpool_fini(pool);
	assert_int_equal(destroyed, made);
}

static void test_thread_gets_its_own_context_back(void **state)
{
	struct ctxpool pool;
	struct other_thread o = { &pool, NULL };
	void *mine, *again;

	(void)state;
	start(&pool);
	mine = ctxpool_get(&pool);
	assert_non_null(mine);
	in_thread(take_elsewhere, &o);     /* ours is busy: a new one */
	assert_non_null(o.ctx);
	assert_ptr_not_equal(o.ctx, mine);
	ctxpool_put(&pool, mine);
	in_thread(give_back_elsewhere, &o); /* given back last: on top */
	again = ctxpool_get(&pool);
	assert_ptr_equal(again, mine);
	ctxpool_put(&pool, again);
	finish(&pool, 2);
}

static void test_other_threads_context_when_ours_is_busy(void **state)
{
	struct ctxpool pool;
	struct other_thread o = { &pool, NULL };
	void *mine, *second;

	(void)state;
	start(&pool);
	in_thread(use_elsewhere, &o);
	/* None of ours is idle: the idle one is reused, nothing is made. */
	mine = ctxpool_get(&pool);
	assert_ptr_equal(mine, o.ctx);
	second = ctxpool_get(&pool);   /* none idle: a new one */
	assert_non_null(second);
	assert_ptr_not_equal(second, mine);
	ctxpool_put(&pool, mine);
	ctxpool_put(&pool, second);
	finish(&pool, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_gets_its_own_context_back),
		cmocka_unit_test(test_other_threads_context_when_ours_is_busy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
