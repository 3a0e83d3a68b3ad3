/* An archive's headers, read ahead; see tar_ahead.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "write/tar_ahead.h"

/* Headers between the reader and the caller.  The two meet (take the
 * lock, wake one another) once per BATCH: meeting per header moved the
 * lock between the cores often enough to cost what the overlap won, and
 * with 32 per meeting index mode took 1.27x cat's time on the root
 * filesystem's tar, against 1.20x with 128 (one interleaved run).  Two
 * batches of slots keep the reader busy: each slot's entry is fresh heap
 * the first time it is filled, and with 1,024 slots index mode of that
 * tar took 52 ms against 50 ms with 256 (hyperfine, alternating, on a
 * virtual machine where a page's first touch is dear). */
#define SLOTS 256u
#define BATCH 128u
/* And at most this many bytes of headers: an entry holds what its
 * headers spell out (a pax header may carry a megabyte of names and
 * xattrs), so this bounds the memory the slots hold, whatever SLOTS. */
#define HEADER_BUDGET (4u << 20)

struct slot {
	struct tar_header h;
	uint64_t header_bytes;      /* the archive's bytes it was read from */
};

struct tar_ahead {
	struct archive *a;
	bool threaded;
	struct slot slot[SLOTS];
	/* Under the lock: headers read, [0, filled); handed to the caller,
	 * [0, taken).  Slot i may be filled again once the caller has been
	 * handed slot i + 1 (it holds the one it was handed last). */
	uint64_t filled, taken;
	bool ended;                 /* filled counts the last header */
	bool stop;                  /* the caller wants no more (atomic: the
	                               reader looks before each header) */
	bool reader_waits, caller_waits;
	pthread_mutex_t lock;
	pthread_cond_t room, ready;
	pthread_t reader;
	bool reader_running;
	/* The reader's own: header bytes in slots [forgotten, i). */
	uint64_t in_flight, forgotten;
	/* The caller's own: slots handed out, and what it knows is read. */
	uint64_t next, seen_filled;
	bool seen_ended;
};

/* One header into s; true when it ends the archive. */
static bool read_one(struct tar_ahead *q, struct slot *s)
{
	struct tar_header *h = &s->h;
	int64_t end;

	/* A slot's entry is made when it is first filled: on the reader's
	 * core, and only for the slots an archive's length needs. */
	if (!h->entry && !(h->entry = libarchive.entry_new())) {
		h->status = ARCHIVE_FATAL;
		h->position = -1;
		h->data_start = UINT64_MAX;
		h->why = "out of memory";
		h->errnum = ENOMEM;
		s->header_bytes = 0;
		return true;
	}
	h->status = libarchive.read_next_header2(q->a, h->entry);
	h->position = libarchive.read_header_position(q->a);
	h->why = NULL;
	h->errnum = 0;
	end = libarchive.filter_bytes(q->a, 0);
	h->data_start = end > 0 ? (uint64_t)end : 0;
	s->header_bytes = h->position >= 0 && end > h->position ? (uint64_t)(end - h->position) : 0;
	if (h->status != ARCHIVE_OK && h->status != ARCHIVE_EOF) {
		h->why = libarchive.error_string(q->a);
		if (!h->why)
			h->why = "unknown error";
		h->errnum = libarchive.errno_of(q->a);
	}
	return h->status < ARCHIVE_WARN || h->status == ARCHIVE_EOF;
}

/* The reader, under the lock, may not fill slot i yet: it would reuse one
 * the caller has not had, or hold too many bytes. */
static bool reader_must_wait(struct tar_ahead *q, uint64_t i)
{
	for (; q->forgotten < q->taken; q->forgotten++)
		q->in_flight -= q->slot[q->forgotten % SLOTS].header_bytes;
	return i == q->taken + SLOTS - 1 || (q->in_flight > HEADER_BUDGET && q->taken < i);
}

/* Publish slots [0, i) and wait while there is no room for slot i. */
static bool reader_meet(struct tar_ahead *q, uint64_t i)
{
	/* Each meeting empties what the caller was done with at the one
	 * before (below): slots [0, forgotten - 1) are empty already. */
	uint64_t k = q->forgotten ? q->forgotten - 1 : 0;
	bool go_on;

	pthread_mutex_lock(&q->lock);
	q->filled = i;
	while (!__atomic_load_n(&q->stop, __ATOMIC_RELAXED) && reader_must_wait(q, i)) {
		q->reader_waits = true;
		/* The caller may be waiting for a full batch that will not
		 * come before it makes room. */
		if (q->caller_waits)
			pthread_cond_signal(&q->ready);
		pthread_cond_wait(&q->room, &q->lock);
	}
	q->reader_waits = false;
	if (q->caller_waits && q->filled - q->taken >= BATCH)
		pthread_cond_signal(&q->ready);
	go_on = !__atomic_load_n(&q->stop, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&q->lock);
	/* What the caller is done with (all it was handed but the last:
	 * forgotten is what it was handed, unless stopping) is freed now,
	 * not when its slot comes round again: the budget bounds what
	 * waits, this what was used.  Here rather than by the caller: this
	 * thread allocated it, and glibc frees a block from another
	 * thread's arena under that arena's lock, which the reader's next
	 * malloc then waits for.  Outside the lock: only this thread looks
	 * at forgotten, and the caller at none of these slots. */
	for (; go_on && k + 1 < q->forgotten; k++)
		if (q->slot[k % SLOTS].h.entry)
			libarchive.entry_clear(q->slot[k % SLOTS].h.entry);
	return go_on;
}

static void *reader_main(void *arg)
{
	struct tar_ahead *q = arg;
	uint64_t i = 0;
	bool last = false;

	while (!last) {
		/* After an error the caller stops the reader: at most the
		 * header under way is read past it (a pipe may be slow). */
		if (__atomic_load_n(&q->stop, __ATOMIC_RELAXED))
			return NULL;
		if ((i % BATCH == 0 || i == q->forgotten + SLOTS - 1 ||
		     q->in_flight > HEADER_BUDGET) && !reader_meet(q, i))
			return NULL;
		last = read_one(q, &q->slot[i % SLOTS]);
		q->in_flight += q->slot[i % SLOTS].header_bytes;
		i++;
	}
	pthread_mutex_lock(&q->lock);
	q->filled = i;
	q->ended = true;
	if (q->caller_waits)
		pthread_cond_signal(&q->ready);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int tar_ahead_start(struct archive *a, bool threaded, struct tar_ahead **out)
{
	struct tar_ahead *q = calloc(1, sizeof(*q));
	int ret;

	*out = NULL;
	if (!q)
		return -ENOMEM;
	q->a = a;
	if (threaded) {
		if (pthread_mutex_init(&q->lock, NULL)) {
			tar_ahead_stop(q);
			return -ENOMEM;
		}
		pthread_cond_init(&q->room, NULL);
		pthread_cond_init(&q->ready, NULL);
		q->threaded = true;
		ret = pthread_create(&q->reader, NULL, reader_main, q);
		if (ret) {
			tar_ahead_stop(q);
			return -ret;
		}
		q->reader_running = true;
	}
	*out = q;
	return 0;
}

/* The caller has used what it knew was read: tell the reader (it may be
 * waiting for room) and learn what it has read since; wait for a batch,
 * or for less when the reader waits for room, or for the end. */
static void catch_up(struct tar_ahead *q)
{
	pthread_mutex_lock(&q->lock);
	q->taken = q->next;
	if (q->reader_waits)
		pthread_cond_signal(&q->room);
	while (!q->ended && (q->filled == q->next ||
			     (q->filled - q->next < BATCH && !q->reader_waits))) {
		q->caller_waits = true;
		pthread_cond_wait(&q->ready, &q->lock);
	}
	q->caller_waits = false;
	q->seen_filled = q->filled;
	q->seen_ended = q->ended;
	pthread_mutex_unlock(&q->lock);
}

const struct tar_header *tar_ahead_next(struct tar_ahead *q)
{
	if (!q->threaded) {
		if (!q->seen_ended)
			q->seen_ended = read_one(q, &q->slot[0]);
		return &q->slot[0].h;
	}
	if (q->next == q->seen_filled) {
		/* The last header again, once the archive has ended. */
		if (q->seen_ended)
			return &q->slot[(q->next - 1) % SLOTS].h;
		catch_up(q);
	}
	return &q->slot[q->next++ % SLOTS].h;
}

void tar_ahead_stop(struct tar_ahead *q)
{
	unsigned int i;

	if (!q)
		return;
	if (q->reader_running) {
		pthread_mutex_lock(&q->lock);
		__atomic_store_n(&q->stop, true, __ATOMIC_RELAXED);
		pthread_cond_signal(&q->room);
		pthread_mutex_unlock(&q->lock);
		pthread_join(q->reader, NULL);
	}
	if (q->threaded) {
		pthread_mutex_destroy(&q->lock);
		pthread_cond_destroy(&q->room);
		pthread_cond_destroy(&q->ready);
	}
	for (i = 0; i < SLOTS; i++)
		if (q->slot[i].h.entry)
			libarchive.entry_free(q->slot[i].h.entry);
	free(q);
}
