/* erofskit fsck: check an image and optionally extract it. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "erofskit/check.h"

static const char *const CMD = "fsck";

static void usage(FILE *f)
{
	fprintf(f,
"usage: erofskit fsck [options] IMAGE\n"
"\n"
"Check every inode, directory and xattr reachable from the root and read\n"
"every byte of every file.  Exit status: 0 clean, 1 corruption found (each\n"
"problem is printed with its path and nid), 2 usage or I/O error.\n"
"\n"
"options:\n"
"  --extract DIR         also recreate the tree in DIR: contents, modes,\n"
"                        owners (as root), mtimes, xattrs, links, devices\n"
"  --overwrite           replace files that already exist in DIR\n"
"  --no-owner            do not restore owners (default when not root)\n"
"  --no-xattrs           do not restore extended attributes\n"
"  --workers N           threads (default: one per CPU this process may\n"
"                        use; 1 = single-threaded)\n"
"  --engine NAME         a decoder; repeat for both algorithms:\n"
"                        deflate: libdeflate (default), isal, zlib\n"
"                        lzma: builtin (default, erofskit's), liblzma\n"
"                        (also $EROFSKIT_ENGINE, $EROFSKIT_LZMA_ENGINE)\n"
"  -q, --quiet           print problems only\n"
"  -h, --help            this text\n"
"\n"
"examples:\n"
"  erofskit fsck root.erofs\n"
"  erofskit fsck --extract /tmp/root root.erofs\n");
}

struct report {
	pthread_mutex_t lock;
	struct cli_progress *prog;
};

static void on_problem(void *ctx, const char *path, ek_nid nid, int code,
		       const char *message)
{
	struct report *r = ctx;

	(void)code;
	pthread_mutex_lock(&r->lock);
	cli_progress_done(r->prog);
	fprintf(stderr, "erofskit fsck: %s (nid %llu): %s\n", path,
		(unsigned long long)nid, message);
	pthread_mutex_unlock(&r->lock);
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct report *r = ctx;

	pthread_mutex_lock(&r->lock);
	cli_progress_update(r->prog, done, total);
	pthread_mutex_unlock(&r->lock);
}

enum { OPT_EXTRACT = 256, OPT_OVERWRITE, OPT_NO_OWNER, OPT_NO_XATTRS, OPT_WORKERS, OPT_ENGINE };

int cmd_fsck(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "extract", required_argument, NULL, OPT_EXTRACT },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "no-owner", no_argument, NULL, OPT_NO_OWNER },
		{ "no-xattrs", no_argument, NULL, OPT_NO_XATTRS },
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report rep = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct cli_progress prog;
	ek_open_options oo;
	ek_check_options co;
	ek_check_stats st;
	ek_image *img;
	bool quiet = false;
	ek_error err;
	uint64_t v;
	int c, ret;

	ek_open_options_init(&oo);
	ek_check_options_init(&co);
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_EXTRACT:
			co.extract_dir = optarg;
			break;
		case OPT_OVERWRITE:
			co.overwrite = true;
			break;
		case OPT_NO_OWNER:
			co.preserve_owner = 0;
			break;
		case OPT_NO_XATTRS:
			co.no_xattrs = true;
			break;
		case OPT_WORKERS:
			if (!cli_parse_size(optarg, &v) || v == 0 || v > UINT32_MAX) {
				cli_error(CMD, "invalid worker count '%s'", optarg);
				return EXIT_USAGE;
			}
			co.workers = (unsigned int)v;
			break;
		case OPT_ENGINE:
			if (ek_open_options_set_engine(&oo, optarg, &err)) {
				cli_error(CMD, "%s", err.message);
				return EXIT_USAGE;
			}
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		cli_error(CMD, "expected one IMAGE");
		usage(stderr);
		return EXIT_USAGE;
	}
	ret = ek_open(argv[optind], &oo, &img, &err);
	if (ret) {
		cli_error(CMD, "%s", err.message);
		return cli_exit_code(ret);
	}
	cli_progress_init(&prog, co.extract_dir ? "extract" : "check");
	rep.prog = &prog;
	co.problem = on_problem;
	co.problem_ctx = &rep;
	co.progress = on_progress;
	co.progress_ctx = &rep;
	ret = ek_check(img, &co, &st, &err);
	cli_progress_done(&prog);
	ek_close(img);
	if (ret) {
		cli_error(CMD, "%s", err.message);
		return EXIT_USAGE;
	}
	if (st.problems) {
		fprintf(stderr, "erofskit fsck: %s: %llu problem%s found\n", argv[optind],
			(unsigned long long)st.problems, st.problems == 1 ? "" : "s");
		return EXIT_CORRUPT;
	}
	if (!quiet)
		printf("%s: clean: %llu inodes, %llu directories, %llu files, %llu bytes checked%s in %.2f s\n",
		       argv[optind], (unsigned long long)st.inodes,
		       (unsigned long long)st.directories,
		       (unsigned long long)st.regular_files,
		       (unsigned long long)st.bytes,
		       co.extract_dir ? " and extracted" : "", st.seconds);
	return EXIT_OK;
}
