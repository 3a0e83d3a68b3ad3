/* Warnings on stderr, safe for a terminal. */
#include <stdarg.h>
#include <stdio.h>

#include "util/warn.h"

void warn_user(const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	flockfile(stderr);
	fputs("erofskit: warning: ", stderr);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p < 0x20 || *p == 0x7F)
			fprintf(stderr, "\\x%02x", *p);
		else
			putc_unlocked(*p, stderr);
	}
	putc_unlocked('\n', stderr);
	funlockfile(stderr);
}
