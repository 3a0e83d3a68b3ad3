/*
 * The worker-pool engine: any engine's synchronous call, run on background
 * threads, behind the asynchronous batch interface.  A hardware engine
 * would implement submit() with its own queues instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec/engine.h"
#include "util/error.h"
#include "util/pool.h"

struct pool_engine {
	struct engine base;
	struct engine *inner;
	struct pool *pool;
};

/* A run of consecutive requests, decoded in order on one worker: at
 * small clusters one hand-off per request would cost more than decoding. */
#define JOB_BYTES (128u << 10)

struct decode_job {
	struct pool_job job;
	struct pool_engine *e;
	dreq_done_fn done;
	void *ctx;
	size_t n;
	struct dreq *reqs[];
};

static int pe_decompress(struct engine *e, struct dreq *r)
{
	struct pool_engine *p = (struct pool_engine *)e;

	return p->inner->ops->decompress(p->inner, r);
}

static void run_decode(struct pool_job *job, unsigned int worker)
{
	struct decode_job *d = (struct decode_job *)job;
	size_t i;

	(void)worker;
	for (i = 0; i < d->n; i++) {
		d->e->inner->ops->decompress(d->e->inner, d->reqs[i]);
		d->done(d->reqs[i], d->ctx);
	}
	free(d);
}

/* The batch goes out as jobs of consecutive requests of about JOB_BYTES
 * of output (the work) each, fewer when that would leave a worker idle,
 * and at least one request each: small requests are grouped, large ones
 * go out one by one, so that the batch completes roughly in order. */
static int pe_submit(struct engine *e, struct dreq *const *reqs, size_t n,
		     dreq_done_fn done, void *ctx)
{
	struct pool_engine *p = (struct pool_engine *)e;
	size_t total = 0, share, i = 0, k;

	for (k = 0; k < n; k++)
		total += reqs[k]->out_len;
	share = total / e->workers + 1;
	if (share > JOB_BYTES)
		share = JOB_BYTES;
	while (i < n) {
		size_t bytes = 0, run = 0;
		struct decode_job *d;

		while (i + run < n && (run == 0 || bytes < share))
			bytes += reqs[i + run++]->out_len;
		d = malloc(sizeof(*d) + run * sizeof(d->reqs[0]));
		if (!d) {
			/* Decode them here rather than lose them. */
			for (k = i; k < i + run; k++) {
				p->inner->ops->decompress(p->inner, reqs[k]);
				done(reqs[k], ctx);
			}
		} else {
			d->job.run = run_decode;
			d->job.detached = true;
			d->e = p;
			d->done = done;
			d->ctx = ctx;
			d->n = run;
			memcpy(d->reqs, reqs + i, run * sizeof(d->reqs[0]));
			pool_submit(p->pool, &d->job);
		}
		i += run;
	}
	return 0;
}

static void pe_destroy(struct engine *e)
{
	struct pool_engine *p = (struct pool_engine *)e;

	pool_destroy(p->pool);
	engine_destroy(p->inner);
	free(p);
}

static const struct engine_ops pool_ops = {
	.name = "worker-pool",
	.decompress = pe_decompress,
	.submit = pe_submit,
	.destroy = pe_destroy,
};

int engine_pool_create(struct engine *base, unsigned int threads,
			  struct engine **out, ek_error *err)
{
	struct pool_engine *p = calloc(1, sizeof(*p));

	if (!p)
		return err_fail(err, -ENOMEM, "out of memory");
	if (pool_create(threads ? threads : 1, &p->pool)) {
		free(p);
		return err_fail(err, -EAGAIN, "cannot start %u decompression threads", threads);
	}
	p->base.ops = &pool_ops;
	p->base.params = base->params;
	p->base.workers = threads ? threads : 1;
	p->inner = base;
	*out = &p->base;
	return 0;
}
