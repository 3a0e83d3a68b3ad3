/*
 * The worker-pool engine: any engine's synchronous call, run on background
 * threads, behind the asynchronous batch interface.  A hardware engine
 * would implement submit() with its own queues instead.
 */
#include <errno.h>
#include <stdlib.h>

#include "codec/engine.h"
#include "util/error.h"
#include "util/pool.h"

struct pool_engine {
	struct ek_engine base;
	struct ek_engine *inner;
	struct pool *pool;
};

struct decode_job {
	struct pool_job job;
	struct pool_engine *e;
	struct ek_dreq *req;
	ek_dreq_done_fn done;
	void *ctx;
};

static int pe_decompress(struct ek_engine *e, struct ek_dreq *r)
{
	struct pool_engine *p = (struct pool_engine *)e;

	return p->inner->ops->decompress(p->inner, r);
}

static void run_decode(struct pool_job *job, unsigned int worker)
{
	struct decode_job *d = (struct decode_job *)job;

	(void)worker;
	d->e->inner->ops->decompress(d->e->inner, d->req);
	d->done(d->req, d->ctx);
	free(d);
}

static int pe_submit(struct ek_engine *e, struct ek_dreq *const *reqs, size_t n,
		     ek_dreq_done_fn done, void *ctx)
{
	struct pool_engine *p = (struct pool_engine *)e;
	size_t i;

	for (i = 0; i < n; i++) {
		struct decode_job *d = malloc(sizeof(*d));

		if (!d) {
			/* Decode it here rather than lose it. */
			p->inner->ops->decompress(p->inner, reqs[i]);
			done(reqs[i], ctx);
			continue;
		}
		d->job.run = run_decode;
		d->job.detached = true;
		d->e = p;
		d->req = reqs[i];
		d->done = done;
		d->ctx = ctx;
		pool_submit(p->pool, &d->job);
	}
	return 0;
}

static void pe_destroy(struct ek_engine *e)
{
	struct pool_engine *p = (struct pool_engine *)e;

	pool_destroy(p->pool);
	ek_engine_destroy(p->inner);
	free(p);
}

static const struct ek_engine_ops pool_ops = {
	.name = "worker-pool",
	.decompress = pe_decompress,
	.submit = pe_submit,
	.destroy = pe_destroy,
};

int ek_engine_pool_create(struct ek_engine *base, unsigned int threads,
			  struct ek_engine **out, ek_error *err)
{
	struct pool_engine *p = calloc(1, sizeof(*p));

	if (!p)
		return ek_fail(err, -ENOMEM, "out of memory");
	if (pool_create(threads ? threads : 1, &p->pool)) {
		free(p);
		return ek_fail(err, -EAGAIN, "cannot start %u decompression threads", threads);
	}
	p->base.ops = &pool_ops;
	p->base.params = base->params;
	p->inner = base;
	*out = &p->base;
	return 0;
}
