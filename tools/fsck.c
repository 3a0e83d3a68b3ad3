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
"IMAGE '-' reads the image from standard input.\n"
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
"  --json                print one JSON report on standard output: the\n"
"                        counts and every problem (path, nid, offset, image\n"
"                        offset, decoder); exit status as without it\n"
"  -q, --quiet           print problems only\n"
"  --device FILE         the file of the image's next extra device (an\n"
"                        upstream --blobdev's blob), in its device table's\n"
"                        order; once per device\n"
"  --offset BYTES        the image starts BYTES into IMAGE (as mkfs --offset\n"
"                        writes it, the kernel's fsoffset= reads it)\n"
"  -o OPT,...            options of an IMAGE at a URL:\n"
CLI_REMOTE_ITEMS
"  -h, --help            this text\n"
"\n"
"IMAGE may be an http:// or https:// URL, or oci://REGISTRY/REPO:TAG (or\n"
"REPO@sha256:DIGEST) for an image erofskit push stored; it is read with\n"
"Range requests, its blocks kept in a cache that later runs share.\n"
"\n"
"examples:\n"
"  erofskit fsck root.erofs\n"
"  erofskit fsck --extract /tmp/root root.erofs\n"
"  erofskit fsck https://example.com/root.erofs\n");
}

struct report {
	pthread_mutex_t lock;
	struct cli_progress *prog;
	FILE *json;              /* --json: the problems' objects, else NULL */
	bool json_failed;        /* that buffer could not grow */
	unsigned long long listed;
};

/* A number, or null when the problem has none. */
static void json_offset(FILE *f, uint64_t v)
{
	if (v == EK_NO_OFFSET)
		fputs("null", f);
	else
		fprintf(f, "%llu", (unsigned long long)v);
}

static void json_problem(struct report *r, const ek_problem *p)
{
	const char *name = strerrorname_np(-p->code);
	FILE *f = r->json;

	fprintf(f, "%s\n    {\"path\": ", r->listed++ ? "," : "");
	cli_json_string(f, p->path, strlen(p->path));
	fprintf(f, ", \"nid\": %llu, \"errno\": ", (unsigned long long)p->nid);
	if (name)
		cli_json_string(f, name, strlen(name));
	else
		fprintf(f, "%d", -p->code);
	fputs(", \"offset\": ", f);
	json_offset(f, p->offset);
	fputs(", \"image_offset\": ", f);
	json_offset(f, p->image_offset);
	fputs(", \"decoder\": ", f);
	if (p->decoder)
		cli_json_string(f, p->decoder, strlen(p->decoder));
	else
		fputs("null", f);
	fputs(", \"message\": ", f);
	cli_json_string(f, p->message, strlen(p->message));
	fputc('}', f);
	if (ferror(f))
		r->json_failed = true;
}

static void on_problem(void *ctx, const ek_problem *p)
{
	struct report *r = ctx;

	pthread_mutex_lock(&r->lock);
	if (r->json) {
		json_problem(r, p);
	} else {
		cli_progress_done(r->prog);
		fputs("erofskit fsck: ", stderr);
		cli_text(stderr, p->path, strlen(p->path));
		fprintf(stderr, " (nid %llu): ", (unsigned long long)p->nid);
		cli_text(stderr, p->message, strlen(p->message));
		fputc('\n', stderr);
	}
	pthread_mutex_unlock(&r->lock);
}

/*
 * The --json report, printed whatever the outcome: "result" is "clean",
 * "corrupt" or "error" (then "error" says why, as on standard error).
 * Field names are documented in erofskit-fsck(1); keep them stable.
 */
static void print_json(const char *image, const ek_check_options *co,
		       const ek_check_stats *st, const char *problems,
		       const char *error)
{
	const char *result = error ? "error" : st->problems ? "corrupt" : "clean";

	fputs("{\n  \"image\": ", stdout);
	cli_json_string(stdout, image, strlen(image));
	printf(",\n  \"result\": \"%s\",\n  \"extract_dir\": ", result);
	if (co->extract_dir)
		cli_json_string(stdout, co->extract_dir, strlen(co->extract_dir));
	else
		fputs("null", stdout);
	printf(",\n  \"inodes\": %llu,\n  \"directories\": %llu,\n"
	       "  \"regular_files\": %llu,\n  \"bytes\": %llu,\n"
	       "  \"problem_count\": %llu,\n  \"seconds\": %.3f,\n",
	       (unsigned long long)st->inodes, (unsigned long long)st->directories,
	       (unsigned long long)st->regular_files, (unsigned long long)st->bytes,
	       (unsigned long long)st->problems, st->seconds);
	printf("  \"problems\": [%s%s],\n  \"error\": ", problems ? problems : "",
	       problems && *problems ? "\n  " : "");
	if (error)
		cli_json_string(stdout, error, strlen(error));
	else
		fputs("null", stdout);
	fputs("\n}\n", stdout);
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct report *r = ctx;

	pthread_mutex_lock(&r->lock);
	cli_progress_update(r->prog, done, total);
	pthread_mutex_unlock(&r->lock);
}

enum {
	OPT_EXTRACT = 256, OPT_OVERWRITE, OPT_NO_OWNER, OPT_NO_XATTRS, OPT_WORKERS,
	OPT_ENGINE, OPT_JSON, OPT_DEVICE, OPT_OFFSET,
};

int cmd_fsck(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "extract", required_argument, NULL, OPT_EXTRACT },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "no-owner", no_argument, NULL, OPT_NO_OWNER },
		{ "no-xattrs", no_argument, NULL, OPT_NO_XATTRS },
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "json", no_argument, NULL, OPT_JSON },
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
	bool quiet = false, json = false;
	char *problems = NULL;
	size_t problems_len = 0;
	ek_error err;
	int c, ret;

	ek_open_options_init(&oo);
	ek_check_options_init(&co);
	optind = 1;
	while ((c = cli_getopt(CMD, argc, argv, "qho:", longopts)) != -1) {
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
			if (!cli_parse_workers(CMD, optarg, &co.workers))
				return EXIT_USAGE;
			break;
		case OPT_ENGINE:
			if (ek_open_options_set_engine(&oo, optarg, &err)) {
				cli_error(CMD, "%s", err.message);
				return EXIT_USAGE;
			}
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'o':
			if (cli_remote_options(CMD, CLI_REMOTE_READ, optarg, &oo))
				return EXIT_USAGE;
			break;
		case OPT_DEVICE:
			if (cli_add_device(CMD, optarg, &oo))
				return EXIT_USAGE;
			break;
		case OPT_OFFSET:
			if (cli_parse_offset(CMD, "--offset", optarg, &oo.offset))
				return EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			cli_usage_error(CMD, usage);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		cli_error(CMD, "expected one IMAGE");
		cli_usage_error(CMD, usage);
		return EXIT_USAGE;
	}
	memset(&st, 0, sizeof(st));
	ret = cli_open_image(argv[optind], &oo, &img, &err);
	if (ret) {
		cli_error(CMD, "%s", err.message);
		if (json)
			print_json(argv[optind], &co, &st, NULL, err.message);
		return cli_exit_code(ret);
	}
	cli_warn_missing_devices(CMD, img, argv[optind], "--device FILE");
	/* An image from a registry has a digest: every byte is checked
	 * against it (the blob is fetched whole first). */
	ret = ek_verify_source(img, &err);
	if (ret && ret != -ENODATA) {
		cli_error(CMD, "%s: %s", argv[optind], err.message);
		if (json)
			print_json(argv[optind], &co, &st, NULL, err.message);
		ek_close(img);
		return cli_exit_code(ret);
	}
	if (json && !(rep.json = open_memstream(&problems, &problems_len))) {
		ek_close(img);
		cli_error(CMD, "out of memory");
		return EXIT_USAGE;
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
	if (rep.json) {
		if (fclose(rep.json) || rep.json_failed) {
			free(problems);
			cli_error(CMD, "out of memory");
			return EXIT_USAGE;
		}
		print_json(argv[optind], &co, &st, problems, ret ? err.message : NULL);
		free(problems);
	}
	if (ret) {
		cli_error(CMD, "%s", err.message);
		return EXIT_USAGE;
	}
	if (st.problems) {
		if (!json)
			fprintf(stderr, "erofskit fsck: %s: %llu problem%s found\n", argv[optind],
				(unsigned long long)st.problems, st.problems == 1 ? "" : "s");
		return EXIT_CORRUPT;
	}
	if (!quiet && !json)
		printf("%s: clean: %llu inodes, %llu directories, %llu files, %llu bytes checked%s in %.2f s\n",
		       argv[optind], (unsigned long long)st.inodes,
		       (unsigned long long)st.directories,
		       (unsigned long long)st.regular_files,
		       (unsigned long long)st.bytes,
		       co.extract_dir ? " and extracted" : "", st.seconds);
	return EXIT_OK;
}
