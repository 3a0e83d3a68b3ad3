/*
 * A pool of decoder contexts: threads take one for a call and give it
 * back, so contexts (zstd DCtx, lzma dictionaries, inflate states) are
 * allocated once per concurrent user instead of once per cluster.  A
 * thread gets back the context it used last when that one is free: its
 * tables are still in this CPU's cache, not in another's.
 */
#ifndef EK_UTIL_CTXPOOL_H
#define EK_UTIL_CTXPOOL_H

#include <pthread.h>
#include <stddef.h>

struct ctxpool {
	pthread_mutex_t lock;
	struct ctxpool_slot {
		void *ctx;
		pthread_t last_user;
	} *free;
	size_t nfree, cap;
	void *(*create)(void);
	void (*destroy)(void *);
};

void ctxpool_init(struct ctxpool *p, void *(*create)(void),
		  void (*destroy)(void *));
/* A context, new or reused; NULL when out of memory. */
void *ctxpool_get(struct ctxpool *p);
void ctxpool_put(struct ctxpool *p, void *ctx);
void ctxpool_fini(struct ctxpool *p);

#endif
