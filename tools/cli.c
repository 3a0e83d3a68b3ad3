/* Shared helpers of the subcommands. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "erofskit/erofskit.h"

static void vmessage(const char *cmd, const char *kind, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static size_t utf8_len(const unsigned char *p, size_t n);

static void vmessage(const char *cmd, const char *kind, const char *fmt, va_list ap)
{
	char small[1024], *text = small;
	va_list again;
	int len;

	va_copy(again, ap);
	len = vsnprintf(small, sizeof(small), fmt, ap);
	if (len >= (int)sizeof(small)) {
		text = malloc((size_t)len + 1);
		if (text)
			vsnprintf(text, (size_t)len + 1, fmt, again);
		else
			text = small;   /* the truncated message, rather than none */
	}
	va_end(again);
	fprintf(stderr, "erofskit %s: %s", cmd, kind);
	cli_text(stderr, text, len < 0 ? 0 : strlen(text));
	fputc('\n', stderr);
	if (text != small)
		free(text);
}

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(cmd, "", fmt, ap);
	va_end(ap);
}

void cli_usage_error(const char *cmd, void (*usage)(FILE *f))
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	const char *end;

	if (m) {
		usage(m);
		if (fclose(m))
			len = 0;
	}
	end = text ? strstr(text, "\n\n") : NULL;
	if (text && len)
		fprintf(stderr, "%.*s\n", (int)(end ? (size_t)(end - text) : len), text);
	fprintf(stderr, "Try 'erofskit %s --help' for the options.\n", cmd);
	free(text);
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(cmd, "warning: ", fmt, ap);
	va_end(ap);
}

int cli_exit_code(int code)
{
	if (!code)
		return EXIT_OK;
	return ek_is_image_error(code) ? EXIT_CORRUPT : EXIT_USAGE;
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

bool cli_parse_count(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	int64_t v;

	/* Digits first: cli_parse_int takes a sign and leading blanks. */
	if (!s || !isdigit((unsigned char)s[0]) || !cli_parse_int(s, &v) || v < min || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

bool cli_parse_workers(const char *cmd, const char *s, uint32_t *out)
{
	if (cli_parse_count(s, 1, UINT32_MAX, out))
		return true;
	cli_error(cmd, "--workers: invalid worker count '%s' (1 or more)", s);
	return false;
}

int cli_fail(ek_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	err->code = code;
	return code;
}

/* Standard input copied into an unnamed file of $TMPDIR (an image must be
 * read at any offset, and a pipe cannot be), or -1 with err filled. */
static int spool_stdin(ek_error *err)
{
	const char *dir = getenv("TMPDIR");
	static char buf[1 << 16];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err->message, sizeof(err->message),
			 "standard input: cannot make a temporary file in %s: %s", dir,
			 strerror(errno));
		err->code = -errno;
		return -1;
	}
	for (;;) {
		ssize_t got = read(STDIN_FILENO, buf, sizeof(buf)), put = 0;

		if (got == 0)
			return fd;
		if (got < 0 && errno == EINTR)
			continue;
		while (got > 0 && put < got) {
			ssize_t n = write(fd, buf + put, (size_t)(got - put));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			put += n;
		}
		if (got < 0 || put < got) {
			err->code = -(errno ? errno : EIO);
			snprintf(err->message, sizeof(err->message),
				 "standard input: cannot %s it: %s",
				 got < 0 ? "read" : "keep a copy of", strerror(-err->code));
			close(fd);
			return -1;
		}
	}
}

int cli_open_image(const char *name, const ek_open_options *oo, ek_image **img,
		   ek_error *err)
{
	char path[64];
	struct stat st;
	int fd = STDIN_FILENO, ret;

	if (strcmp(name, "-"))
		return ek_open(name, oo, img, err);
	if (fstat(STDIN_FILENO, &st) < 0) {
		err->code = -errno;
		snprintf(err->message, sizeof(err->message), "standard input: %s",
			 strerror(errno));
		return err->code;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		fd = spool_stdin(err);
		if (fd < 0)
			return err->code;
	}
	/* The image opens its own descriptor of the same file. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = ek_open(path, oo, img, err);
	if (fd != STDIN_FILENO)
		close(fd);
	if (ret) {
		char *named = strstr(err->message, path);

		if (named == err->message) {   /* say what the user gave */
			size_t len = strlen(path), name_len = strlen("standard input");

			memmove(err->message + name_len, err->message + len,
				strlen(err->message + len) + 1);
			memcpy(err->message, "standard input", name_len);
		}
	}
	return ret;
}

int cli_add_device(const char *cmd, const char *file, ek_open_options *oo)
{
	/* Held for the process: the options point at them. */
	static const char **files;
	static size_t nfiles;
	const char **grown = realloc(files, (nfiles + 2) * sizeof(*files));
	char *kept;

	if (!grown) {
		cli_error(cmd, "out of memory");
		return -1;
	}
	files = grown;
	/* Absolute: the mount server leaves the working directory. */
	kept = ek_is_url(file) ? strdup(file) : realpath(file, NULL);
	if (!kept) {
		cli_error(cmd, "extra device %s: %s", file, strerror(errno));
		return -1;
	}
	files[nfiles++] = kept;
	files[nfiles] = NULL;
	oo->devices = files;
	return 0;
}

int cli_parse_offset(const char *cmd, const char *option, const char *arg, uint64_t *out)
{
	if (ek_parse_size(arg, out)) {
		cli_error(cmd, "%s '%s' is not a size (bytes: 8192, 4K)", option, arg);
		return -1;
	}
	return 0;
}

void cli_warn_missing_devices(const char *cmd, ek_image *img, const char *name,
			      const char *how)
{
	ek_super_info sb;
	ek_device_info d;

	ek_get_super_info(img, &sb);
	for (unsigned int k = 1; k <= sb.extra_devices && !ek_get_device_info(img, k, &d); k++)
		if (!d.readable)
			cli_warn(cmd, "%s: extra device %u is not in the image file and its file is "
				 "not given (%s): the files on it cannot be read", name, k, how);
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *optstring,
	       const struct option *longopts)
{
	char quiet[64];
	const char *arg;
	int c;

	/* A leading ':' tells a missing value from an unknown option. */
	snprintf(quiet, sizeof(quiet), ":%s", optstring);
	opterr = 0;
	c = getopt_long(argc, argv, quiet, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (!strncmp(arg, "--", 2)) {
		const char *eq = strchr(arg, '=');
		int len = eq ? (int)(eq - arg) : (int)strlen(arg);

		if (c == ':')
			cli_error(cmd, "option '%.*s' needs a value", len, arg);
		else if (eq && optopt)
			cli_error(cmd, "option '%.*s' takes no value", len, arg);
		else
			cli_error(cmd, "unknown option '%.*s'", len, arg);
	} else if (c == ':') {
		cli_error(cmd, "option '-%c' needs a value", optopt);
	} else {
		cli_error(cmd, "unknown option '-%c'", optopt);
	}
	return '?';
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
	const char *term = getenv("TERM"), *no_color = getenv("NO_COLOR");

	p->enabled = isatty(STDERR_FILENO);
	/* no-color.org: any non-empty NO_COLOR.  We draw no colour at all;
	 * what it (and a dumb terminal) rules out here is the escape that
	 * erases the line's end. */
	p->plain = (no_color && *no_color) || !term || !*term || !strcmp(term, "dumb");
	p->what = what;
	p->start = p->last = cli_now();
}

void cli_progress_phase(struct cli_progress *p, const char *what)
{
	if (!strcmp(p->what, what))
		return;
	p->what = what;
	/* Its first line a tenth of a second in, with a rate to show. */
	p->start = p->last = cli_now();
}

/* "12:34" or "1:02:03" */
static void duration(double seconds, char *out, size_t size)
{
	unsigned long s = seconds > 0 && seconds < 1e7 ? (unsigned long)(seconds + 0.5) : 0;

	if (s >= 3600)
		snprintf(out, size, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(out, size, "%lu:%02lu", s / 60, s % 60);
}

/* Replace the line on the terminal by text (empty: erase it). */
static void draw(struct cli_progress *p, const char *text, int len)
{
	if (!p->plain) {
		fprintf(stderr, "\r%.*s\033[K", len, text);
	} else {
		/* Spaces over what the last line had beyond this one. */
		int pad = p->width > len ? p->width - len : 0;

		fprintf(stderr, "\r%.*s%*s", len, text, pad, "");
		if (pad)
			fprintf(stderr, "\r%.*s", len, text);
	}
	p->width = len;
	p->drawn = len > 0;
}

void cli_progress_files(struct cli_progress *p, uint64_t files_done, uint64_t files_total,
			uint64_t done, uint64_t total)
{
	double now, elapsed, rate;
	char files[48] = "", left[48] = "", line[256];
	int n;

	if (!p->enabled)
		return;
	now = cli_now();
	if (now - p->last < 0.1)
		return;
	p->last = now;
	elapsed = now - p->start;
	rate = elapsed > 0 ? (double)done / elapsed : 0;
	if (files_total)
		snprintf(files, sizeof(files), "%llu/%llu files, ",
			 (unsigned long long)files_done, (unsigned long long)files_total);
	else if (files_done)
		snprintf(files, sizeof(files), "%llu files, ", (unsigned long long)files_done);
	if (total && rate > 0 && done < total) {
		char d[24];

		duration((double)(total - done) / rate, d, sizeof(d));
		snprintf(left, sizeof(left), ", %s left", d);
	}
	if (total)
		n = snprintf(line, sizeof(line), "%s: %s%.1f / %.1f MiB (%3.0f%%), %.1f MiB/s%s",
			     p->what, files, (double)done / 1048576.0,
			     (double)total / 1048576.0, 100.0 * (double)done / (double)total,
			     rate / 1048576.0, left);
	else
		n = snprintf(line, sizeof(line), "%s: %s%.1f MiB, %.1f MiB/s", p->what, files,
			     (double)done / 1048576.0, rate / 1048576.0);
	draw(p, line, n < 0 ? 0 : n < (int)sizeof(line) ? n : (int)sizeof(line) - 1);
}

void cli_progress_update(struct cli_progress *p, uint64_t done, uint64_t total)
{
	cli_progress_files(p, 0, 0, done, total);
}

void cli_progress_done(struct cli_progress *p)
{
	if (p->drawn)
		draw(p, "", 0);
	p->drawn = false;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xE0) == 0xC0) {
		len = 2;
		cp = p[0] & 0x1F;
	} else if ((p[0] & 0xF0) == 0xE0) {
		len = 3;
		cp = p[0] & 0x0F;
	} else if ((p[0] & 0xF8) == 0xF0) {
		len = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	/* No overlong forms, no surrogates, nothing past U+10FFFF. */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

void cli_text(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t n = utf8_len(p + i, len - i);
		/* U+0080..U+009F: C1 controls, which some terminals obey. */
		bool c1 = n == 2 && p[i] == 0xC2 && p[i + 1] < 0xA0;

		if (n == 1 && p[i] >= 0x20 && p[i] != 0x7F) {
			fputc(p[i], f);
		} else if (n > 1 && !c1) {
			fwrite(p + i, 1, n, f);
		} else {
			for (size_t k = 0; k < (n ? n : 1); k++)
				fprintf(f, "\\x%02x", p[i + k]);
		}
		i += n ? n : 1;
	}
}

void cli_json_string(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	fputc('"', f);
	while (i < len) {
		unsigned char ch = p[i];
		size_t n = utf8_len(p + i, len - i);

		if (ch == '"' || ch == '\\') {
			fprintf(f, "\\%c", ch);
		} else if (ch < 0x20 || ch == 0x7F) {
			fprintf(f, "\\u%04x", ch);
		} else if (n == 0) {
			/* Not UTF-8: the byte as a lone surrogate U+DC80..U+DCFF,
			 * which is how Python's os.fsdecode() spells it, so the
			 * name survives a round trip. */
			fprintf(f, "\\udc%02x", ch);
			n = 1;
		} else {
			fwrite(p + i, 1, n, f);
		}
		i += n ? n : 1;
	}
	fputc('"', f);
}
