/* Chunks made ahead on a thread of their own; see chunk_ahead.h. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "write/chunk_ahead.h"

/* Buffers in the ring: the one the consumer holds, and three the
 * producer may fill meanwhile (enough to ride out a consumer that stops
 * for a large entry; more only costs memory). */
#define CHUNK_BUFS 4

struct chunk_ahead {
	chunk_fill_fn fill;
	void *ctx;
	size_t size;
	uint8_t *buf[CHUNK_BUFS];
	ssize_t len[CHUNK_BUFS];    /* what fill returned into each */
	/* Counts from the start: chunks made, taken by the consumer, and
	 * given back (all taken but the one it holds). */
	uint64_t made, taken, freed;
	bool ended;                 /* the last chunk made was 0 or -1 */
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t changed;     /* a chunk made, given back, or stop */
	pthread_t thread;
};

static void *produce(void *arg)
{
	struct chunk_ahead *c = arg;

	for (;;) {
		ssize_t n;
		size_t slot;

		pthread_mutex_lock(&c->lock);
		while (!c->stop && c->made - c->freed == CHUNK_BUFS)
			pthread_cond_wait(&c->changed, &c->lock);
		if (c->stop) {
			pthread_mutex_unlock(&c->lock);
			break;
		}
		slot = c->made % CHUNK_BUFS;
		pthread_mutex_unlock(&c->lock);
		/* Outside the lock: the consumer takes earlier chunks meanwhile. */
		n = c->fill(c->ctx, c->buf[slot], c->size);
		pthread_mutex_lock(&c->lock);
		c->len[slot] = n;
		c->made++;
		pthread_cond_broadcast(&c->changed);
		pthread_mutex_unlock(&c->lock);
		if (n <= 0)
			break;
	}
	return NULL;
}

static void chunk_ahead_free(struct chunk_ahead *c)
{
	for (size_t i = 0; i < CHUNK_BUFS; i++)
		free(c->buf[i]);
	pthread_cond_destroy(&c->changed);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int chunk_ahead_start(chunk_fill_fn fill, void *ctx, size_t size, struct chunk_ahead **out)
{
	struct chunk_ahead *c = calloc(1, sizeof(*c));
	int ret;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->fill = fill;
	c->ctx = ctx;
	c->size = size;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->changed, NULL);
	for (size_t i = 0; i < CHUNK_BUFS; i++) {
		c->buf[i] = malloc(size);
		if (!c->buf[i]) {
			chunk_ahead_free(c);
			return -ENOMEM;
		}
	}
	ret = -pthread_create(&c->thread, NULL, produce, c);
	if (ret) {
		chunk_ahead_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

ssize_t chunk_ahead_next(struct chunk_ahead *c, const void **out)
{
	size_t slot;
	ssize_t n;

	pthread_mutex_lock(&c->lock);
	if (c->ended) {             /* the end, or the error, told again */
		n = c->len[(c->taken - 1) % CHUNK_BUFS];
		pthread_mutex_unlock(&c->lock);
		*out = NULL;
		return n;
	}
	/* The chunk handed out last time is given back. */
	if (c->freed < c->taken) {
		c->freed = c->taken;
		pthread_cond_broadcast(&c->changed);
	}
	while (c->made == c->taken)
		pthread_cond_wait(&c->changed, &c->lock);
	slot = c->taken++ % CHUNK_BUFS;
	n = c->len[slot];
	c->ended = n <= 0;
	pthread_mutex_unlock(&c->lock);
	*out = n > 0 ? c->buf[slot] : NULL;
	return n;
}

void chunk_ahead_stop(struct chunk_ahead *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	chunk_ahead_free(c);
}
