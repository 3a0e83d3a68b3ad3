/* The software decompression engine and the batch helper. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "codec/engine.h"
#include "util/ctxpool.h"
#include "util/error.h"

struct software_engine {
	struct engine base;
	struct decoder_choice use;
	struct ctxpool ctx[EROFS_ALG_MAX];   /* each decoder's contexts */
};

static int sw_decompress(struct engine *e, struct dreq *r)
{
	struct software_engine *s = (struct software_engine *)e;
	const struct decoder *d = r->algorithm < EROFS_ALG_MAX ? s->use.use[r->algorithm] : NULL;
	void *ctx;
	int ret;

	r->result = 0;
	r->why[0] = '\0';
	if (!d)
		return dreq_fail(r, -EUCLEAN, "unknown algorithm %u", r->algorithm);
	if (!d->ctx_new)
		return d->decode(NULL, &e->params, r);
	ctx = ctxpool_get(&s->ctx[r->algorithm]);
	if (!ctx)
		return dreq_fail(r, -ENOMEM, "%s: out of memory", d->who);
	ret = d->decode(ctx, &e->params, r);
	ctxpool_put(&s->ctx[r->algorithm], ctx);
	return ret;
}

/* Without threads of its own, a batch is decoded before submit returns. */
static int sw_submit(struct engine *e, struct dreq *const *reqs,
		     size_t n, dreq_done_fn done, void *ctx)
{
	size_t i;

	for (i = 0; i < n; i++) {
		e->ops->decompress(e, reqs[i]);
		done(reqs[i], ctx);
	}
	return 0;
}

static void sw_destroy(struct engine *e)
{
	struct software_engine *s = (struct software_engine *)e;
	unsigned int alg;

	for (alg = 0; alg < EROFS_ALG_MAX; alg++)
		if (s->use.use[alg] && s->use.use[alg]->ctx_new)
			ctxpool_fini(&s->ctx[alg]);
	free(s);
}

static const struct engine_ops software_ops = {
	.name = "software",
	.decompress = sw_decompress,
	.submit = sw_submit,
	.destroy = sw_destroy,
};

int engine_software_create(const struct decoder_choice *decoders,
			   struct engine **out, ek_error *err)
{
	struct software_engine *s = calloc(1, sizeof(*s));
	unsigned int alg;

	if (!s)
		return err_fail(err, -ENOMEM, "out of memory");
	s->base.ops = &software_ops;
	s->use = *decoders;
	for (alg = 0; alg < EROFS_ALG_MAX; alg++) {
		const struct decoder *d = s->use.use[alg];

		if (d && d->ctx_new)
			ctxpool_init(&s->ctx[alg], d->ctx_new, d->ctx_free);
	}
	*out = &s->base;
	return 0;
}

struct latch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t pending;
	int first_error;
	dreq_done_fn each;
	void *each_ctx;
};

static void latch_done(struct dreq *r, void *ctx)
{
	struct latch *l = ctx;

	if (l->each)
		l->each(r, l->each_ctx);
	pthread_mutex_lock(&l->lock);
	if (r->result && !l->first_error)
		l->first_error = r->result;
	if (--l->pending == 0)
		pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

/* A request decoded on the calling thread, its result recorded as a
 * submitted one's would be. */
static int decode_here(struct engine *e, struct dreq *r)
{
	int rc = e->ops->decompress(e, r);

	if (rc && !r->result)
		r->result = rc;
	return r->result;
}

int engine_run_batch(struct engine *e, struct dreq *const *reqs, size_t n,
		     dreq_done_fn each, void *ctx)
{
	struct latch l = { .pending = n, .each = each, .each_ctx = ctx };
	size_t total = 0, bytes, split, i;
	int ret;

	if (!n)
		return 0;
	/* The caller would only wait: it decodes the last request itself
	 * (a batch of one entirely), which saves a hand-off and two thread
	 * switches per random read. */
	if (n == 1) {
		ret = decode_here(e, reqs[0]);
		if (each)
			each(reqs[0], ctx);
		return ret;
	}
	for (i = 0; i < n; i++)
		total += reqs[i]->out_len;
	/* The caller takes its share of the work from the end (it would
	 * otherwise only wait): what is left over after the workers' shares,
	 * at least the last request. */
	for (split = n - 1, bytes = reqs[n - 1]->out_len; split > 0; split--) {
		size_t next = reqs[split - 1]->out_len;

		if ((bytes + next) * (e->workers + 1) > total)
			break;
		bytes += next;
	}
	pthread_mutex_init(&l.lock, NULL);
	pthread_cond_init(&l.cond, NULL);
	/* An engine that refuses the batch took none of it: decode it here,
	 * since every request must complete. */
	if (split && e->ops->submit(e, reqs, split, latch_done, &l))
		split = 0;
	for (i = split; i < n; i++) {
		decode_here(e, reqs[i]);
		latch_done(reqs[i], &l);
	}
	pthread_mutex_lock(&l.lock);
	while (l.pending)
		pthread_cond_wait(&l.cond, &l.lock);
	pthread_mutex_unlock(&l.lock);
	ret = l.first_error;
	pthread_cond_destroy(&l.cond);
	pthread_mutex_destroy(&l.lock);
	return ret;
}
