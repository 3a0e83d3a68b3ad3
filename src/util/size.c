/*
 * Sizes as users spell them: "65536", "64K", "64KiB", "1M", "0x10000".
 * One parser for the library's option strings (-E..., -z...,dictsize=)
 * and the tools' arguments, so that a size written one way on the
 * command line is never refused another way.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "erofskit/erofskit.h"

/* The suffixes, powers of two as every tool of the kind reads them. */
static unsigned int suffix_shift(char c)
{
	switch (c) {
	case 'k': case 'K': return 10;
	case 'm': case 'M': return 20;
	case 'g': case 'G': return 30;
	default: return 0;
	}
}

int ek_parse_size(const char *text, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift;
	char *end;

	/* strtoull would take leading blanks and a minus sign ("-1" is
	 * ULLONG_MAX): a size starts with a digit. */
	if (!text || !isdigit((unsigned char)text[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno || end == text)
		return -EINVAL;
	shift = suffix_shift(*end);
	if (shift)
		end++;
	if (shift && *end == 'i')   /* KiB, MiB, GiB */
		end++;
	if (*end == 'B')
		end++;
	if (*end || v > (~0ull >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}
