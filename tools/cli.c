/* Shared helpers of the subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static void vmessage(const char *cmd, const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "erofskit %s: %s", cmd, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(cmd, "", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(cmd, "warning: ", fmt, ap);
	va_end(ap);
}

bool cli_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (*end == 'B')
		end++;
	if (*end || (shift && v > (~0ull >> shift)))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

bool cli_parse_int(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_init(struct cli_progress *p, const char *what)
{
	memset(p, 0, sizeof(*p));
	p->enabled = isatty(STDERR_FILENO);
	p->what = what;
	p->start = p->last = cli_now();
}

void cli_progress_update(struct cli_progress *p, uint64_t done, uint64_t total)
{
	double now, rate;

	if (!p->enabled)
		return;
	now = cli_now();
	if (now - p->last < 0.1)
		return;
	p->last = now;
	rate = now > p->start ? (double)done / (now - p->start) / 1048576.0 : 0;
	if (total)
		fprintf(stderr, "\r%s: %.1f / %.1f MiB (%3.0f%%), %.1f MiB/s   ", p->what,
			(double)done / 1048576.0, (double)total / 1048576.0,
			100.0 * (double)done / (double)total, rate);
	else
		fprintf(stderr, "\r%s: %.1f MiB, %.1f MiB/s   ", p->what,
			(double)done / 1048576.0, rate);
	p->drawn = true;
}

void cli_progress_done(struct cli_progress *p)
{
	if (p->drawn)
		fputs("\r\033[K", stderr);
	p->drawn = false;
}

void cli_json_string(FILE *f, const char *s, size_t len)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7F)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);   /* UTF-8 passes through; other bytes too */
	}
	fputc('"', f);
}
