#include "util/bufcache.h"
#include "util/hugebuf.h"

#include <errno.h>
#include <stdlib.h>

int bufcache_init(struct bufcache *c, size_t size, unsigned int max)
{
	c->size = size;
	c->count = 0;
	c->max = max;
	c->free = calloc(max ? max : 1, sizeof(*c->free));
	if (!c->free)
		return -ENOMEM;
	if (pthread_mutex_init(&c->lock, NULL)) {
		free(c->free);
		c->free = NULL;
		return -ENOMEM;
	}
	return 0;
}

void *bufcache_get(struct bufcache *c)
{
	void *buf = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->count)
		buf = c->free[--c->count];
	pthread_mutex_unlock(&c->lock);
	return buf ? buf : hugebuf_alloc(c->size);
}

void bufcache_put(struct bufcache *c, void *buf)
{
	if (!buf)
		return;
	pthread_mutex_lock(&c->lock);
	if (c->count < c->max) {
		c->free[c->count++] = buf;
		buf = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	free(buf);
}

void bufcache_fini(struct bufcache *c)
{
	if (!c->free)
		return;
	while (c->count)
		free(c->free[--c->count]);
	free(c->free);
	c->free = NULL;
	pthread_mutex_destroy(&c->lock);
}
