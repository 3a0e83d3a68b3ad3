/* What ondisk.h declares out of line: the reason (fmt_why) a decoder gives
 * when it rejects a field. */
#include <stdarg.h>
#include <stdio.h>

#include "format/ondisk.h"

void fmt_why_set(fmt_why *why, const char *fmt, ...)
{
	va_list ap;

	if (!why)
		return;
	va_start(ap, fmt);
	vsnprintf(why->text, sizeof(why->text), fmt, ap);
	va_end(ap);
}
