/* DEFLATE with ISA-L's inflate. */
#include <errno.h>
#include <isa-l/igzip_lib.h>
#include <stdlib.h>

#include "codec/codec.h"
#include "codec/ctxpool.h"

void *deflate_isal_ctx_new(void)
{
	return malloc(sizeof(struct inflate_state));
}

void deflate_isal_ctx_free(void *c)
{
	free(c);
}

int deflate_decode_isal(struct ctxpool *pool, struct ek_dreq *r)
{
	struct inflate_state *s = ctxpool_get(pool);
	int ret, code = 0;

	if (!s)
		return dreq_fail(r, -ENOMEM, "deflate (isa-l): out of memory");
	isal_inflate_init(s);
	s->crc_flag = ISAL_DEFLATE;   /* raw stream, no header */
	s->next_in = (uint8_t *)r->in;
	s->avail_in = (uint32_t)r->in_len;
	s->next_out = r->out;
	s->avail_out = (uint32_t)r->out_len;
	ret = isal_inflate(s);
	if (ret != ISAL_DECOMP_OK)
		code = dreq_fail(r, -EUCLEAN, "deflate (isa-l): malformed stream (%d)", ret);
	else if (s->avail_out != 0)
		code = dreq_fail(r, -EUCLEAN, "deflate (isa-l): stream decodes to %zu bytes, expected %zu",
				 r->out_len - s->avail_out, r->out_len);
	else if (!r->partial && s->block_state != ISAL_BLOCK_FINISH)
		code = dreq_fail(r, -EUCLEAN, "deflate (isa-l): stream continues past %zu bytes",
				 r->out_len);
	ctxpool_put(pool, s);
	return code;
}
