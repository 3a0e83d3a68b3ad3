/* Decoder context pool: a mutex-protected stack of idle contexts, each
 * with the thread that used it last. */
#include <stdlib.h>

#include "util/ctxpool.h"

void ctxpool_init(struct ctxpool *p, void *(*create)(void),
		  void (*destroy)(void *))
{
	pthread_mutex_init(&p->lock, NULL);
	p->free = NULL;
	p->nfree = p->cap = 0;
	p->create = create;
	p->destroy = destroy;
}

void *ctxpool_get(struct ctxpool *p)
{
	pthread_t self = pthread_self();
	void *c = NULL;
	size_t i, pick;

	pthread_mutex_lock(&p->lock);
	if (p->nfree) {
		/* None of ours: the one given back last.  As many idle
		 * contexts as threads at most: a short scan. */
		pick = p->nfree - 1;
		for (i = p->nfree; i-- > 0;)
			if (pthread_equal(p->free[i].last_user, self)) {
				pick = i;
				break;
			}
		c = p->free[pick].ctx;
		p->free[pick] = p->free[--p->nfree];
	}
	pthread_mutex_unlock(&p->lock);
	return c ? c : p->create();
}

void ctxpool_put(struct ctxpool *p, void *ctx)
{
	pthread_mutex_lock(&p->lock);
	if (p->nfree == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 8;
		struct ctxpool_slot *g = realloc(p->free, ncap * sizeof(*g));

		if (!g) {
			pthread_mutex_unlock(&p->lock);
			p->destroy(ctx);
			return;
		}
		p->free = g;
		p->cap = ncap;
	}
	p->free[p->nfree].ctx = ctx;
	p->free[p->nfree].last_user = pthread_self();
	p->nfree++;
	pthread_mutex_unlock(&p->lock);
}

void ctxpool_fini(struct ctxpool *p)
{
	size_t i;

	for (i = 0; i < p->nfree; i++)
		p->destroy(p->free[i].ctx);
	free(p->free);
	p->free = NULL;
	p->nfree = p->cap = 0;
	pthread_mutex_destroy(&p->lock);
}
