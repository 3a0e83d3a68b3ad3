/*
 * The checker's shared state.  One walk serves both modes:
 *   - workers == 1: every job runs in the calling thread, in order;
 *   - workers > 1: directory jobs and file-data jobs run on a pool, and a
 *     directory job keeps small files for itself when handing them off
 *     would cost more than decoding them.
 * Whatever the timing, the outcome is the same: hard links are made after
 * all contents, directory metadata last (deepest first), and problems are
 * sorted before they are reported, each under the smallest path (in walk
 * order) of the inode it concerns.
 */
#ifndef EK_CHECK_CHECKER_H
#define EK_CHECK_CHECKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check/extract.h"
#include "check/nidset.h"
#include "erofskit/check.h"
#include "util/pool.h"

/* Files at most this big are decoded by the thread that found them when
 * few of them are pending: a hand-off costs more than the work. */
#define CHECK_SMALL_FILE     (256u << 10)
/* Work per job: bytes of file data. */
#define CHECK_BATCH_BYTES    (4u << 20)
/* A big file is cut into at most this many range jobs. */
#define CHECK_RANGES_MAX     256u
/* Above this many queued jobs, directory jobs stop handing work off. */
#define CHECK_QUEUE_LIMIT    256u

/* Where in a file's data a problem starts (ek_problem's fields). */
struct data_where {
	uint64_t offset, image_offset;
	const char *decoder;         /* a static name, or NULL */
};

struct problem {
	char *path;          /* entry problems: the entry's path */
	uint64_t nid;
	bool by_inode;       /* report under the inode's smallest path */
	int code;
	char *message;
	struct data_where where;
};

struct deferred_link {
	uint64_t nid;        /* of the inode to link to */
	char *path;          /* the new name (relative) */
};

struct deferred_dir {
	char *path;          /* relative; "" for the root */
	unsigned int depth;
	ek_stat st;
	struct xattr_list xl;
};

struct worker_buf {
	uint8_t *data;
	size_t cap;
};

struct checker {
	ek_image *img;
	const ek_check_options *o;
	ek_check_stats *st;
	uint32_t block_size;         /* = logical cluster size of writers */
	unsigned int workers;
	struct pool *pool;           /* NULL: single-threaded */
	struct worker_buf *bufs;     /* one per worker (index 0 inline) */

	pthread_mutex_t lock;        /* everything below */
	struct nidset seen;
	struct problem *problems;
	size_t nproblems, cap_problems;
	struct deferred_link *links;
	size_t nlinks, cap_links;
	struct deferred_dir *dirs;
	size_t ndirs, cap_dirs;
	struct deferred_link *dupdirs;   /* directories met again */
	size_t ndupdirs, cap_dupdirs;

	bool extracting;
	struct extractor x;
	atomic_bool stop;            /* an extraction failure: give up */
	ek_error fatal;

	struct pool_job *inline_head, *inline_tail;   /* single-threaded queue */

	_Atomic uint64_t bytes_done;
	_Atomic uint64_t bytes_total;
	_Atomic uint64_t inodes, directories, regular_files;
	_Atomic uint64_t io_errors;

	unsigned int fd_budget;      /* output files queued work may hold open */
	atomic_uint open_files;      /* ... and hold now */
};

/* problems.c */
void check_problem_entry(struct checker *c, const char *path, uint64_t nid,
			 int code, const char *msg);
void check_problem_inode(struct checker *c, const char *path, uint64_t nid,
			 int code, const char *msg);
/* A problem of an inode's data, at w. */
void check_problem_data(struct checker *c, const char *path, uint64_t nid,
			int code, const char *msg, const struct data_where *w);
void check_report_problems(struct checker *c);
void check_io_failure(struct checker *c, const char *path, const ek_error *e);

/* walk.c */
int check_walk(struct checker *c);

/* filedata.c: regular files' bytes.  A directory job gathers its small
 * files into a batch; big files are cut into ranges, one job each. */
struct file_batch;
/* Take ownership of inode (a regular file whose name was claimed); when
 * extracting, it is created in dirfd, its directory. */
void check_add_file(struct checker *c, unsigned int worker, int dirfd,
		    struct file_batch **batch, ek_inode *inode, const char *path,
		    struct xattr_list *xl);
/* Hand the rest of a batch off, or run it here when that is cheaper. */
void check_flush_batch(struct checker *c, unsigned int worker,
		       struct file_batch **batch);

/* descriptors.c: the budget of output descriptors (set once extract_init
 * has run, before the pool starts), taken by files whose data is queued. */
void check_plan_descriptors(struct checker *c);
bool check_take_descriptor(struct checker *c);
void check_give_descriptor(struct checker *c);

/* jobs.c: run a job on the pool, or queue it for check_drain() when
 * single-threaded. */
void check_submit(struct checker *c, struct pool_job *job, unsigned int worker);
void check_drain(struct checker *c);

/* deferred.c: record work for the end (takes the lock) ... */
int check_defer_link(struct checker *c, uint64_t nid, const char *path);
int check_defer_dupdir(struct checker *c, uint64_t nid, const char *path);
int check_defer_dir(struct checker *c, const char *path, unsigned int depth,
		    const ek_stat *st, struct xattr_list *xl);
/* ... and do it, once the walk is over. */
void check_report_dupdirs(struct checker *c);
void check_make_links(struct checker *c);
void check_finish_dirs(struct checker *c);
void check_free_deferred(struct checker *c);

#endif
