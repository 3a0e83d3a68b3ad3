/* A registry image's layers fetched ahead of the build; see pullahead.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cancel.h"
#include "util/error.h"
#include "write/pullahead.h"

enum slot_state { SLOT_WAITING, SLOT_COMING, SLOT_WHOLE, SLOT_FAILED, SLOT_DROPPED };

struct slot {
	struct tarstream_feed feed;     /* ctx: the slot */
	struct pullahead *owner;
	struct pullahead_blob blob;
	enum slot_state state;
	int fd;                     /* HEX.part, then HEX: while COMING or WHOLE */
	uint64_t avail;             /* bytes on disk */
};

struct pullahead {
	struct ocipull *pull;
	struct slot *slots;
	size_t n, window;
	size_t dropped;             /* blobs [0, dropped) are gone (in order) */
	pullahead_progress_fn progress;
	void *ctx;
	const volatile int *cancel;
	uint64_t fetched;           /* the bytes of blobs done */
	size_t current;             /* the blob coming down */
	bool stop;                  /* the build is over: stop fetching */
	ek_error err;               /* the failed fetch's, for every reader after */
	pthread_mutex_t lock;
	pthread_cond_t changed;     /* any slot's state or bytes */
	pthread_t thread;
};

/* The fetch's progress, on its thread: the readers hear of the bytes, the
 * build's progress of the whole. */
static bool on_bytes(void *ctx, uint64_t bytes)
{
	struct pullahead *a = ctx;
	bool go;

	pthread_mutex_lock(&a->lock);
	a->slots[a->current].avail = bytes;
	go = !a->stop;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
	if (a->progress)
		a->progress(a->ctx, a->fetched + bytes);
	return go && !cancel_requested(a->cancel);
}

/* Blob i into HEX.part, renamed HEX once whole; readers read it from
 * the moment it is open. */
static int fetch_one(struct pullahead *a, size_t i)
{
	struct slot *s = &a->slots[i];
	struct oci_pull_progress progress = { on_bytes, a };
	int fd = ocipull_part_open(a->pull, s->blob.hex, &a->err), ret;

	if (fd < 0)
		return fd;
	pthread_mutex_lock(&a->lock);
	s->fd = fd;
	s->state = SLOT_COMING;
	a->current = i;
	pthread_mutex_unlock(&a->lock);
	ret = oci_pull_blob(a->pull->session, s->blob.hex, false, s->blob.size, fd, &progress,
			    &a->err);
	return ocipull_part_done(a->pull, s->blob.hex, ret, &a->err);
}

static void *fetch_main(void *arg)
{
	struct pullahead *a = arg;
	int ret = 0;

	for (size_t i = 0; i < a->n && !ret; i++) {
		/* Within the window of blobs on disk at once. */
		pthread_mutex_lock(&a->lock);
		while (!a->stop && a->window && i >= a->dropped + a->window)
			pthread_cond_wait(&a->changed, &a->lock);
		if (a->stop)
			ret = err_fail(&a->err, -ECANCELED, "%s", CANCEL_MESSAGE);
		pthread_mutex_unlock(&a->lock);
		if (!ret)
			ret = fetch_one(a, i);
		pthread_mutex_lock(&a->lock);
		if (!ret) {
			a->slots[i].state = SLOT_WHOLE;
			a->fetched += a->slots[i].avail;
		}
		/* A failure fails this blob and every one after it. */
		for (size_t j = i; ret && j < a->n; j++)
			a->slots[j].state = SLOT_FAILED;
		pthread_cond_broadcast(&a->changed);
		pthread_mutex_unlock(&a->lock);
	}
	return NULL;
}

/* The fetch's error, for one more reader. */
static int failed(struct pullahead *a, ek_error *err)
{
	int code = a->err.code ? a->err.code : -EIO;

	return err_fail(err, code, "%s", a->err.message);
}

/* The feed's open: a descriptor of the reader's own, once the blob's
 * download has begun. */
static int slot_open(void *ctx, ek_error *err)
{
	struct slot *s = ctx;
	struct pullahead *a = s->owner;
	int fd = -1, ret = 0;

	pthread_mutex_lock(&a->lock);
	while (s->state == SLOT_WAITING)
		pthread_cond_wait(&a->changed, &a->lock);
	if (s->state == SLOT_FAILED && s->fd < 0)
		ret = failed(a, err);
	else if (s->fd < 0 || (fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0)) < 0)
		ret = err_fail(err, -EBADF, "blob sha256:%s: its download is not open",
			       s->blob.hex);
	pthread_mutex_unlock(&a->lock);
	return ret ? ret : fd;
}

/* The feed's wait: until the blob holds more than have bytes, or is
 * whole. */
static int slot_wait(void *ctx, uint64_t have, uint64_t *avail, bool *whole, ek_error *err)
{
	struct slot *s = ctx;
	struct pullahead *a = s->owner;
	int ret = 0;

	pthread_mutex_lock(&a->lock);
	while (s->state == SLOT_WAITING || (s->state == SLOT_COMING && s->avail <= have))
		pthread_cond_wait(&a->changed, &a->lock);
	if (s->state == SLOT_FAILED)
		ret = failed(a, err);
	*avail = s->avail;
	*whole = s->state == SLOT_WHOLE;
	pthread_mutex_unlock(&a->lock);
	return ret;
}

int pullahead_start(struct ocipull *pull, const struct pullahead_blob *blobs, size_t n,
		    size_t window, pullahead_progress_fn progress, void *ctx,
		    const volatile int *cancel, struct pullahead **out, ek_error *err)
{
	struct pullahead *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (a)
		a->slots = calloc(n ? n : 1, sizeof(*a->slots));
	if (!a || !a->slots) {
		free(a);
		return err_fail(err, -ENOMEM, "out of memory");
	}
	a->pull = pull;
	a->n = n;
	a->window = window;
	a->progress = progress;
	a->ctx = ctx;
	a->cancel = cancel;
	for (size_t i = 0; i < n; i++) {
		struct slot *s = &a->slots[i];

		s->feed = (struct tarstream_feed){ slot_open, slot_wait, s };
		s->owner = a;
		s->blob = blobs[i];
		s->fd = -1;
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->changed, NULL);
	if (pthread_create(&a->thread, NULL, fetch_main, a)) {
		pthread_cond_destroy(&a->changed);
		pthread_mutex_destroy(&a->lock);
		free(a->slots);
		free(a);
		return err_fail(err, -EAGAIN, "cannot start a thread to fetch the layers");
	}
	*out = a;
	return 0;
}

const struct tarstream_feed *pullahead_feed(struct pullahead *a, size_t i)
{
	return &a->slots[i].feed;
}

void pullahead_drop(struct pullahead *a, size_t i)
{
	pthread_mutex_lock(&a->lock);
	if (a->slots[i].state == SLOT_WHOLE) {
		ocipull_drop_blob(a->pull, a->slots[i].blob.hex);
		a->slots[i].state = SLOT_DROPPED;
	}
	/* A blob still coming (its build failed before reading it) keeps
	 * its descriptor, which the fetch writes through, until the stop. */
	if (a->slots[i].fd >= 0 && a->slots[i].state != SLOT_COMING) {
		close(a->slots[i].fd);
		a->slots[i].fd = -1;
	}
	if (i == a->dropped)
		a->dropped++;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
}

void pullahead_stop(struct pullahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	for (size_t i = 0; i < a->n; i++)
		if (a->slots[i].fd >= 0)
			close(a->slots[i].fd);
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
	free(a->slots);
	free(a);
}
