/* Worker pool: one mutex, a FIFO and two condition variables. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/error.h"
#include "util/pool.h"

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work;      /* a job was queued, or shutdown */
	pthread_cond_t finished;  /* a job completed */
	struct pool_job *head, *tail;
	unsigned int pending;     /* queued or running */
	unsigned int job_waiters; /* in pool_wait */
	unsigned int idle_waiters;/* in pool_wait_idle */
	bool stop;
	unsigned int nthreads;
	pthread_t *threads;
};

struct worker_arg {
	struct pool *p;
	unsigned int id;
};

static void *worker_main(void *arg)
{
	struct worker_arg *wa = arg;
	struct pool *p = wa->p;
	unsigned int id = wa->id;

	free(wa);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct pool_job *job;

		while (!p->head && !p->stop)
			pthread_cond_wait(&p->work, &p->lock);
		if (!p->head)
			break;
		bool detached;

		job = p->head;
		p->head = job->next;
		if (!p->head)
			p->tail = NULL;
		detached = job->detached;
		pthread_mutex_unlock(&p->lock);
		job->run(job, id);
		pthread_mutex_lock(&p->lock);
		if (!detached)
			job->done = true;
		p->pending--;
		/* Wake only who needs it: a walk of many small jobs would
		 * otherwise wake the waiting thread after every one. */
		if (p->job_waiters || (!p->pending && p->idle_waiters))
			pthread_cond_broadcast(&p->finished);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static unsigned int cpus_allowed(void)
{
	cpu_set_t allowed;
	long n;

	/* taskset, cgroups' cpusets and container runtimes narrow it; the
	 * online count would start threads that only queue. */
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0)
		return (unsigned int)CPU_COUNT(&allowed);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned int)n : 1;
}

int pool_resolve_workers(unsigned int workers, unsigned int *out, ek_error *err)
{
	unsigned int n = workers ? workers : cpus_allowed();

	if (workers > POOL_THREADS_MAX)
		return err_fail(err, -EINVAL, "%u workers: at most %u", workers, POOL_THREADS_MAX);
	*out = n < POOL_THREADS_MAX ? n : POOL_THREADS_MAX;
	return 0;
}

int pool_create(unsigned int threads, struct pool **out)
{
	struct pool *p = calloc(1, sizeof(*p));
	unsigned int i;

	if (!p)
		return -ENOMEM;
	p->threads = calloc(threads, sizeof(*p->threads));
	if (!p->threads) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->finished, NULL);
	for (i = 0; i < threads; i++) {
		struct worker_arg *wa = malloc(sizeof(*wa));

		if (!wa)
			break;
		wa->p = p;
		wa->id = i;
		if (pthread_create(&p->threads[i], NULL, worker_main, wa)) {
			free(wa);
			break;
		}
		p->nthreads++;
	}
	if (p->nthreads != threads) {
		pool_destroy(p);
		return -EAGAIN;
	}
	*out = p;
	return 0;
}

void pool_submit(struct pool *p, struct pool_job *job)
{
	job->next = NULL;
	job->done = false;
	pthread_mutex_lock(&p->lock);
	if (p->tail)
		p->tail->next = job;
	else
		p->head = job;
	p->tail = job;
	p->pending++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

void pool_wait(struct pool *p, struct pool_job *job)
{
	pthread_mutex_lock(&p->lock);
	p->job_waiters++;
	while (!job->done)
		pthread_cond_wait(&p->finished, &p->lock);
	p->job_waiters--;
	pthread_mutex_unlock(&p->lock);
}

bool pool_done(struct pool *p, struct pool_job *job)
{
	bool done;

	pthread_mutex_lock(&p->lock);
	done = job->done;
	pthread_mutex_unlock(&p->lock);
	return done;
}

void pool_wait_idle(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->idle_waiters++;
	while (p->pending)
		pthread_cond_wait(&p->finished, &p->lock);
	p->idle_waiters--;
	pthread_mutex_unlock(&p->lock);
}

void pool_pin(struct pool *p)
{
	cpu_set_t allowed, one;
	unsigned int i = 0;
	int cpu;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0 ||
	    p->nthreads != (unsigned int)CPU_COUNT(&allowed))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE && i < p->nthreads; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		/* Best effort: a thread left unpinned still works. */
		(void)pthread_setaffinity_np(p->threads[i++], sizeof(one), &one);
	}
}

unsigned int pool_pending(struct pool *p)
{
	unsigned int n;

	pthread_mutex_lock(&p->lock);
	n = p->pending;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void pool_destroy(struct pool *p)
{
	unsigned int i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->finished);
	pthread_mutex_destroy(&p->lock);
	free(p->threads);
	free(p);
}
