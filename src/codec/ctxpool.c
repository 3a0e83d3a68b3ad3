/* Decoder context pool: a mutex-protected stack of idle contexts. */
#include <stdlib.h>

#include "codec/ctxpool.h"

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
	void *c = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->nfree)
		c = p->free[--p->nfree];
	pthread_mutex_unlock(&p->lock);
	return c ? c : p->create();
}

void ctxpool_put(struct ctxpool *p, void *ctx)
{
	pthread_mutex_lock(&p->lock);
	if (p->nfree == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 8;
		void **g = realloc(p->free, ncap * sizeof(*g));

		if (!g) {
			pthread_mutex_unlock(&p->lock);
			p->destroy(ctx);
			return;
		}
		p->free = g;
		p->cap = ncap;
	}
	p->free[p->nfree++] = ctx;
	pthread_mutex_unlock(&p->lock);
}

void ctxpool_fini(struct ctxpool *p)
{
	size_t i;

	for (i = 0; i < p->nfree; i++)
		p->destroy(p->free[i]);
	free(p->free);
	p->free = NULL;
	p->nfree = p->cap = 0;
	pthread_mutex_destroy(&p->lock);
}
