/* The software decompression engine and the batch helper. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/ctxpool.h"
#include "codec/engine.h"
#include "util/error.h"

int dreq_fail(struct ek_dreq *r, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->result = code;
	return code;
}

/* Every decoder name, and the algorithm and choice it stands for. */
static const struct decoder_name {
	const char *name;
	unsigned int algorithm;
	unsigned int choice;
} decoder_names[] = {
	{ "libdeflate", EK_ALG_DEFLATE, EK_DEFLATE_LIBDEFLATE },
	{ "isal", EK_ALG_DEFLATE, EK_DEFLATE_ISAL },
	{ "zlib", EK_ALG_DEFLATE, EK_DEFLATE_ZLIB },
	{ "builtin", EK_ALG_LZMA, EK_LZMA_BUILTIN },
	{ "liblzma", EK_ALG_LZMA, EK_LZMA_LIBLZMA },
};
#define DEFLATE_NAMES "libdeflate, isal or zlib"
#define LZMA_NAMES "builtin or liblzma"
#define DECODER_NAMES DEFLATE_NAMES " for deflate; " LZMA_NAMES " for lzma"

static const struct decoder_name *find_decoder(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(decoder_names) / sizeof(decoder_names[0]); i++)
		if (!strcmp(name, decoder_names[i].name))
			return &decoder_names[i];
	return NULL;
}

int ek_decoder_lookup(const char *name, unsigned int *algorithm,
		      const char **canonical, ek_error *err)
{
	const struct decoder_name *d = name ? find_decoder(name) : NULL;

	if (!d)
		return ek_fail(err, -EINVAL, "unknown decoder '%s' (" DECODER_NAMES ")",
			       name ? name : "");
	*algorithm = d->algorithm;
	*canonical = d->name;
	return 0;
}

/* One algorithm's choice: the name given, else the variable; with
 * neither, *out (the default) is left as it is.  `source` names where a
 * bad name came from. */
static int choose_one(const char *name, const char *variable, unsigned int algorithm,
		      unsigned int *out, ek_error *err)
{
	const char *source = NULL;
	const struct decoder_name *d;

	if (!name || !*name) {
		name = getenv(variable);
		source = variable;
	}
	if (!name || !*name)
		return 0;
	d = find_decoder(name);
	if (!d || d->algorithm != algorithm)
		return ek_fail(err, -EINVAL, "%s%sunknown %s decoder '%s' (%s)",
			       source ? source : "", source ? ": " : "",
			       algorithm == EK_ALG_LZMA ? "lzma" : "deflate", name,
			       algorithm == EK_ALG_LZMA ? LZMA_NAMES : DEFLATE_NAMES);
	*out = d->choice;
	return 0;
}

int ek_decoders_choose(const char *deflate_name, const char *lzma_name,
		       struct ek_decoders *out, ek_error *err)
{
	/* The defaults, measured fastest: libdeflate on deflate-9 clusters,
	 * and our lzma decoder (1.1x liblzma's on a root filesystem's). */
	unsigned int deflate = EK_DEFLATE_LIBDEFLATE, lzma = EK_LZMA_BUILTIN;
	int ret = choose_one(deflate_name, "EROFSKIT_ENGINE", EK_ALG_DEFLATE, &deflate, err);

	if (!ret)
		ret = choose_one(lzma_name, "EROFSKIT_LZMA_ENGINE", EK_ALG_LZMA, &lzma, err);
	if (ret)
		return ret;
	out->deflate = (enum ek_deflate_engine)deflate;
	out->lzma = (enum ek_lzma_engine)lzma;
	return 0;
}

struct software_engine {
	struct ek_engine base;
	struct ek_decoders use;
	struct ctxpool lzma, zstd, inflate;
};

static int sw_decompress(struct ek_engine *e, struct ek_dreq *r)
{
	struct software_engine *s = (struct software_engine *)e;

	r->result = 0;
	r->why[0] = '\0';
	switch (r->algorithm) {
	case EK_ALG_LZ4:
		return lz4_decode(r);
	case EK_ALG_LZMA:
		if (s->use.lzma == EK_LZMA_LIBLZMA)
			return lzma_decode(&s->lzma, &e->params, r);
		return microlzma_decode(&s->lzma, &e->params, r);
	case EK_ALG_ZSTD:
		return zstd_decode(&s->zstd, &e->params, r);
	case EK_ALG_DEFLATE:
		switch (s->use.deflate) {
		case EK_DEFLATE_ISAL:
			return deflate_decode_isal(&s->inflate, r);
		case EK_DEFLATE_ZLIB:
			return deflate_decode_zlib(&s->inflate, r);
		default:
			return deflate_decode_libdeflate(&s->inflate, r);
		}
	default:
		return dreq_fail(r, -EUCLEAN, "unknown algorithm %u", r->algorithm);
	}
}

/* Without threads of its own, a batch is decoded before submit returns. */
static int sw_submit(struct ek_engine *e, struct ek_dreq *const *reqs,
		     size_t n, ek_dreq_done_fn done, void *ctx)
{
	size_t i;

	for (i = 0; i < n; i++) {
		e->ops->decompress(e, reqs[i]);
		done(reqs[i], ctx);
	}
	return 0;
}

static void sw_destroy(struct ek_engine *e)
{
	struct software_engine *s = (struct software_engine *)e;

	ctxpool_fini(&s->lzma);
	ctxpool_fini(&s->zstd);
	ctxpool_fini(&s->inflate);
	free(s);
}

static const struct ek_engine_ops software_ops = {
	.name = "software",
	.decompress = sw_decompress,
	.submit = sw_submit,
	.destroy = sw_destroy,
};

int ek_engine_software_create(const struct ek_decoders *decoders,
			      struct ek_engine **out, ek_error *err)
{
	struct software_engine *s = calloc(1, sizeof(*s));

	if (!s)
		return ek_fail(err, -ENOMEM, "out of memory");
	s->base.ops = &software_ops;
	s->use = *decoders;
	if (decoders->lzma == EK_LZMA_LIBLZMA)
		ctxpool_init(&s->lzma, lzma_ctx_new, lzma_ctx_free);
	else
		ctxpool_init(&s->lzma, microlzma_ctx_new, microlzma_ctx_free);
	ctxpool_init(&s->zstd, zstd_ctx_new, zstd_ctx_free);
	switch (decoders->deflate) {
	case EK_DEFLATE_ISAL:
		ctxpool_init(&s->inflate, deflate_isal_ctx_new, deflate_isal_ctx_free);
		break;
	case EK_DEFLATE_ZLIB:
		ctxpool_init(&s->inflate, deflate_zlib_ctx_new, deflate_zlib_ctx_free);
		break;
	default:
		ctxpool_init(&s->inflate, deflate_libdeflate_ctx_new,
			     deflate_libdeflate_ctx_free);
		break;
	}
	*out = &s->base;
	return 0;
}

struct latch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t pending;
	int first_error;
	ek_dreq_done_fn each;
	void *each_ctx;
};

static void latch_done(struct ek_dreq *r, void *ctx)
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
static int decode_here(struct ek_engine *e, struct ek_dreq *r)
{
	int rc = e->ops->decompress(e, r);

	if (rc && !r->result)
		r->result = rc;
	return r->result;
}

int ek_engine_run_batch(struct ek_engine *e, struct ek_dreq *const *reqs,
			size_t n)
{
	return ek_engine_run_batch_each(e, reqs, n, NULL, NULL);
}

int ek_engine_run_batch_each(struct ek_engine *e, struct ek_dreq *const *reqs,
			     size_t n, ek_dreq_done_fn each, void *ctx)
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
