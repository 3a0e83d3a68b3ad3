/* Filling an ek_error: a code plus a message naming what is wrong. */
#ifndef EK_UTIL_ERROR_H
#define EK_UTIL_ERROR_H

#include "erofskit/erofskit.h"

/* Record code and message in err (if not NULL) and return code. */
int err_fail(ek_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepend context ("path: ") to an error already recorded. */
void err_prefix(ek_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void err_clear(ek_error *err)
{
	if (err) {
		err->code = 0;
		err->message[0] = '\0';
	}
}

#endif
