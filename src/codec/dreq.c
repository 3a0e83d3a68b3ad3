/* Decode requests: how a decoder reports what was wrong. */
#include <stdarg.h>
#include <stdio.h>

#include "codec/codec.h"

int dreq_fail(struct dreq *r, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->result = code;
	return code;
}
