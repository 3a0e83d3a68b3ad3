/* The worker pool: every job runs once, and pool_pin gives each thread a
 * CPU of its own only when there are as many threads as CPUs. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/pool.h"

#define JOBS 64

struct affinity_job {
	struct pool_job job;
	unsigned int worker;
	int cpus;        /* CPUs the running thread may use */
	int cpu;         /* one of them */
};

static void record_affinity(struct pool_job *job, unsigned int worker)
{
	struct affinity_job *a = (struct affinity_job *)job;
	cpu_set_t set;
	int i;

	a->worker = worker;
	a->cpus = -1;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	a->cpus = CPU_COUNT(&set);
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set)) {
			a->cpu = i;
			break;
		}
}

static int allowed_cpus(void)
{
	cpu_set_t set;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	return CPU_COUNT(&set);
}

/* Run JOBS jobs on `threads` threads, pinned or not. */
static void run_jobs(unsigned int threads, bool pin, struct affinity_job *jobs)
{
	struct pool *p;
	unsigned int i;

	assert_int_equal(pool_create(threads, &p), 0);
	if (pin)
		pool_pin(p);
	for (i = 0; i < JOBS; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].cpus = -2;   /* not run */
		jobs[i].job.run = record_affinity;
		pool_submit(p, &jobs[i].job);
	}
	pool_wait_idle(p);
	for (i = 0; i < JOBS; i++)
		assert_true(jobs[i].job.done);
	pool_destroy(p);
}

static void test_pinned_threads_own_one_cpu(void **state)
{
	struct affinity_job jobs[JOBS];
	int owner[CPU_SETSIZE];
	unsigned int threads = (unsigned int)allowed_cpus(), i;

	(void)state;
	memset(owner, -1, sizeof(owner));
	run_jobs(threads, true, jobs);
	for (i = 0; i < JOBS; i++) {
		assert_int_equal(jobs[i].cpus, 1);
		assert_true(jobs[i].worker < threads);
		/* No two threads share a CPU. */
		if (owner[jobs[i].cpu] < 0)
			owner[jobs[i].cpu] = (int)jobs[i].worker;
		assert_int_equal(owner[jobs[i].cpu], (int)jobs[i].worker);
	}
}

/* Every job of `threads` threads (pinned if asked) may use every CPU. */
static void expect_unpinned(unsigned int threads, bool pin)
{
	struct affinity_job jobs[JOBS];
	int cpus = allowed_cpus();
	unsigned int i;

	run_jobs(threads, pin, jobs);
	for (i = 0; i < JOBS; i++)
		assert_int_equal(jobs[i].cpus, cpus);
}

static void test_more_threads_than_cpus_stay_free(void **state)
{
	(void)state;
	expect_unpinned((unsigned int)allowed_cpus() + 1, true);
}

static void test_fewer_threads_than_cpus_stay_free(void **state)
{
	(void)state;
	if (allowed_cpus() < 2)
		skip();   /* no pool has fewer threads than one CPU */
	expect_unpinned((unsigned int)allowed_cpus() - 1, true);
}

static void test_unpinned_by_default(void **state)
{
	(void)state;
	expect_unpinned(1, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pinned_threads_own_one_cpu),
		cmocka_unit_test(test_more_threads_than_cpus_stay_free),
		cmocka_unit_test(test_fewer_threads_than_cpus_stay_free),
		cmocka_unit_test(test_unpinned_by_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
