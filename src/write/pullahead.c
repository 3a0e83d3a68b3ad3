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

/* Layers coming down at once by default, each over a connection of its
 * own: a registry's CDN limits each connection's rate, and Docker and
 * containerd fetch three at a time for that reason too. */
#define DEFAULT_DOWNLOADS 3

enum slot_state { SLOT_WAITING, SLOT_COMING, SLOT_WHOLE, SLOT_FAILED, SLOT_DROPPED };

struct slot {
	struct tarstream_feed feed;     /* ctx: the slot */
	struct pullahead *owner;
	struct pullahead_blob blob;
	enum slot_state state;
	int fd;                     /* HEX.N.part, then HEX: from COMING on */
	bool writing;               /* a fetcher writes through fd */
	uint64_t avail;             /* bytes on disk */
};

/* A thread that fetches blobs, one after another, with a registry
 * session of its own. */
struct fetcher {
	struct pullahead *owner;
	struct oci_pull *session;   /* the first fetcher's is the pull's */
	size_t blob;                /* the one coming down */
	ek_error err;
	pthread_t thread;
};

struct pullahead {
	struct ocipull *pull;
	struct slot *slots;
	size_t n, window;
	size_t next;                /* the next blob to start */
	size_t dropped;             /* blobs [0, dropped) are gone (in order) */
	pullahead_progress_fn progress;
	void *ctx;
	const volatile int *cancel;
	uint64_t fetched;           /* the bytes on disk, of all blobs */
	bool stop;                  /* the build is over: stop fetching */
	size_t failed_from;         /* blobs from here on fail (n: none) */
	ek_error err;               /* why blob failed_from failed, for its readers */
	struct fetcher *fetchers;
	size_t nfetchers;
	pthread_mutex_t lock;
	pthread_cond_t changed;     /* any slot's state or bytes */
	/* Progress is told outside lock (the caller's callback may take its
	 * time; readers wait on lock), newest first: a total counted before
	 * one already told is not told after it. */
	pthread_mutex_t report_lock;
	uint64_t counted, told;     /* totals counted (under lock) and told */
};

/* A fetch's progress, on its thread: the readers hear of the bytes, the
 * build's progress of the whole, in the order the totals were counted
 * (two fetchers reporting at once must not make it go back). */
static bool on_bytes(void *ctx, uint64_t bytes)
{
	struct fetcher *f = ctx;
	struct pullahead *a = f->owner;
	struct slot *s = &a->slots[f->blob];
	uint64_t fetched, count;
	bool go;

	pthread_mutex_lock(&a->lock);
	/* (A download started again, a 200 to a Range, counts down.) */
	a->fetched = a->fetched - s->avail + bytes;
	s->avail = bytes;
	fetched = a->fetched;
	count = ++a->counted;
	go = !a->stop && f->blob < a->failed_from;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
	if (a->progress) {
		pthread_mutex_lock(&a->report_lock);
		if (count > a->told) {
			a->told = count;
			a->progress(a->ctx, fetched);
		}
		pthread_mutex_unlock(&a->report_lock);
	}
	return go && !cancel_requested(a->cancel);
}

/* Blob i into HEX.(i+1).part, renamed HEX once whole; readers read it from
 * the moment it is open. */
static int fetch_one(struct fetcher *f, size_t i)
{
	struct pullahead *a = f->owner;
	struct slot *s = &a->slots[i];
	struct oci_pull_progress progress = { on_bytes, f };
	/* (Its own file: an image may list a blob twice, and both may come
	 * down at once.) */
	unsigned int which = (unsigned int)(i + 1);
	int fd = ocipull_part_open(a->pull, s->blob.hex, which, &f->err), ret;
	bool stopped;

	if (fd < 0)
		return fd;
	pthread_mutex_lock(&a->lock);
	/* (An earlier blob's fetch may have failed since this one took it.) */
	stopped = a->stop || i >= a->failed_from;
	if (!stopped) {
		s->fd = fd;
		s->writing = true;
		s->state = SLOT_COMING;
	}
	pthread_mutex_unlock(&a->lock);
	if (stopped) {
		close(fd);
		ret = err_fail(&f->err, -ECANCELED, "%s", CANCEL_MESSAGE);
	} else {
		ret = oci_pull_blob(f->session, s->blob.hex, false, s->blob.size, fd, &progress,
				    &f->err);
	}
	ret = ocipull_part_done(a->pull, s->blob.hex, which, ret, &f->err);
	pthread_mutex_lock(&a->lock);
	s->writing = false;
	pthread_mutex_unlock(&a->lock);
	return ret;
}

/*
 * Blob i's fetch failed (or was stopped): it and every blob after it not
 * yet whole fail, as they would fetched one after another, since the
 * build reads them in order and stops at the first it cannot have.  The
 * blobs before it still come down.  The earliest failure's error is the
 * one told: a fetch that one stopped says only that it was.  Under the
 * lock.
 */
static void fail_from(struct pullahead *a, size_t i, const ek_error *why)
{
	if (i >= a->failed_from)
		return;
	a->failed_from = i;
	a->err = *why;
	for (size_t j = i; j < a->n; j++)
		if (a->slots[j].state == SLOT_WAITING || a->slots[j].state == SLOT_COMING)
			a->slots[j].state = SLOT_FAILED;
}

static void *fetch_main(void *arg)
{
	struct fetcher *f = arg;
	struct pullahead *a = f->owner;
	int ret = 0;

	pthread_mutex_lock(&a->lock);
	while (!ret) {
		/* The next blob, within the window of blobs on disk at once. */
		while (!a->stop && a->next < a->failed_from && a->window &&
		       a->next >= a->dropped + a->window)
			pthread_cond_wait(&a->changed, &a->lock);
		if (a->next >= a->failed_from)
			break;
		f->blob = a->next++;
		if (a->stop) {
			ret = err_fail(&f->err, -ECANCELED, "%s", CANCEL_MESSAGE);
			break;
		}
		pthread_mutex_unlock(&a->lock);
		ret = fetch_one(f, f->blob);
		pthread_mutex_lock(&a->lock);
		if (!ret && a->slots[f->blob].state == SLOT_COMING)
			a->slots[f->blob].state = SLOT_WHOLE;
		pthread_cond_broadcast(&a->changed);
	}
	if (ret) {
		fail_from(a, f->blob, &f->err);
		pthread_cond_broadcast(&a->changed);
	}
	pthread_mutex_unlock(&a->lock);
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

/* Join the fetchers started, end the sessions made for them. */
static void join_fetchers(struct pullahead *a)
{
	for (size_t k = 0; k < a->nfetchers; k++) {
		pthread_join(a->fetchers[k].thread, NULL);
		if (k)
			oci_pull_end(a->fetchers[k].session);
	}
	a->nfetchers = 0;
}

static void pullahead_free(struct pullahead *a)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->slots[i].fd >= 0)
			close(a->slots[i].fd);
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->report_lock);
	free(a->fetchers);
	free(a->slots);
	free(a);
}

/* As many fetchers as there may be blobs coming down at once (downloads,
 * within the window), the first with the pull's session, each other with
 * one of its own. */
static int start_fetchers(struct pullahead *a, size_t downloads, ek_error *err)
{
	size_t want = downloads ? downloads : DEFAULT_DOWNLOADS;
	int ret = 0;

	/* (Each is a thread and a connection, whatever a caller asks.) */
	if (want > EK_HTTP_DOWNLOADS_MAX)
		want = EK_HTTP_DOWNLOADS_MAX;
	if (a->window && want > a->window)
		want = a->window;
	if (want > a->n)
		want = a->n;
	a->fetchers = calloc(want ? want : 1, sizeof(*a->fetchers));
	if (!a->fetchers)
		return err_fail(err, -ENOMEM, "out of memory");
	for (size_t k = 0; !ret && k < want; k++) {
		struct fetcher *f = &a->fetchers[k];

		f->owner = a;
		f->session = a->pull->session;
		if (k)
			ret = ocipull_session(a->pull, &f->session, err);
		if (!ret && pthread_create(&f->thread, NULL, fetch_main, f)) {
			if (k)
				oci_pull_end(f->session);
			ret = err_fail(err, -EAGAIN, "cannot start a thread to fetch the layers");
		}
		if (!ret)
			a->nfetchers++;
	}
	return ret;
}

int pullahead_start(struct ocipull *pull, const struct pullahead_blob *blobs, size_t n,
		    size_t window, size_t downloads, pullahead_progress_fn progress, void *ctx,
		    const volatile int *cancel, struct pullahead **out, ek_error *err)
{
	struct pullahead *a = calloc(1, sizeof(*a));
	int ret;

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
	a->failed_from = n;
	for (size_t i = 0; i < n; i++) {
		struct slot *s = &a->slots[i];

		s->feed = (struct tarstream_feed){ slot_open, slot_wait, s };
		s->owner = a;
		s->blob = blobs[i];
		s->fd = -1;
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->report_lock, NULL);
	pthread_cond_init(&a->changed, NULL);
	ret = start_fetchers(a, downloads, err);
	if (ret) {
		pullahead_stop(a);
		return ret;
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
	if (a->slots[i].fd >= 0 && !a->slots[i].writing) {
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
	join_fetchers(a);
	pullahead_free(a);
}
