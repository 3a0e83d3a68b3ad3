/* The encoder front: a codec's operations and their state. */
#include <errno.h>
#include <stdlib.h>

#include "codec/encoder.h"

struct encoder {
	const struct encoder_ops *ops;
	void *state;
};

int encoder_create(const struct codec *c, const struct encoder_params *p,
		   struct encoder **out)
{
	struct encoder *e = malloc(sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->ops = c->encoder;
	e->state = e->ops->create(p);
	if (!e->state) {
		free(e);
		return -ENOMEM;
	}
	*out = e;
	return 0;
}

void encoder_destroy(struct encoder *e)
{
	if (e) {
		e->ops->destroy(e->state);
		free(e);
	}
}

int encoder_fill(struct encoder *e, const uint8_t *in, size_t in_len,
		 uint8_t *out, size_t out_cap, size_t *consumed,
		 size_t *out_len, size_t *hint)
{
	if (!in_len)
		return -ENOSPC;
	return e->ops->fill(e->state, in, in_len, out, out_cap, consumed, out_len, hint);
}
