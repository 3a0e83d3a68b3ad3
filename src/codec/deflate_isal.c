/* DEFLATE with ISA-L's inflate. */
#include <errno.h>
#include <isa-l/igzip_lib.h>
#include <stdlib.h>

#include "codec/codec.h"

#define WHO "deflate (isa-l)"

static void *isal_ctx_new(void)
{
	return malloc(sizeof(struct inflate_state));
}

static int isal_decode(void *ctx, const struct dparams *p, struct dreq *r)
{
	struct inflate_state *s = ctx;
	int ret;

	(void)p;
	isal_inflate_init(s);
	s->crc_flag = ISAL_DEFLATE;   /* raw stream, no header */
	s->next_in = (uint8_t *)r->in;
	s->avail_in = (uint32_t)r->in_len;
	s->next_out = r->out;
	s->avail_out = (uint32_t)r->out_len;
	ret = isal_inflate(s);
	if (ret != ISAL_DECOMP_OK)
		return dreq_fail(r, -EUCLEAN, WHO ": malformed stream (%d)", ret);
	if (s->avail_out != 0)
		return dreq_fail(r, -EUCLEAN, WHO ": stream decodes to %zu bytes, expected %zu",
				 r->out_len - s->avail_out, r->out_len);
	if (!r->partial && s->block_state != ISAL_BLOCK_FINISH)
		return dreq_fail(r, -EUCLEAN, WHO ": stream continues past %zu bytes",
				 r->out_len);
	return 0;
}

const struct decoder isal_decoder = {
	.name = "isal",
	.who = WHO,
	.ctx_new = isal_ctx_new,
	.ctx_free = free,
	.decode = isal_decode,
};
