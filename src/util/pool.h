/*
 * A fixed pool of worker threads running submitted jobs in FIFO order.
 * Each job gets the index of the worker running it (0..threads-1), so
 * callers can keep per-worker state (encoders, buffers) without locks.
 * Completion is signalled per job through pool_job.done; pool_wait()
 * blocks until a given job has finished.
 */
#ifndef EK_UTIL_POOL_H
#define EK_UTIL_POOL_H

#include <pthread.h>
#include <stdbool.h>

#include "erofskit/erofskit.h"

struct pool;

struct pool_job {
	void (*run)(struct pool_job *job, unsigned int worker);
	struct pool_job *next;   /* queue link, owned by the pool */
	bool done;               /* set under the pool lock */
	bool detached;           /* run() frees the job: never touched after */
};

/* threads >= 1.  Returns 0 or -errno. */
int pool_create(unsigned int threads, struct pool **out);
void pool_submit(struct pool *p, struct pool_job *job);
/* Wait until job has run. */
void pool_wait(struct pool *p, struct pool_job *job);
/* Whether job has run, without waiting. */
bool pool_done(struct pool *p, struct pool_job *job);
/* Wait until no job is queued or running (jobs may queue more jobs). */
void pool_wait_idle(struct pool *p);
/*
 * Give each thread a CPU of its own when there are exactly as many threads
 * as CPUs this process may use; otherwise leave them to the scheduler
 * (fewer threads pinned to the first CPUs would pile up with those of
 * another such process while other CPUs idle).  For pools that keep every
 * thread busy: the scheduler tends to wake a thread on its waker's CPU and
 * may leave it queued there for milliseconds while another CPU idles.
 */
void pool_pin(struct pool *p);
/* Jobs queued or running right now. */
unsigned int pool_pending(struct pool *p);
/* Finish queued jobs, join the threads, free. */
void pool_destroy(struct pool *p);

/* The most worker threads any part of the library starts. */
#define POOL_THREADS_MAX 1024u

/*
 * What every `workers` option of the library means: the number of threads
 * that do the work; 0 (the default) is one per CPU this process may use;
 * 1 is the calling thread alone, no thread started.  -EINVAL above
 * POOL_THREADS_MAX.
 */
int pool_resolve_workers(unsigned int workers, unsigned int *out, ek_error *err);

#endif
