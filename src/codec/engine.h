/*
 * Decompression engines: one interface with a synchronous call and a
 * batched asynchronous one, so that offload engines (QAT, IAA, GPU) plug in
 * beside the software ones without touching callers.
 *
 *   sync:  e->ops->decompress(e, req)            -> 0 or -errno, req->result
 *   async: e->ops->submit(e, reqs, n, done, ctx) -> each request completes
 *          once, with done(req, ctx) called from any thread (possibly
 *          before submit returns); nonzero: the engine took none of them.
 *          engine_run_batch() submits and waits.
 *
 * The software engine decodes every algorithm in the calling thread with
 * the decoders chosen for it (codec.h).  engine_pool_create() wraps any
 * engine with worker threads: the asynchronous call then decodes in the
 * background.
 */
#ifndef EK_CODEC_ENGINE_H
#define EK_CODEC_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "erofskit/erofskit.h"

struct engine;

typedef void (*dreq_done_fn)(struct dreq *r, void *ctx);

struct engine_ops {
	const char *name;
	int (*decompress)(struct engine *e, struct dreq *r);
	int (*submit)(struct engine *e, struct dreq *const *reqs,
		      size_t n, dreq_done_fn done, void *ctx);
	void (*destroy)(struct engine *e);
};

struct engine {
	const struct engine_ops *ops;
	struct dparams params;        /* from the image's config records */
	unsigned int workers;         /* background threads; 0: synchronous */
};

/* The software engine. */
int engine_software_create(const struct decoder_choice *decoders,
			   struct engine **out, ek_error *err);
/* Background workers around `base` (which it takes ownership of). */
int engine_pool_create(struct engine *base, unsigned int threads,
		       struct engine **out, ek_error *err);

static inline int engine_decompress(struct engine *e, struct dreq *r)
{
	return e->ops->decompress(e, r);
}

/* Submit a batch and wait until every request has completed, with
 * each(req, ctx) (may be NULL) called as soon as that request has
 * completed (from any thread), so that its result can be used before the
 * whole batch is done.  Returns the first failing request's result, or 0. */
int engine_run_batch(struct engine *e, struct dreq *const *reqs, size_t n,
		     dreq_done_fn each, void *ctx);

static inline void engine_destroy(struct engine *e)
{
	if (e)
		e->ops->destroy(e);
}

#endif
