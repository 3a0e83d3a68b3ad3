/*
 * Output descriptors of an extraction.
 *
 * Files are created when their directory is walked and stay open until
 * their data job has run, so queued work holds descriptors.  A directory
 * of thousands of small files would run the process out of them
 * (RLIMIT_NOFILE is often 1024): the budget below caps what queued work
 * may hold, and past it the walker writes a file at once instead.
 *
 * The kernel grows a process's descriptor table by doubling, and when the
 * process has more than one thread every growth waits for an RCU grace
 * period, stalling each thread that opens a file meanwhile (15-18 ms each
 * time on a 2-CPU VM, twice in a root filesystem's extraction).  So the
 * table is grown to its final size once, before any worker starts.
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check/checker.h"

/* Descriptors kept for everything else: stdio, the image, the target's
 * root, each worker's current directory, a deferred link's parent. */
#define RESERVED_BASE      32u
#define RESERVED_PER_WORKER 2u
/* Enough for the widest real directories; more buys nothing. */
#define BUDGET_MAX         1024u

void check_plan_descriptors(struct checker *c)
{
	rlim_t reserved = RESERVED_BASE + RESERVED_PER_WORKER * c->workers;
	rlim_t soft = 256, top;   /* RLIM_INFINITY is simply very large */
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		soft = rl.rlim_cur;
	c->fd_budget = 0;
	if (soft > reserved)
		c->fd_budget = soft - reserved < BUDGET_MAX ? (unsigned int)(soft - reserved)
							    : BUDGET_MAX;
	if (!c->extracting || c->workers < 2 || c->x.rootfd < 0)
		return;
	/* The highest descriptor this run should reach; duplicating onto it
	 * grows the table while we are still single-threaded. */
	top = c->fd_budget + reserved - 1;
	if (top >= soft)
		top = soft - 1;
	if (top > (rlim_t)c->x.rootfd && fcntl((int)top, F_GETFD) < 0 &&
	    dup2(c->x.rootfd, (int)top) == (int)top)
		close((int)top);
}

bool check_take_descriptor(struct checker *c)
{
	if (atomic_fetch_add(&c->open_files, 1) < c->fd_budget)
		return true;
	atomic_fetch_sub(&c->open_files, 1);
	return false;
}

void check_give_descriptor(struct checker *c)
{
	atomic_fetch_sub(&c->open_files, 1);
}
