/*
 * Buffers of one size kept for reuse.  A fresh buffer costs a page fault
 * for every 4 KiB first written into it, and the allocator hands large
 * ones back to the kernel when they are freed: reading a build's input
 * into fresh buffers spent 0.26 s of the reading thread's time in page
 * faults on the small-files tree (a VM, where a fault costs some 4 us).
 * Safe to share between threads.
 */
#ifndef EK_UTIL_BUFCACHE_H
#define EK_UTIL_BUFCACHE_H

#include <pthread.h>
#include <stddef.h>

struct bufcache {
	pthread_mutex_t lock;
	size_t size;             /* every buffer's */
	void **free;
	unsigned int count, max; /* kept: at most max */
};

/* Buffers of size bytes, at most max of them kept.  0 or -ENOMEM. */
int bufcache_init(struct bufcache *c, size_t size, unsigned int max);
/* A buffer of c->size bytes, reused or new; NULL when out of memory. */
void *bufcache_get(struct bufcache *c);
/* Give buf (from bufcache_get, or NULL) back. */
void bufcache_put(struct bufcache *c, void *buf);
/* Free the buffers kept; none may be out. */
void bufcache_fini(struct bufcache *c);

#endif
