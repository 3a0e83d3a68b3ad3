/*
 * Decompression engines: one interface with a synchronous call and a
 * batched asynchronous one, so that offload engines (QAT, IAA, GPU) plug in
 * beside the software ones without touching callers.
 *
 *   sync:  e->ops->decompress(e, req)            -> 0 or -errno, req->result
 *   async: e->ops->submit(e, reqs, n, done, ctx) -> each request completes
 *          once, with done(req, ctx) called from any thread (possibly
 *          before submit returns); nonzero: the engine took none of them.
 *          ek_engine_run_batch() submits and waits.
 *
 * The software engine decodes every algorithm in the calling thread, with
 * a run-time choice of deflate decoder (libdeflate, ISA-L, zlib) and of
 * lzma decoder (ours, liblzma's).
 * ek_engine_pool_create() wraps any engine with worker threads: the
 * asynchronous call then decodes in the background.
 */
#ifndef EK_CODEC_ENGINE_H
#define EK_CODEC_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "erofskit/erofskit.h"

struct ek_engine;

typedef void (*ek_dreq_done_fn)(struct ek_dreq *r, void *ctx);

struct ek_engine_ops {
	const char *name;
	int (*decompress)(struct ek_engine *e, struct ek_dreq *r);
	int (*submit)(struct ek_engine *e, struct ek_dreq *const *reqs,
		      size_t n, ek_dreq_done_fn done, void *ctx);
	void (*destroy)(struct ek_engine *e);
};

struct ek_engine {
	const struct ek_engine_ops *ops;
	struct ek_dparams params;     /* from the image's config records */
	unsigned int workers;         /* background threads; 0: synchronous */
};

/* Which decoder each algorithm with a choice uses. */
struct ek_decoders {
	enum ek_deflate_engine deflate;
	enum ek_lzma_engine lzma;
};

/*
 * Choose the decoders by name.  A NULL or empty name takes its variable
 * ($EROFSKIT_ENGINE for deflate, $EROFSKIT_LZMA_ENGINE for lzma), else the
 * fastest: libdeflate and our own lzma decoder.
 */
int ek_decoders_choose(const char *deflate_name, const char *lzma_name,
		       struct ek_decoders *out, ek_error *err);
/*
 * The algorithm a decoder name belongs to (EK_ALG_DEFLATE or EK_ALG_LZMA)
 * and its canonical spelling, a static string; -EINVAL for a name no
 * algorithm has.
 */
int ek_decoder_lookup(const char *name, unsigned int *algorithm,
		      const char **canonical, ek_error *err);

/* The software engine. */
int ek_engine_software_create(const struct ek_decoders *decoders,
			      struct ek_engine **out, ek_error *err);
/* Background workers around `base` (which it takes ownership of). */
int ek_engine_pool_create(struct ek_engine *base, unsigned int threads,
			  struct ek_engine **out, ek_error *err);

static inline int ek_engine_decompress(struct ek_engine *e, struct ek_dreq *r)
{
	return e->ops->decompress(e, r);
}

/* Submit a batch and wait until every request has completed; returns the
 * first failing request's result, or 0. */
int ek_engine_run_batch(struct ek_engine *e, struct ek_dreq *const *reqs,
			size_t n);
/* The same, with each(req, ctx) called as soon as that request has
 * completed (from any thread), so that its result can be used before the
 * whole batch is done. */
int ek_engine_run_batch_each(struct ek_engine *e, struct ek_dreq *const *reqs,
			     size_t n, ek_dreq_done_fn each, void *ctx);

static inline void ek_engine_destroy(struct ek_engine *e)
{
	if (e)
		e->ops->destroy(e);
}

#endif
