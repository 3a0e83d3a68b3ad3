/* Error records and code descriptions. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

int err_fail(ek_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return code;
}

void err_prefix(ek_error *err, const char *fmt, ...)
{
	char head[EK_ERROR_MESSAGE_MAX], tail[EK_ERROR_MESSAGE_MAX];
	va_list ap;
	size_t hl;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(tail, err->message, sizeof(tail));
	tail[sizeof(tail) - 1] = '\0';
	hl = strnlen(head, sizeof(err->message) - 1);
	memcpy(err->message, head, hl);
	snprintf(err->message + hl, sizeof(err->message) - hl, "%.*s",
		 (int)(sizeof(err->message) - hl - 1), tail);
}

const char *ek_strerror(int code)
{
	switch (code) {
	case 0: return "success";
	case -EUCLEAN: return "image is corrupt";
	case -EOPNOTSUPP: return "unsupported feature";
	case -ENOENT: return "no such file or directory";
	case -ENOTDIR: return "not a directory";
	case -EISDIR: return "is a directory";
	case -EINVAL: return "invalid argument";
	case -ENODATA: return "no such attribute";
	case -ERANGE: return "buffer too small";
	case -ENOMEM: return "out of memory";
	case -EIO: return "input/output error";
	case -EFBIG: return "file too large";
	default: return strerror(code < 0 ? -code : code);
	}
}

int ek_is_image_error(int code)
{
	return code == -EUCLEAN || code == -EOPNOTSUPP;
}

const char *ek_version(void)
{
	return EK_VERSION;
}
