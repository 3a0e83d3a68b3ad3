/* Header values as servers send them. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/httpparse.h"

void http_header_value(const char *v, size_t len, char *out, size_t size)
{
	while (len && (*v == ' ' || *v == '\t'))
		v++, len--;
	while (len && (v[len - 1] == '\r' || v[len - 1] == '\n' ||
		       v[len - 1] == ' ' || v[len - 1] == '\t'))
		len--;
	if (len >= size)
		len = size - 1;
	memcpy(out, v, len);
	out[len] = '\0';
}

/* Digits only (strtoull alone takes signs and blanks), no overflow. */
static bool number(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return true;
}

bool http_content_range(const char *v, uint64_t *first, uint64_t *last, uint64_t *total)
{
	if (strncasecmp(v, "bytes ", 6))
		return false;
	v += 6;
	if (!number(&v, first) || *v++ != '-' || !number(&v, last) || *v++ != '/' ||
	    !number(&v, total))
		return false;
	return *v == '\0' && *first <= *last && *last < *total;
}

bool http_challenge_param(const char *c, const char *name, char *out, size_t size)
{
	size_t nl = strlen(name);
	const char *p = c;

	while ((p = strcasestr(p, name))) {
		bool starts = p == c || p[-1] == ' ' || p[-1] == ',';
		size_t i = 0;

		p += nl;
		if (!starts || *p != '=')
			continue;
		p++;
		if (*p == '"') {
			for (p++; *p && *p != '"' && i + 1 < size; p++)
				out[i++] = *p;
		} else {
			for (; *p && *p != ',' && *p != ' ' && i + 1 < size; p++)
				out[i++] = *p;
		}
		out[i] = '\0';
		return true;
	}
	return false;
}
