/* Drop-in names: mkfs.erofs, fsck.erofs and dump.erofs.
 *
 * Scripts and containerd call erofs-utils by these names with its
 * spellings (--workers=N, --extract=DIR, -Enoinline_data, ...).  Each tool
 * here is a table of upstream options; the translation walks the upstream
 * argv once, turns every option it takes into erofskit's spelling, and
 * runs the subcommand on the result.  An option erofskit does not
 * implement is refused by name before anything runs: silently ignoring it
 * could build a different image than the caller asked for. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dropin.h"
#include "dropin_oci.h"
#include "sniff.h"
#include "erofskit/erofskit.h"

/* "Keep translating": any other value ends the translation as exit code. */
enum { GO_ON = -1 };

enum takes {
	NO_VALUE,
	VALUE,          /* --name=V, --name V, -xV or -x V */
	OPTIONAL_VALUE, /* only as --name=V, as getopt_long's optional_argument */
};

enum action {
	PASS,     /* hand on as row.erofskit, then the value if any */
	ACCEPT,   /* take and drop: erofskit already behaves so (row.help says why) */
	SPECIAL,  /* row.special translates it */
	VERSION,
	HELP,
};

struct translation;

struct row {
	const char *upstream;   /* "-T" or "--workers" */
	enum takes takes;
	enum action action;
	const char *erofskit;
	int (*special)(struct translation *t, const char *value);
	const char *form;       /* how --help shows it, e.g. "-T N" */
	const char *help;       /* NULL: not listed by --help */
};

struct tool {
	const char *name;       /* "mkfs.erofs" */
	const char *command;    /* "mkfs" */
	int (*run)(int argc, char **argv);
	const char *operands;
	const struct row *rows;
	int (*finish)(struct translation *t);
};

struct translation {
	const struct tool *tool;
	char **argv;            /* erofskit's: command, options, "--", operands */
	int argc, capacity;
	char **operands;
	int noperands;
	/* dump.erofs picks what to show from several options; finish_dump
	 * turns them into one of erofskit's. */
	const char *path, *nid;
	bool ls, cat, superblock, stats;
	char share[24];            /* -x N as --xattr-share's N + 1 */
	/* mkfs.erofs --oci: its options, turned into erofskit's by
	 * finish_mkfs once the operands (the image among them) are known. */
	bool oci, tar;
	bool clean_data;           /* --clean[=data]: rebuild mode copies data */
	const char *oci_options;
	struct dropin_oci oci_args;
};

static int push(struct translation *t, const char *arg)
{
	if (t->argc + 1 >= t->capacity) {
		int capacity = t->capacity ? 2 * t->capacity : 16;
		char **grown = realloc(t->argv, (size_t)capacity * sizeof(*grown));

		if (!grown) {
			fprintf(stderr, "%s: out of memory\n", t->tool->name);
			return EXIT_USAGE;
		}
		t->argv = grown;
		t->capacity = capacity;
	}
	/* The strings are argv's or literals, which the subcommands only read. */
	t->argv[t->argc++] = (char *)arg;
	t->argv[t->argc] = NULL;
	return GO_ON;
}

static int refuse(const struct translation *t, const char *option, int len,
		  const char *why)
{
	fprintf(stderr, "%s: option '%.*s' %s (see '%s --help')\n", t->tool->name,
		len, option, why ? why : "is not supported by erofskit", t->tool->name);
	return EXIT_USAGE;
}

/* ---------------------------------------------------------------- mkfs */

static int mkfs_uuid(struct translation *t, const char *value)
{
	/* erofs-utils' "-U clear" is the all-zero UUID; erofskit takes hex
	 * digits and "random" as they are. */
	if (!strcmp(value, "clear"))
		value = "00000000-0000-0000-0000-000000000000";
	if (push(t, "-U") != GO_ON)
		return EXIT_USAGE;
	return push(t, value);
}

static int mkfs_xattr_limit(struct translation *t, const char *value)
{
	int64_t limit;

	/* A negative -x turns xattrs off.  Otherwise N is the most inodes
	 * an xattr may have and stay inline: erofskit's --xattr-share counts
	 * the inodes from which it is shared, N + 1. */
	if (!cli_parse_int(value, &limit) || limit >= UINT32_MAX) {
		fprintf(stderr, "%s: -x '%s': expected a number of inodes (or -1: no xattrs)\n",
			t->tool->name, value);
		return EXIT_USAGE;
	}
	if (limit < 0)
		return push(t, "--no-xattrs");
	snprintf(t->share, sizeof(t->share), "%lld", (long long)limit + 1);
	if (push(t, "--xattr-share") != GO_ON)
		return EXIT_USAGE;
	return push(t, t->share);
}

static int mkfs_ovlfs_strip(struct translation *t, const char *value)
{
	/* 0 is upstream's default: the metadata stays. */
	if (!strcmp(value, "0"))
		return GO_ON;
	if (!strcmp(value, "1"))
		return push(t, "--ovlfs-strip");
	fprintf(stderr, "%s: --ovlfs-strip=%s: expected 0 or 1\n", t->tool->name, value);
	return EXIT_USAGE;
}

static int mkfs_tar(struct translation *t, const char *value)
{
	t->tar = true;
	/* --tar alone is --tar=f upstream. */
	if (!value || !strcmp(value, "f"))
		return push(t, "--tar");
	if (!strcmp(value, "i"))
		return push(t, "--tar=i");
	fprintf(stderr, "%s: --tar=%s: the modes are f and i\n", t->tool->name, value);
	return EXIT_USAGE;
}

static int mkfs_sort(struct translation *t, const char *value)
{
	/* Upstream's --sort orders the file data of a tar stream: "none"
	 * keeps the archive's order, which is erofskit's for a tar too (its
	 * data is written as it arrives); with a directory source it changes
	 * nothing, and erofskit's order is fixed by path.  So both describe
	 * a build erofskit does, but "path" of a tar keeps the archive's
	 * order (reordering would hold the data back). */
	if (!strcmp(value, "none") || !strcmp(value, "path"))
		return GO_ON;
	fprintf(stderr, "%s: --sort=%s: only 'none' and 'path' are taken\n",
		t->tool->name, value);
	return EXIT_USAGE;
}

/* --ungzip, --unxz and --unlzma ask upstream to decompress the tar stream: erofskit
 * finds an archive's compression by its content, so the filter is always
 * on.  Their =FILE, the decompressed stream written beside the image, is
 * --tar-copy's. */
static int mkfs_filter(struct translation *t, const char *value)
{
	if (!value)
		return GO_ON;
	if (push(t, "--tar-copy") != GO_ON)
		return EXIT_USAGE;
	return push(t, value);
}

/* --clean[=data] asks for a full build, which erofskit always does (and
 * from an image, refuse_rebuild's condition); its other modes (space
 * reserved, inodes zeroed) are not built. */
static int mkfs_clean(struct translation *t, const char *value)
{
	if (!value || !strcmp(value, "data")) {
		t->clean_data = true;
		return GO_ON;
	}
	fprintf(stderr, "%s: --clean=%s is not supported by erofskit: its builds keep the "
		"data (--clean=data)\n", t->tool->name, value);
	return EXIT_USAGE;
}

static int mkfs_oci(struct translation *t, const char *value)
{
	t->oci = true;
	t->oci_options = value;
	return GO_ON;
}

/* --oci: upstream's SOURCE operand is the image in the registry. */
/* Upstream's rebuild mode takes EROFS images as sources: several are
 * merged as layers (the top one first), which erofskit does not do; one,
 * with --clean=data, is copied whole, which erofskit mkfs does.  Without
 * it upstream writes the metadata alone, reading the data from the
 * source as a blob device: erofskit's image would hold the data, so a
 * caller that then mounts it with device= would be surprised. */
static int refuse_rebuild(const struct translation *t)
{
	struct sniffed s;

	if (t->noperands > 2) {
		fprintf(stderr, "%s: more than one SOURCE: rebuild mode (EROFS images merged "
			"into one) is not supported by erofskit\n", t->tool->name);
		return EXIT_USAGE;
	}
	if (t->noperands == 2 && !t->clean_data && sniff_source(t->operands[1], &s) &&
	    s.erofs) {
		fprintf(stderr, "%s: %s is %s: rebuild mode without --clean=data (an image of "
			"metadata reading its data from the source as a blob device) is not "
			"supported by erofskit; --clean=data copies the data in\n",
			t->tool->name, t->operands[1], s.what);
		return EXIT_USAGE;
	}
	return GO_ON;
}

static int finish_mkfs(struct translation *t)
{
	const struct dropin_oci *o = &t->oci_args;
	char why[256];
	int ret;

	if (!t->oci)
		return t->tar ? GO_ON : refuse_rebuild(t);
	if (t->noperands != 2) {
		fprintf(stderr, "%s: --oci: expected DESTINATION and the image, as "
			"REGISTRY/REPO[:TAG]\n", t->tool->name);
		return EXIT_USAGE;
	}
	if (dropin_oci_parse(t->oci_options, t->operands[1], &t->oci_args, why, sizeof(why))) {
		fprintf(stderr, "%s: --oci: %s\n", t->tool->name, why);
		return EXIT_USAGE;
	}
	t->noperands = 1;
	/* The library reads them there: not on erofskit's command line. */
	if (*o->credentials && setenv(EK_REGISTRY_AUTH_ENV, o->credentials, 1)) {
		fprintf(stderr, "%s: out of memory\n", t->tool->name);
		return EXIT_USAGE;
	}
	ret = push(t, "--oci");
	if (ret == GO_ON)
		ret = push(t, o->reference);
	if (ret == GO_ON && *o->platform && (ret = push(t, "--platform")) == GO_ON)
		ret = push(t, o->platform);
	if (ret == GO_ON && *o->layer && (ret = push(t, "--oci-layer")) == GO_ON)
		ret = push(t, o->layer);
	if (ret == GO_ON && o->plain_http && (ret = push(t, "-o")) == GO_ON)
		ret = push(t, "plain_http");
	return ret;
}

static const struct row mkfs_rows[] = {
	{ "-b", VALUE, PASS, "-b", NULL, "-b SIZE", "block size" },
	{ "-C", VALUE, PASS, "-C", NULL, "-C SIZE", "largest physical cluster" },
	{ "-z", VALUE, PASS, "-z", NULL, "-z ALG[,LEVEL][:ALG2...]",
	  "lz4, lz4hc, deflate, zstd, lzma (also ALG,level=N); up to eight,\n"
	  "                         split by ':', for --compress-hints to pick" },
	{ "-E", VALUE, PASS, "-E", NULL, "-E OPT[,OPT]",
	  "ztailpacking, fragments[=SIZE], all-fragments[=SIZE], dedupe, fragdedupe=MODE,\n"
	  "                         noinline_data, 48bit, dot-omitted, xattr-name-filter,\n"
	  "                         force-inode-compact, force-inode-extended,\n"
	  "                         force-chunk-indexes, force-inode-blockmap, nosbcrc,\n"
	  "                         legacy-compress, ^OPT" },
	{ "-L", VALUE, PASS, "-L", NULL, "-L LABEL", "volume label" },
	{ "-m", VALUE, PASS, "-m", NULL, "-m SIZE[:ALG]",
	  "metadata compressed in a metabox (Linux 6.17+); ALG only -z's first" },
	{ "-T", VALUE, PASS, "-T", NULL, "-T N", "build time, and every file's mtime unless --mkfs-time" },
	{ "--mkfs-time", NO_VALUE, PASS, "--mkfs-time", NULL, NULL, "with -T: the build time only" },
	{ "--all-time", NO_VALUE, ACCEPT, NULL, NULL, NULL, "with -T: every file's mtime too (the default)" },
	{ "-U", VALUE, SPECIAL, NULL, mkfs_uuid, "-U UUID", "UUID, 'clear' or 'random'" },
	{ "--ignore-mtime", NO_VALUE, PASS, "--ignore-mtime", NULL, NULL,
	  "an mtime that alone would take an extended inode is not kept" },
	{ "--preserve-mtime", NO_VALUE, PASS, "--preserve-mtime", NULL, NULL,
	  "every mtime kept (the default)" },
	{ "--all-root", NO_VALUE, PASS, "--all-root", NULL, NULL, "every file owned by root" },
	{ "--hard-dereference", NO_VALUE, PASS, "--hard-dereference", NULL, NULL,
	  "each name of a hard-linked file an inode of its own" },
	{ "--root-xattr-isize", VALUE, PASS, "--root-xattr-isize", NULL, "--root-xattr-isize=SIZE",
	  "the root's inline xattr area at least SIZE bytes" },
	{ "--offset", VALUE, PASS, "--offset", NULL, "--offset=N", "the image N bytes into the file" },
	{ "--xattr-prefix", VALUE, PASS, "--xattr-prefix", NULL, "--xattr-prefix=PREFIX",
	  "a long xattr name prefix, stored once (repeatable)" },
	{ "--force-uid", VALUE, PASS, "--force-uid", NULL, "--force-uid=UID", "every file owned by UID" },
	{ "--force-gid", VALUE, PASS, "--force-gid", NULL, "--force-gid=GID", "every file's group GID" },
	{ "--uid-offset", VALUE, PASS, "--uid-offset", NULL, "--uid-offset=N", "N added to every owner" },
	{ "--gid-offset", VALUE, PASS, "--gid-offset", NULL, "--gid-offset=N", "N added to every group" },
	{ "--chunksize", VALUE, PASS, "--chunksize", NULL, "--chunksize=SIZE",
	  "uncompressed files in SIZE-byte chunks, equal ones stored once" },
	{ "--blobdev", VALUE, PASS, "--blobdev", NULL, "--blobdev=FILE",
	  "with --chunksize: the chunks in FILE, an extra device" },
	{ "-x", VALUE, SPECIAL, NULL, mkfs_xattr_limit, "-x N",
	  "xattrs on more than N inodes shared (-1: no xattrs)" },
	{ "--workers", VALUE, PASS, "--workers", NULL, "--workers=N", "compression threads" },
	{ "--async-queue-limit", VALUE, ACCEPT, NULL, NULL, "--async-queue-limit=N",
	  "taken: erofskit sizes its own work queue" },
	{ "--clean", OPTIONAL_VALUE, SPECIAL, NULL, mkfs_clean, "--clean[=data]",
	  "a full build, the only kind erofskit makes; with an EROFS\n"
	  "                         image as SOURCE (rebuild mode), its data copied in" },
	{ "--exclude-path", VALUE, PASS, "--exclude-path", NULL, "--exclude-path=PATH",
	  "leave PATH (relative to SOURCE) out" },
	{ "--exclude-regex", VALUE, PASS, "--exclude-regex", NULL, "--exclude-regex=RE",
	  "leave out paths RE matches in" },
	{ "--ovlfs-strip", VALUE, SPECIAL, NULL, mkfs_ovlfs_strip, "--ovlfs-strip=0|1",
	  "with --tar, 1: the overlayfs metadata goes" },
	{ "--max-extent-bytes", VALUE, PASS, "--max-extent-bytes", NULL, "--max-extent-bytes=SIZE",
	  "the most data a compressed extent holds" },
	{ "--file-contexts", VALUE, PASS, "--file-contexts", NULL, "--file-contexts=FILE",
	  "SELinux labels from a file_contexts file" },
	{ "--compress-hints", VALUE, PASS, "--compress-hints", NULL, "--compress-hints=FILE",
	  "per-file cluster sizes and algorithms: lines 'SIZE [K] REGEX'" },
	{ "--fs-config-file", VALUE, PASS, "--fs-config-file", NULL, "--fs-config-file=FILE",
	  "owners, modes and capabilities from Android's canned fs_config" },
	{ "--mount-point", VALUE, PASS, "--mount-point", NULL, "--mount-point=PATH",
	  "the image's mount point, before the paths the rules look up" },
	{ "--product-out", VALUE, PASS, "--product-out", NULL, "--product-out=DIR",
	  "taken with --fs-config-file (no built-in Android ids)" },
	{ "--block-list-file", VALUE, PASS, "--block-list-file", NULL, "--block-list-file=FILE",
	  "write each file's blocks, a line per file" },
	{ "--quiet", NO_VALUE, PASS, "-q", NULL, NULL, "no summary" },
	{ "--sort", VALUE, SPECIAL, NULL, mkfs_sort, "--sort=none|path",
	  "taken: erofskit's order is fixed (tar data order upstream)" },
	{ "-d", VALUE, ACCEPT, NULL, NULL, "-d N", "debug level: ignored (messages only)" },
	{ "--tar", OPTIONAL_VALUE, SPECIAL, NULL, mkfs_tar, "--tar[=f|i]",
	  "SOURCE is a tar archive (standard input when omitted); =i: index it" },
	{ "--gzip", NO_VALUE, ACCEPT, NULL, NULL, "--gzip",
	  "with --tar: taken (compression is found by content)" },
	{ "--ungzip", OPTIONAL_VALUE, SPECIAL, NULL, mkfs_filter, "--ungzip[=FILE]",
	  "with --tar; =FILE: the tar, decompressed, to FILE too\n"
	  "                         (with --tar=i, the tar the image points into)" },
	{ "--unxz", OPTIONAL_VALUE, SPECIAL, NULL, mkfs_filter, "--unxz[=FILE]", "the same" },
	{ "--unlzma", OPTIONAL_VALUE, SPECIAL, NULL, mkfs_filter, "--unlzma[=FILE]",
	  "the same (xz, lzma and lzip by content; =FILE: xz only)" },
	{ "--aufs", NO_VALUE, PASS, "--aufs", NULL, NULL, "with --tar: .wh. entries become overlayfs whiteouts" },
	{ "--oci", OPTIONAL_VALUE, SPECIAL, NULL, mkfs_oci, "--oci[=OPT,...]",
	  "SOURCE is an image in a registry, REGISTRY/REPO[:TAG|@DIGEST]\n"
	  "                         (or Docker Hub's REPO[:TAG]); OPT: f (the default),\n"
	  "                         platform=OS/ARCH, layer=N (from 0) or blob=DIGEST (that\n"
	  "                         layer alone, whiteouts kept), username=U and password=P,\n"
	  "                         insecure (plain HTTP)" },
	{ "-V", NO_VALUE, VERSION, NULL, NULL, "-V, --version", "print the version" },
	{ "--version", NO_VALUE, VERSION, NULL, NULL, NULL, NULL },
	{ "-h", NO_VALUE, HELP, NULL, NULL, NULL, NULL },
	{ "--help", NO_VALUE, HELP, NULL, NULL, "-h, --help", "this text" },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
};

/* ---------------------------------------------------------------- fsck */

static int fsck_extract(struct translation *t, const char *dir)
{
	/* Bare --extract asks upstream to read every file's data: erofskit's
	 * fsck always does, so only --extract=DIR is handed on. */
	if (!dir)
		return GO_ON;
	if (push(t, "--extract") != GO_ON)
		return EXIT_USAGE;
	return push(t, dir);
}

static const struct row fsck_rows[] = {
	{ "--extract", OPTIONAL_VALUE, SPECIAL, NULL, fsck_extract, "--extract[=DIR]",
	  "read every file (erofskit always does); with DIR, extract there" },
	{ "--overwrite", NO_VALUE, PASS, "--overwrite", NULL, NULL, "replace existing files in DIR" },
	{ "--force", NO_VALUE, ACCEPT, NULL, NULL, NULL, "taken: erofskit extracts into any DIR, / too" },
	{ "--preserve", NO_VALUE, ACCEPT, NULL, NULL, NULL,
	  "taken, as are --preserve-owner and --preserve-perms: erofskit restores\n"
	  "                         modes always and owners when run as root" },
	{ "--preserve-owner", NO_VALUE, ACCEPT, NULL, NULL, NULL, NULL },
	{ "--preserve-perms", NO_VALUE, ACCEPT, NULL, NULL, NULL, NULL },
	{ "--no-preserve-owner", NO_VALUE, PASS, "--no-owner", NULL, NULL, "do not restore owners" },
	{ "--xattrs", NO_VALUE, ACCEPT, NULL, NULL, NULL,
	  "restore xattrs: erofskit's default (upstream's is off)" },
	{ "--no-xattrs", NO_VALUE, PASS, "--no-xattrs", NULL, NULL, "do not restore xattrs" },
	{ "--workers", VALUE, PASS, "--workers", NULL, "--workers=N", "threads" },
	{ "--device", VALUE, PASS, "--device", NULL, "--device=FILE",
	  "an extra device's file (a --blobdev's blob), once per device" },
	{ "--offset", VALUE, PASS, "--offset", NULL, "--offset=N", "the image starts N bytes into IMAGE" },
	{ "-d", VALUE, ACCEPT, NULL, NULL, "-d N", "debug level: ignored (messages only)" },
	{ "-a", NO_VALUE, ACCEPT, NULL, NULL, "-a, -A, -y", "no-ops, as upstream (fsck(8)'s options)" },
	{ "-A", NO_VALUE, ACCEPT, NULL, NULL, NULL, NULL },
	{ "-y", NO_VALUE, ACCEPT, NULL, NULL, NULL, NULL },
	{ "-V", NO_VALUE, VERSION, NULL, NULL, "-V, --version", "print the version" },
	{ "--version", NO_VALUE, VERSION, NULL, NULL, NULL, NULL },
	{ "-h", NO_VALUE, HELP, NULL, NULL, NULL, NULL },
	{ "--help", NO_VALUE, HELP, NULL, NULL, "-h, --help", "this text" },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
};

/* ---------------------------------------------------------------- dump */

static int dump_path(struct translation *t, const char *value)
{
	t->path = value;
	return GO_ON;
}

static int dump_nid(struct translation *t, const char *value)
{
	t->nid = value;
	return GO_ON;
}

static int dump_ls(struct translation *t, const char *value)
{
	(void)value;
	t->ls = true;
	return GO_ON;
}

static int dump_cat(struct translation *t, const char *value)
{
	(void)value;
	t->cat = true;
	return GO_ON;
}

static int dump_superblock(struct translation *t, const char *value)
{
	(void)value;
	t->superblock = true;
	return GO_ON;
}

static int dump_statistics(struct translation *t, const char *value)
{
	(void)value;
	t->stats = true;
	return GO_ON;
}

/* Upstream names the inode with --path/--nid and says what to show with
 * --ls/--cat/-s; erofskit has one option per thing shown. */
static int finish_dump(struct translation *t)
{
	const char *name = t->tool->name;
	int ret;

	if (t->superblock && (t->path || t->nid)) {
		fprintf(stderr, "%s: -s with --path or --nid is not supported by erofskit: "
			"ask for the superblock and the inode separately\n", name);
		return EXIT_USAGE;
	}
	if (t->stats && (t->superblock || t->path || t->nid || t->ls || t->cat)) {
		fprintf(stderr, "%s: -S with -s, --path, --nid, --ls or --cat is not supported by erofskit: "
			"ask for the statistics separately\n", name);
		return EXIT_USAGE;
	}
	if (t->stats)
		return push(t, "--stats");
	if (t->ls && t->cat) {
		fprintf(stderr, "%s: --ls and --cat exclude each other\n", name);
		return EXIT_USAGE;
	}
	if (t->ls || t->cat) {
		if (!t->path) {
			fprintf(stderr, "%s: --%s needs --path (erofskit does not take --nid there)\n",
				name, t->ls ? "ls" : "cat");
			return EXIT_USAGE;
		}
		if (t->nid) {
			fprintf(stderr, "%s: --path and --nid exclude each other\n", name);
			return EXIT_USAGE;
		}
		ret = push(t, t->ls ? "--ls" : "--cat");
		return ret == GO_ON ? push(t, t->path) : ret;
	}
	/* Both given: erofskit refuses the pair itself. */
	ret = GO_ON;
	if (t->path && (ret = push(t, "--path")) == GO_ON)
		ret = push(t, t->path);
	if (ret == GO_ON && t->nid && (ret = push(t, "--nid")) == GO_ON)
		ret = push(t, t->nid);
	return ret;
}

static const struct row dump_rows[] = {
	{ "--path", VALUE, SPECIAL, NULL, dump_path, "--path=P", "the inode at path P" },
	{ "--nid", VALUE, SPECIAL, NULL, dump_nid, "--nid=N", "the inode N" },
	{ "--ls", NO_VALUE, SPECIAL, NULL, dump_ls, NULL, "with --path: list the directory" },
	{ "--cat", NO_VALUE, SPECIAL, NULL, dump_cat, NULL, "with --path: write the file to stdout" },
	{ "-s", NO_VALUE, SPECIAL, NULL, dump_superblock, NULL, "the superblock (also the default)" },
	{ "-S", NO_VALUE, SPECIAL, NULL, dump_statistics, NULL,
	  "statistics of the image (erofskit's own: --stats)" },
	{ "-e", NO_VALUE, ACCEPT, NULL, NULL, NULL, "taken: --path and --nid always show the extents" },
	{ "--device", VALUE, PASS, "--device", NULL, "--device=FILE",
	  "an extra device's file (a --blobdev's blob), once per device" },
	{ "--offset", VALUE, PASS, "--offset", NULL, "--offset=N", "the image starts N bytes into IMAGE" },
	{ "-V", NO_VALUE, VERSION, NULL, NULL, "-V, --version", "print the version" },
	{ "--version", NO_VALUE, VERSION, NULL, NULL, NULL, NULL },
	{ "-h", NO_VALUE, HELP, NULL, NULL, NULL, NULL },
	{ "--help", NO_VALUE, HELP, NULL, NULL, "-h, --help", "this text" },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
};

/* ---------------------------------------------------------------- common */

static void help(const struct tool *tool)
{
	const struct row *r;

	printf("usage: %s [options] %s\n\n"
	       "erofskit %s under erofs-utils' name.  These upstream options are taken;\n"
	       "every other one is refused by name (exit status 2):\n\n",
	       tool->name, tool->operands, tool->command);
	for (r = tool->rows; r->upstream; r++)
		if (r->help)
			printf("  %-22s %s\n", r->form ? r->form : r->upstream, r->help);
	printf("\nThe options themselves: 'erofskit %s --help'.\n", tool->command);
}

static int apply(struct translation *t, const struct row *r, const char *value)
{
	int ret;

	switch (r->action) {
	case PASS:
		ret = push(t, r->erofskit);
		return ret == GO_ON && value ? push(t, value) : ret;
	case ACCEPT:
		return GO_ON;
	case SPECIAL:
		return r->special(t, value);
	case VERSION:
		printf("%s (erofskit) %s\n", t->tool->name, ek_version());
		return EXIT_OK;
	case HELP:
		help(t->tool);
		return EXIT_OK;
	}
	return EXIT_USAGE;
}

static const struct row *find_long(const struct tool *tool, const char *name, size_t len)
{
	const struct row *r;

	for (r = tool->rows; r->upstream; r++)
		if (!strncmp(r->upstream, name, len) && r->upstream[len] == '\0')
			return r;
	return NULL;
}

static const struct row *find_short(const struct tool *tool, char c)
{
	const struct row *r;

	for (r = tool->rows; r->upstream; r++)
		if (r->upstream[1] == c && r->upstream[2] == '\0')
			return r;
	return NULL;
}

/* --name, --name=V or --name V. */
static int translate_long(struct translation *t, int argc, char **argv, int *i)
{
	const char *arg = argv[*i], *eq = strchr(arg, '=');
	int len = eq ? (int)(eq - arg) : (int)strlen(arg);
	const struct row *r = find_long(t->tool, arg, (size_t)len);
	const char *value = eq ? eq + 1 : NULL;

	if (!r)
		return refuse(t, arg, len, NULL);
	if (r->takes == NO_VALUE && eq) {
		fprintf(stderr, "%s: option '%.*s' takes no value\n", t->tool->name, len, arg);
		return EXIT_USAGE;
	}
	if (r->takes == VALUE && !eq) {
		if (*i + 1 >= argc) {
			fprintf(stderr, "%s: option '%s' needs a value\n", t->tool->name, arg);
			return EXIT_USAGE;
		}
		value = argv[++*i];
	}
	return apply(t, r, value);
}

/* -abc, -TN, -T N: a cluster of short options, the last may take a value. */
static int translate_short(struct translation *t, int argc, char **argv, int *i)
{
	const char *p;
	int ret;

	for (p = argv[*i] + 1; *p; p++) {
		const struct row *r = find_short(t->tool, *p);
		char option[3] = { '-', *p, '\0' };

		if (!r)
			return refuse(t, option, 2, NULL);
		if (r->takes == NO_VALUE) {
			ret = apply(t, r, NULL);
			if (ret != GO_ON)
				return ret;
			continue;
		}
		if (p[1])
			return apply(t, r, p + 1);
		if (*i + 1 >= argc) {
			fprintf(stderr, "%s: option '%s' needs a value\n", t->tool->name, option);
			return EXIT_USAGE;
		}
		return apply(t, r, argv[++*i]);
	}
	return GO_ON;
}

static int translate(struct translation *t, int argc, char **argv)
{
	bool options_done = false;
	int i, ret = GO_ON;

	for (i = 1; i < argc && ret == GO_ON; i++) {
		const char *arg = argv[i];

		if (options_done || arg[0] != '-' || arg[1] == '\0')
			t->operands[t->noperands++] = argv[i];
		else if (!strcmp(arg, "--"))
			options_done = true;
		else if (arg[1] == '-')
			ret = translate_long(t, argc, argv, &i);
		else
			ret = translate_short(t, argc, argv, &i);
	}
	if (ret == GO_ON && t->tool->finish)
		ret = t->tool->finish(t);
	/* Operands after "--": an image named "-x" stays an image. */
	if (ret == GO_ON)
		ret = push(t, "--");
	for (i = 0; i < t->noperands && ret == GO_ON; i++)
		ret = push(t, t->operands[i]);
	return ret;
}

static int run(const struct tool *tool, int argc, char **argv)
{
	struct translation t = { .tool = tool };
	int ret;

	t.operands = calloc((size_t)argc + 1, sizeof(*t.operands));
	if (!t.operands || push(&t, tool->command) != GO_ON) {
		fprintf(stderr, "%s: out of memory\n", tool->name);
		free(t.operands);
		return EXIT_USAGE;
	}
	ret = translate(&t, argc, argv);
	if (ret == GO_ON)
		ret = tool->run(t.argc, t.argv);
	free(t.operands);
	free(t.argv);
	return ret;
}

static const struct tool mkfs_tool = {
	"mkfs.erofs", "mkfs", cmd_mkfs, "DESTINATION SOURCE", mkfs_rows, finish_mkfs,
};
static const struct tool fsck_tool = {
	"fsck.erofs", "fsck", cmd_fsck, "IMAGE", fsck_rows, NULL,
};
static const struct tool dump_tool = {
	"dump.erofs", "dump", cmd_dump, "IMAGE", dump_rows, finish_dump,
};

int dropin_mkfs(int argc, char **argv)
{
	return run(&mkfs_tool, argc, argv);
}

int dropin_fsck(int argc, char **argv)
{
	return run(&fsck_tool, argc, argv);
}

int dropin_dump(int argc, char **argv)
{
	return run(&dump_tool, argc, argv);
}
