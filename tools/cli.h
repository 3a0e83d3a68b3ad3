/* Helpers shared by the subcommands: messages, numbers, progress, JSON. */
#ifndef EK_TOOLS_CLI_H
#define EK_TOOLS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "erofskit/erofskit.h"

/* Exit codes of every subcommand. */
enum {
	EXIT_OK = 0,
	EXIT_CORRUPT = 1,   /* fsck found corruption */
	EXIT_USAGE = 2,     /* bad usage or an I/O error */
};

/* The exit code for a library failure (code < 0): EXIT_CORRUPT when the
 * image is at fault, else EXIT_USAGE. */
int cli_exit_code(int code);

int cmd_mkfs(int argc, char **argv);
int cmd_fsck(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_mount(int argc, char **argv);
int cmd_push(int argc, char **argv);

/* "erofskit mkfs: message\n" on stderr. */
/* Fill err with code and a message (as the library's errors are); returns
 * code. */
int cli_fail(ek_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cli_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_warn(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* After a usage error (said first, with cli_error): usage's synopsis (its
 * text up to the first blank line) and where the rest is, on stderr.
 * The whole text would push the error off a terminal's screen. */
void cli_usage_error(const char *cmd, void (*usage)(FILE *f));

/* ek_open, where "-" is standard input (a file or device as it is; a
 * pipe is first copied to an unnamed temporary file). */
int cli_open_image(const char *name, const ek_open_options *oo, ek_image **img,
		   ek_error *err);

/* One more file of the image's extra devices (fsck and dump's --device,
 * mount's -o device=), in the order of its device table; the name made
 * absolute.  -1 when it cannot be (message printed). */
int cli_add_device(const char *cmd, const char *file, ek_open_options *oo);
/* --offset (mkfs, fsck, dump) and mount's -o offset= (option: the name
 * the message gives): where the image starts in its file ("8192",
 * "4K").  -1 when arg is no size (message printed). */
int cli_parse_offset(const char *cmd, const char *option, const char *arg, uint64_t *out);
/* A warning for each extra device of img that is not in the image file
 * nor given a file (the option that would give it: how), said once
 * before the files on it fail to read. */
void cli_warn_missing_devices(const char *cmd, ek_image *img, const char *name,
			      const char *how);

/* Options of images at URLs and of registries (tools/remote.c):
 * insecure, cacert=FILE, header=NAME:VALUE, timeout=SECONDS, retries=N,
 * credentials=FILE, plain_http for every command; token=FILE,
 * cache_dir=DIR|none, cache_max=SIZE, prefetch=all for those reading an
 * image (CLI_REMOTE_READ); downloads=N for mkfs --oci (CLI_REMOTE_PULL).
 * cli_remote_option takes one: 1 when it was one (into oo), 0 when it is
 * not, -1 (message printed) when its value is wrong or the taker does
 * not use it.  cli_remote_options takes a -o comma list of nothing else.
 * Values are copied. */
enum { CLI_REMOTE_READ = 1, CLI_REMOTE_PULL = 2, CLI_REMOTE_PUSH = 4 };
int cli_remote_option(const char *cmd, unsigned int taker, const char *tok,
		      ek_open_options *oo);
int cli_remote_options(const char *cmd, unsigned int taker, const char *list,
		       ek_open_options *oo);
/* The items of --help's -o lists: what every command takes ... */
#define CLI_REMOTE_HTTP_ITEMS \
"       insecure           do not verify the server's TLS certificate\n" \
"       cacert=FILE        trust the CA certificates in FILE (PEM)\n" \
"       header=NAME:VALUE  send a header with every request (repeatable)\n" \
"       timeout=SECONDS    connect and stall timeout (default 30)\n" \
"       retries=N          tries after a failure, with backoff (default 5)\n" \
"       credentials=FILE   oci://: 'user:password' for the registry\n" \
"                          (default: $EROFSKIT_REGISTRY_AUTH's)\n" \
"       plain_http         oci://: HTTP, not HTTPS\n"
/* ... and what those reading an image take besides. */
#define CLI_REMOTE_ITEMS CLI_REMOTE_HTTP_ITEMS \
"       token=FILE         send 'Authorization: Bearer' with FILE's token\n" \
"       cache_dir=DIR      where its blocks are kept for later runs and\n" \
"                          mounts (default $XDG_CACHE_HOME/erofskit or\n" \
"                          ~/.cache/erofskit; none: private, dropped at exit)\n" \
"       cache_max=SIZE     bytes the cache directory keeps (default 2G),\n" \
"                          least recently used out\n" \
"       prefetch=all       fetch the whole image in the background\n"

/* getopt_long with our messages: "erofskit mkfs: unknown option '-x'"
 * (getopt's own would name the subcommand alone).  optstring must not
 * start with ':'; on a bad option the message is printed and '?'
 * returned. */
int cli_getopt(const char *cmd, int argc, char **argv, const char *optstring,
	       const struct option *longopts);

/* Numbers.  Sizes are not here: they go through the library's
 * ek_parse_size, so that -C 64K and -Efragments=64K read alike.
 * A plain integer (may be negative): */
bool cli_parse_int(const char *s, int64_t *out);
/* A count (workers, seconds, retries) from min to max: decimal digits
 * alone, no sign, no suffix. */
bool cli_parse_count(const char *s, uint32_t min, uint32_t max, uint32_t *out);
/* --workers N: a count of 1 or more, or false with the message printed. */
bool cli_parse_workers(const char *cmd, const char *s, uint32_t *out);

/* Progress on stderr, redrawn at most ten times a second, only when
 * stderr is a terminal.  Without escape sequences (the line is cleared
 * with spaces) when NO_COLOR is set or TERM is dumb or unset. */
struct cli_progress {
	bool enabled;
	bool plain;              /* no ANSI escape sequences */
	const char *what;
	double start, last;
	bool drawn;
	int width;               /* of the line drawn last */
};
void cli_progress_init(struct cli_progress *p, const char *what);
void cli_progress_update(struct cli_progress *p, uint64_t done, uint64_t total);
/* Another phase of the work, named what (the line's prefix): its rate
 * and time left from now on.  The same phase again: nothing. */
void cli_progress_phase(struct cli_progress *p, const char *what);
/* The same with files counted: "12/50 files, ..." ("12 files, ..." when
 * their total is 0, not known), and the time left. */
void cli_progress_files(struct cli_progress *p, uint64_t files_done, uint64_t files_total,
			uint64_t done, uint64_t total);
void cli_progress_done(struct cli_progress *p);
double cli_now(void);

/* len bytes of text for a person to f, with what a terminal would act on
 * rather than show (control characters, C1 controls, bytes that are not
 * UTF-8) written as \xNN: names come from images, archives and servers.
 * cli_error and cli_warn write their messages this way. */
void cli_text(FILE *f, const char *s, size_t len);

/* JSON string (quoted, escaped) of len bytes to f. */
void cli_json_string(FILE *f, const char *s, size_t len);


#endif
