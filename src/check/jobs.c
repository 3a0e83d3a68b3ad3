/*
 * The checker's jobs: on the pool, or with one worker in a FIFO drained by
 * the calling thread, not by recursion, so that deep trees cost neither
 * stack nor open descriptors.
 */
#include "check/checker.h"

void check_submit(struct checker *c, struct pool_job *job, unsigned int worker)
{
	(void)worker;
	if (c->pool) {
		pool_submit(c->pool, job);
		return;
	}
	/* One thread: the FIFO check_drain() empties. */
	job->next = NULL;
	if (c->inline_tail)
		c->inline_tail->next = job;
	else
		c->inline_head = job;
	c->inline_tail = job;
}

void check_drain(struct checker *c)
{
	while (c->inline_head) {
		struct pool_job *job = c->inline_head;

		c->inline_head = job->next;
		if (!c->inline_head)
			c->inline_tail = NULL;
		job->run(job, 0);
	}
}
