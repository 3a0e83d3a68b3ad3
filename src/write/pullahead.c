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

/* Blob i into HEX.part, renamed HEX once whole. */
static int fetch_one(struct pullahead *a, size_t i)
{
	struct slot *s = &a->slots[i];
	struct oci_pull_progress progress = { on_bytes, a };
	char path[128], part[140];
	int fd, ret;

	oci_blob_path(s->blob.hex, path, sizeof(path));
	snprintf(part, sizeof(part), "%s.part", path);
	fd = openat(a->pull->dirfd, part, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_fail(&a->err, -errno, "the scratch layout's %s: %s", part,
				strerror(errno));
	pthread_mutex_lock(&a->lock);
	s->fd = fd;
	s->state = SLOT_COMING;
	a->current = i;
	pthread_mutex_unlock(&a->lock);
	ret = oci_pull_blob(a->pull->session, s->blob.hex, false, s->blob.size, fd, &progress,
			    &a->err);
	if (!ret && renameat(a->pull->dirfd, part, a->pull->dirfd, path) < 0)
		ret = err_fail(&a->err, -errno, "the scratch layout's %s: %s", path,
			       strerror(errno));
	if (ret)
		unlinkat(a->pull->dirfd, part, 0);
	return ret;
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
		a->slots[i].blob = blobs[i];
		a->slots[i].fd = -1;
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

/* The fetch's error, for one more reader. */
static int failed(struct pullahead *a, ek_error *err)
{
	int code = a->err.code ? a->err.code : -EIO;

	return err_fail(err, code, "%s", a->err.message);
}

int pullahead_open(struct pullahead *a, size_t i, ek_error *err)
{
	int fd = -1, ret = 0;

	pthread_mutex_lock(&a->lock);
	while (a->slots[i].state == SLOT_WAITING)
		pthread_cond_wait(&a->changed, &a->lock);
	if (a->slots[i].state == SLOT_FAILED && a->slots[i].fd < 0)
		ret = failed(a, err);
	else if (a->slots[i].fd < 0 || (fd = fcntl(a->slots[i].fd, F_DUPFD_CLOEXEC, 0)) < 0)
		ret = err_fail(err, -EBADF, "layer %zu: its download is not open", i + 1);
	pthread_mutex_unlock(&a->lock);
	return ret ? ret : fd;
}

int pullahead_wait(struct pullahead *a, size_t i, uint64_t have, uint64_t *avail, bool *whole,
		   ek_error *err)
{
	struct slot *s = &a->slots[i];
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

void pullahead_drop(struct pullahead *a, size_t i)
{
	char path[128];

	pthread_mutex_lock(&a->lock);
	if (a->slots[i].state == SLOT_WHOLE) {
		oci_blob_path(a->slots[i].blob.hex, path, sizeof(path));
		unlinkat(a->pull->dirfd, path, 0);
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
