/* erofskit mkfs: build an image from a directory, a tar or an OCI image layout. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blocklist.h"
#include "cli.h"
#include "sniff.h"
#include "erofskit/build.h"

static const char *const CMD = "mkfs";

static void usage(FILE *f)
{
	fprintf(f,
"usage: erofskit mkfs [options] IMAGE SOURCE_DIR\n"
"       erofskit mkfs [options] IMAGE SOURCE_IMAGE\n"
"       erofskit mkfs --tar [options] IMAGE [TARBALL|-]\n"
"       erofskit mkfs --oci DIR[:TAG] [options] IMAGE\n"
"       erofskit mkfs --oci oci://REGISTRY/REPO[:TAG|@DIGEST] [options] IMAGE\n"
"       erofskit mkfs --oci SOURCE --oci-layers OUTDIR [options]\n"
"\n"
"Build the EROFS image IMAGE from the directory SOURCE_DIR, from the tree\n"
"of the EROFS image SOURCE_IMAGE (to recompress it, or change its block\n"
"or cluster size or layout; read without mounting it), from a tar\n"
"archive (any tar dialect, compressed or not; standard input by default),\n"
"or from an OCI image, a layout on disk or an image in a registry (its\n"
"layers applied in order, whiteouts and all, into the one filesystem a\n"
"container would see).\n"
"The image is written to a temporary file beside IMAGE and renamed only on\n"
"success.  IMAGE '-' writes it to standard output (built in $TMPDIR first).\n"
"\n"
"options:\n"
"  -b SIZE               block size: 512, 1024, 2048 or 4096 (default 4096)\n"
"  -z ALG[,level=N]      compress: lz4, lz4hc, deflate, zstd or lzma\n"
"                        (also -zALG,N; lzma levels 100..109 are 'extreme');\n"
"                        ALG:ALG2:... more, for --compress-hints to pick\n"
"  -C BYTES              physical cluster size, a block multiple up to 1M\n"
"  -m SIZE[:ALG]         compress the metadata too: inodes, xattrs, indexes\n"
"                        and inline tails go into a metabox inode,\n"
"                        compressed in SIZE-byte clusters with -z's (first)\n"
"                        algorithm\n"
"                        (ALG may only repeat it); implies -E48bit; Linux\n"
"                        6.17 and later only (the kernel calls it\n"
"                        experimental)\n"
"  -E OPT[,OPT...]       layouts (mkfs.erofs's names):\n"
"                          ztailpacking     a file's last cluster after its inode\n"
"                          fragments[=SIZE] tails and small files compressed\n"
"                                           together in the packed inode\n"
"                                           (SIZE: its cluster size)\n"
"                          all-fragments[=SIZE]  every file whole in it\n"
"                          dedupe           identical clusters stored once\n"
"                          fragdedupe=inode|full|off  identical fragments once\n"
"                                           (whole files / tails too)\n"
"                          noinline_data    no uncompressed tail after an inode\n"
"                          xattr-name-filter  the xattr bloom filter (on;\n"
"                                           ^ turns it off, as --no-xattr-filter)\n"
"                          48bit            compact inodes keep their own mtime,\n"
"                                           long clusters get encoded extents\n"
"                                           (smaller; Linux 6.15 and later only)\n"
"                          dot-omitted      directories store no \".\" (the\n"
"                                           kernel makes it up); implies 48bit\n"
"                          force-inode-compact  every inode 32 bytes: mtimes\n"
"                                           as --ignore-mtime; an owner,\n"
"                                           link count or size that does\n"
"                                           not fit fails the build\n"
"                          force-inode-extended  every inode 64 bytes\n"
"                          force-chunk-indexes  chunk-based files index\n"
"                                           their chunks in 8 bytes each\n"
"                          force-inode-blockmap  in 4 (the default)\n"
"                          nosbcrc          no superblock checksum\n"
"                          legacy-compress  compressed files' indexes in\n"
"                                           the full form, 8 bytes an\n"
"                                           lcluster\n"
"                        ^OPT turns one off\n"
"  --workers N           compression threads (default: one per CPU this\n"
"                        process may use)\n"
"  -T SECONDS            build time and every file's mtime\n"
"  --mkfs-time           with -T: set only the build time\n"
"  --ignore-mtime        an inode only its mtime would make 64 bytes stays\n"
"                        32: its mtime becomes the epoch (-T's; else the\n"
"                        tree's most common mtime, or an archive's first;\n"
"                        with -E48bit its nanoseconds alone where that is\n"
"                        enough); --preserve-mtime (default) keeps them all\n"
"  -U UUID               filesystem UUID, or 'random' (default: derived from\n"
"                        the image content, so builds are reproducible)\n"
"  -L LABEL              volume label (at most 15 bytes)\n"
"  --all-root            make every file owned by root\n"
"  --force-uid UID       make every file owned by UID\n"
"  --force-gid GID       make every file's group GID\n"
"  --uid-offset N        add N to every owner (after the three above), as\n"
"                        a user namespace maps them (lxc.idmap u 0 N ...)\n"
"  --gid-offset N        add N to every group\n"
"  --hard-dereference    each name of a hard-linked file an inode of its own\n"
"                        (directory source)\n"
"  --no-xattrs           do not store extended attributes\n"
"  --no-xattr-filter     do not write the xattr bloom filter\n"
"  --offset BYTES        the image starts BYTES into IMAGE, zeros before it\n"
"                        (a multiple of 4096), for readers given the same\n"
"                        offset (fsck --offset, the kernel's fsoffset=)\n"
"  --root-xattr-isize SIZE\n"
"                        the root directory's inline xattr area at least\n"
"                        SIZE bytes (zero padded): room for xattrs set in\n"
"                        place later\n"
"  --xattr-share N       store an xattr carried by N inodes or more once, in\n"
"                        the shared area (default 2; 1: every xattr)\n"
"  --xattr-prefix PREFIX store PREFIX (trusted.overlay., user.foo.) once: xattr\n"
"                        names starting with it keep only the rest (Linux\n"
"                        6.4 and later); repeatable, up to 128\n"
"  --max-extent-bytes SIZE\n"
"                        a compressed extent holds at most SIZE bytes of\n"
"                        data (at least a block; default 8M): smaller ones\n"
"                        decode faster for a read at random\n"
"  --file-contexts FILE  SELinux labels from FILE (file_contexts rules,\n"
"                        read by libselinux) by each file's path in the\n"
"                        image, in place of the source's own\n"
"  --fs-config-file FILE Android's canned fs_config: each file's owner, mode\n"
"                        and capabilities are its line's in FILE ('PATH UID\n"
"                        GID MODE [capabilities=N]', PATH as on the device\n"
"                        without the leading '/'); a file missing from FILE\n"
"                        fails the build\n"
"  --mount-point PATH    the image's mount point on the device (system), put\n"
"                        before every path that fs_config, file_contexts\n"
"                        and the block list name\n"
"  --product-out DIR     taken with --fs-config-file, as Android's build\n"
"                        passes both (only FILE is read)\n"
"  --block-list-file FILE\n"
"                        write which blocks hold each file's data: a line\n"
"                        per file, '/PATH FIRST-LAST ...' (Android's OTA map)\n"
"  --no-sparse-chunks    store sparse files flat (holes as zero blocks)\n"
"  --chunksize SIZE      uncompressed files chunk-based, in SIZE-byte chunks\n"
"                        (a power of two, at least a block): chunks of zeros\n"
"                        cost nothing and equal chunks are stored once\n"
"                        (-E^dedupe: only the zeros); a file with neither\n"
"                        stays flat, its tail beside its inode\n"
"  --blobdev FILE        with --chunksize: the chunks go to FILE, the image's\n"
"                        extra device, not into the image (readers take it\n"
"                        with --device FILE; the image and FILE concatenated\n"
"                        read as one image)\n"
"  --exclude-path PATH   leave PATH out, and all under it: PATH is relative\n"
"                        to SOURCE_DIR, no leading '/' (usr/share/doc);\n"
"                        repeatable\n"
"  --exclude-regex RE    leave out what the POSIX extended regular expression\n"
"                        RE matches a part of such a path of; repeatable\n"
"  --compress-hints FILE per-file cluster sizes and algorithms: FILE's\n"
"                        lines 'SIZE [K] REGEX'; a compressed file whose\n"
"                        path (as for --exclude-regex) the first REGEX\n"
"                        matches gets SIZE-byte clusters instead of -C's,\n"
"                        compressed with -z's K-th algorithm (from 0)\n"
"  --tar                 the source is a tar archive, read as a stream;\n"
"                        its data is copied into the image (also --tar=f);\n"
"                        with =i, index mode: the image holds the metadata\n"
"                        only and points into the (uncompressed) tar, to be\n"
"                        appended to it: cat IMAGE TAR mounts (512-byte blocks)\n"
"  --tar-copy FILE       with --tar: also write the tar, decompressed (from\n"
"                        gzip, zstd or xz), to FILE; with --tar=i the image\n"
"                        points into FILE's tar: cat IMAGE FILE mounts\n"
"  --aufs                with --tar: .wh.NAME entries become overlayfs\n"
"                        whiteouts, .wh..wh..opq makes a directory opaque\n"
"  --ovlfs-strip         with --tar: overlayfs metadata goes: a whiteout\n"
"                        (0:0 device, or .wh.NAME with --aufs) only takes\n"
"                        its name away, opaque markers and the\n"
"                        trusted.overlay.opaque/origin xattrs are dropped\n"
"  --oci SOURCE          the source is an OCI image: SOURCE is DIR[:TAG], the\n"
"                        image layout DIR (the image tagged TAG, or its only\n"
"                        one), or oci://REGISTRY/REPO[:TAG|@sha256:DIGEST],\n"
"                        an image in a registry (TAG latest by default),\n"
"                        whose manifest, config and layers are fetched into\n"
"                        $TMPDIR (default /var/tmp) and removed after; every\n"
"                        blob's digest and size are checked\n"
"  --platform OS/ARCH[/VARIANT]\n"
"                        with --oci: the image index's entry to build, as\n"
"                        linux/arm64 or linux/arm/v7 (default: linux and\n"
"                        this machine's architecture)\n"
"  -o OPT,...            with --oci oci://...: how to reach the registry:\n"
CLI_REMOTE_HTTP_ITEMS
"       downloads=N        layers fetched at once, each over a connection\n"
"                          of its own (default 3; 1 to 16)\n"
"  --oci-layers OUTDIR   with --oci: one image per layer instead, named\n"
"                        NNN-DIGEST.erofs from 001 at the bottom, whiteouts\n"
"                        kept as with --aufs, for overlayfs to stack\n"
"  --oci-layer N|sha256:HEX\n"
"                        with --oci: layer N alone (1 at the bottom), or the\n"
"                        layer whose blob is sha256:HEX, built as --oci-layers\n"
"                        builds each (whiteouts kept); a registry's other\n"
"                        layers are not fetched\n"
"  --json                the summary as JSON on standard output (inodes,\n"
"                        bytes in and out, files per layout, time)\n"
"  -q, --quiet           no summary\n"
"  -h, --help            this text\n"
"\n"
"A SIZE or BYTES is a number of bytes, or takes K, M or G: 65536, 64K and\n"
"0x10000 are the same size.\n\n"
"SOURCE_DATE_EPOCH, when set and -T is not given, is the build time and\n"
"clamps newer mtimes, as reproducible-builds.org recommends.\n"
"\n"
"examples:\n"
"  erofskit mkfs root.erofs rootfs/\n"
"  erofskit mkfs -zlz4hc,12 -C65536 -T0 --all-root root.erofs rootfs/\n"
"  erofskit mkfs -zdeflate,level=9 -C65536 img.erofs dir/\n"
"  erofskit mkfs --tar -zlz4hc layer.erofs layer.tar.gz\n"
"  erofskit mkfs --oci ./layout:latest -zlz4hc root.erofs\n"
"  erofskit mkfs --oci oci://registry.example.com/library/debian:12 root.erofs\n");
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool parse_uuid(const char *s, uint8_t out[16])
{
	int i = 0;

	while (*s && i < 16) {
		int hi, lo;

		if (*s == '-') {
			s++;
			continue;
		}
		hi = hexval((unsigned char)s[0]);
		lo = s[1] ? hexval((unsigned char)s[1]) : -1;
		if (hi < 0 || lo < 0)
			return false;
		out[i++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return i == 16 && *s == '\0';
}

/* FROM_IMAGE: an EROFS image given as SOURCE_DIR, which ek_build reads. */
enum source_kind { FROM_DIR, FROM_IMAGE, FROM_TAR, FROM_OCI };

/* The signal that asked the build to stop, or 0. */
static volatile int stop_signal;

/* An atomic store: the library's threads read the flag as the build's
 * cancel (a lock-free int, safe in a handler). */
static void on_stop_signal(int sig)
{
	__atomic_store_n(&stop_signal, sig, __ATOMIC_RELAXED);
}

/*
 * Ctrl-C, kill and a closed terminal stop the build as a failure does: no
 * image, no temporary file, no scratch layout.  The handler goes after
 * one signal (SA_RESETHAND), so a second ends mkfs at once.  A signal
 * ignored at the start (nohup, a shell's background job) stays ignored.
 */
static void stop_on_signals(ek_build_options *o)
{
	static const int signals[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sa.sa_flags = SA_RESETHAND | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (!sigaction(signals[i], NULL, &old) && old.sa_handler != SIG_IGN)
			sigaction(signals[i], &sa, NULL);
	o->cancel = &stop_signal;
}

/* A failed build's message and exit status: stopped by a signal, 128 and
 * its number, as a shell reports a command the signal ended. */
static int build_failed(int ret, enum source_kind kind, const char *not_written,
			const ek_error *err)
{
	if (ret == -ECANCELED && stop_signal) {
		cli_error(CMD, "stopped by %s: %s", stop_signal == SIGINT ? "SIGINT" :
			  stop_signal == SIGTERM ? "SIGTERM" : "SIGHUP", not_written);
		return 128 + stop_signal;
	}
	cli_error(CMD, "%s", err->message);
	/* A bad archive is bad input, like a corrupt image to fsck. */
	return kind != FROM_DIR && ek_is_image_error(ret) ? EXIT_CORRUPT : EXIT_USAGE;
}

/* From an archive the files are not known until it ends: its bytes read
 * measure the way instead (when it is a file, not a pipe).  From a
 * registry, the layers' download comes first, a phase of its own. */
static void progress(void *ctx, const ek_build_progress *p)
{
	cli_progress_phase(ctx, p->fetch_total ? "mkfs: fetching layers" : "mkfs");
	if (p->fetch_total)
		cli_progress_update(ctx, p->fetch_done, p->fetch_total);
	else if (p->input_total)
		cli_progress_files(ctx, p->files_done, 0, p->input_done, p->input_total);
	else
		cli_progress_files(ctx, p->files_done, p->files_total, p->bytes_done,
				   p->bytes_total);
}

enum {
	OPT_WORKERS = 256, OPT_MKFS_TIME, OPT_ALL_ROOT, OPT_FORCE_UID,
	OPT_FORCE_GID, OPT_NO_XATTRS, OPT_NO_FILTER, OPT_XATTR_SHARE, OPT_FILE_CONTEXTS,
	OPT_MAX_EXTENT, OPT_OVLFS_STRIP, OPT_TAR_COPY, OPT_NO_SPARSE, OPT_CHUNKSIZE,
	OPT_IGNORE_MTIME, OPT_PRESERVE_MTIME, OPT_UID_OFFSET, OPT_GID_OFFSET, OPT_JSON,
	OPT_TAR, OPT_AUFS, OPT_OCI, OPT_OCI_LAYERS, OPT_OCI_LAYER, OPT_PLATFORM, OPT_EXCLUDE_PATH,
	OPT_EXCLUDE_REGEX,
	OPT_COMPRESS_HINTS, OPT_FS_CONFIG, OPT_MOUNT_POINT, OPT_PRODUCT_OUT, OPT_BLOCK_LIST,
	OPT_BLOBDEV, OPT_HARD_DEREF, OPT_ROOT_XATTR_ISIZE, OPT_XATTR_PREFIX, OPT_OFFSET,
};

/*
 * The --json summary.  Field names are documented in erofskit-mkfs(1);
 * keep them stable.  On failure "result" is "error" and "error" says why.
 */
static void print_json(const char *image, const ek_build_stats *st, const char *error)
{
	fputs("{\n  \"image\": ", stdout);
	cli_json_string(stdout, image, strlen(image));
	printf(",\n  \"result\": \"%s\",\n  \"error\": ", error ? "error" : "ok");
	if (error)
		cli_json_string(stdout, error, strlen(error));
	else
		fputs("null", stdout);
	printf(",\n  \"inodes\": %llu,\n  \"regular_files\": %llu,\n"
	       "  \"directories\": %llu,\n  \"input_bytes\": %llu,\n"
	       "  \"image_bytes\": %llu,\n  \"blob_bytes\": %llu,\n  \"compressed_files\": %llu,\n"
	       "  \"layouts\": {\n    \"fragment_files\": %llu,\n"
	       "    \"fragment_tails\": %llu,\n    \"packed_bytes\": %llu,\n"
	       "    \"inline_tails\": %llu,\n    \"dedupe_hits\": %llu,\n"
	       "    \"chunked_files\": %llu,\n    \"zero_chunks\": %llu\n  },\n"
	       "  \"seconds\": %.3f\n}\n",
	       (unsigned long long)st->files, (unsigned long long)st->regular_files,
	       (unsigned long long)st->directories, (unsigned long long)st->input_bytes,
	       (unsigned long long)st->image_bytes, (unsigned long long)st->blob_bytes,
	       (unsigned long long)st->compressed_files, (unsigned long long)st->fragment_files, (unsigned long long)st->fragment_tails,
	       (unsigned long long)st->packed_bytes, (unsigned long long)st->inline_tails,
	       (unsigned long long)st->dedupe_hits, (unsigned long long)st->chunked_files,
	       (unsigned long long)st->zero_chunks, st->seconds);
}

static void print_summary(FILE *f, const char *image, const ek_build_stats *st)
{
	fprintf(f, "%s: %llu inodes (%llu files, %llu directories), %llu input bytes -> %llu image bytes in %.2f s\n",
		image, (unsigned long long)st->files,
		(unsigned long long)st->regular_files,
		(unsigned long long)st->directories,
		(unsigned long long)st->input_bytes,
		(unsigned long long)st->image_bytes, st->seconds);
	if (st->compressed_files)
		fprintf(f, "%s: %llu compressed files: %llu whole in the packed inode, %llu with their tail there (%llu bytes packed), %llu with it after the inode\n",
			image, (unsigned long long)st->compressed_files,
			(unsigned long long)st->fragment_files,
			(unsigned long long)st->fragment_tails,
			(unsigned long long)st->packed_bytes,
			(unsigned long long)st->inline_tails);
	if (st->chunked_files)
		fprintf(f, "%s: %llu files chunk-based, %llu of their chunks holes\n",
			image, (unsigned long long)st->chunked_files,
			(unsigned long long)st->zero_chunks);
	if (st->blob_bytes)
		fprintf(f, "%s: their chunks in the blob: %llu bytes\n", image,
			(unsigned long long)st->blob_bytes);
	if (st->dedupe_hits)
		fprintf(f, "%s: %llu clusters, fragments, chunks or files stored once for several\n",
			image, (unsigned long long)st->dedupe_hits);
}

/* The whole of the file at path onto standard output. */
static int copy_to_stdout(const char *path, ek_error *err)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got = 0;

	if (fd < 0)
		goto fail;
	for (;;) {
		ssize_t put = 0;

		/* A kernel copy when standard output is a file. */
		got = copy_file_range(fd, NULL, STDOUT_FILENO, NULL, 1 << 30, 0);
		if (got > 0)
			continue;
		if (got == 0)
			break;
		got = read(fd, buf, sizeof(buf));
		if (got <= 0)
			break;
		while (put < got) {
			ssize_t n = write(STDOUT_FILENO, buf + put, (size_t)(got - put));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				goto fail;
			put += n;
		}
	}
	if (got < 0)
		goto fail;
	close(fd);
	return 0;
fail:
	err->code = -(errno ? errno : EIO);
	snprintf(err->message, sizeof(err->message), "standard output: %s",
		 strerror(-err->code));
	if (fd >= 0)
		close(fd);
	return err->code;
}

/* What the image is built from. */
static int build_from(enum source_kind kind, const char *image, const char *source,
		      const ek_build_options *o, ek_build_stats *stats, ek_error *err)
{
	switch (kind) {
	case FROM_TAR:
		return ek_build_tar(image, source, o, stats, err);
	case FROM_OCI:
		return ek_build_oci(image, source, o, stats, err);
	default:
		return ek_build(image, source, o, stats, err);
	}
}

static void layer_done(void *ctx, size_t index, size_t count, const char *image,
		       const ek_build_stats *st)
{
	const bool *quiet = ctx;

	if (!*quiet)
		printf("layer %zu of %zu: %s (%llu inodes, %llu bytes)\n", index + 1, count, image,
		       (unsigned long long)st->files, (unsigned long long)st->image_bytes);
}

/* Whether IMAGE and SOURCE look given the other way round: the source
 * missing, and a directory where the image would be written. */
static bool swapped(const char *image, const char *source)
{
	struct stat st;

	return stat(source, &st) < 0 && errno == ENOENT && stat(image, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

/* --block-list-file, written before the image takes its name. */
struct block_list {
	const char *path;
	const ek_build_options *o;  /* the build's: its offset and mount point */
	bool failed;                /* the list's failure, not the build's */
};

/*
 * The image and its list appear together: the library calls this with
 * the finished image under its temporary name, and renames it only if
 * the list was written.  A list that cannot be written (its directory
 * missing, a name with white space) leaves IMAGE as it was.
 */
static int write_list_before_commit(void *ctx, const char *path, ek_error *err)
{
	struct block_list *l = ctx;
	int ret = write_block_list(path, l->o->image_offset, l->o->mount_point, l->path, err);

	l->failed = ret != 0;
	return ret;
}

/*
 * IMAGE '-': build into a private directory of $TMPDIR (ek_build writes
 * beside its target and renames), then stream the image out.  Nothing is
 * written to standard output unless the whole build succeeded.
 */
static int build_to_stdout(enum source_kind kind, const char *source, const ek_build_options *o,
			   ek_build_stats *stats, ek_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], image[4200];
	int ret;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/erofskit-mkfs.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		err->code = -errno;
		snprintf(err->message, sizeof(err->message),
			 "cannot make a temporary directory in %s: %s", tmp, strerror(errno));
		return err->code;
	}
	snprintf(image, sizeof(image), "%s/image", dir);
	ret = build_from(kind, image, source, o, stats, err);
	if (!ret)
		ret = copy_to_stdout(image, err);
	unlink(image);
	rmdir(dir);
	return ret;
}

/* A size-like option's value, up to 32 bits (0 only where zero_ok), or an
 * error naming what it was for and what it may be. */
static bool size_option(const char *arg, bool zero_ok, const char *what, const char *hint,
			uint32_t *out)
{
	uint64_t v;

	if (!ek_parse_size(arg, &v) && (v || zero_ok) && v <= UINT32_MAX) {
		*out = (uint32_t)v;
		return true;
	}
	cli_error(CMD, "invalid %s '%s'%s", what, arg, hint);
	return false;
}

/* The member an owner option (--force-uid ... --gid-offset) sets. */
static int64_t *id_option(ek_build_options *o, int opt)
{
	switch (opt) {
	case OPT_FORCE_UID:
		return &o->force_uid;
	case OPT_FORCE_GID:
		return &o->force_gid;
	case OPT_UID_OFFSET:
		return &o->uid_offset;
	default:
		return &o->gid_offset;
	}
}

/* -m SIZE[:ALG]: the metabox's cluster; ALG is checked once -z is known. */
static int parse_metabox(const char *arg, ek_build_options *o, const char **alg)
{
	char size[32];
	const char *colon = strchr(arg, ':');
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg);

	if (len >= sizeof(size)) {
		cli_error(CMD, "invalid metabox cluster size '%s'", arg);
		return -1;
	}
	memcpy(size, arg, len);
	size[len] = '\0';
	if (!size_option(size, false, "metabox cluster size", " (a block multiple up to 1M)",
			 &o->metabox_cluster))
		return -1;
	*alg = colon ? colon + 1 : NULL;
	return 0;
}

/* --oci-layer N (from 1) or sha256:HEX (the library checks the digits). */
static int parse_oci_layer(const char *arg, ek_build_options *o)
{
	uint32_t n;

	if (!strncmp(arg, "sha256:", 7)) {
		o->oci_layer_digest = arg;
		o->oci_layer = 0;
		return 0;
	}
	if (!cli_parse_count(arg, 1, UINT32_MAX, &n)) {
		cli_error(CMD, "--oci-layer '%s': a layer's number from 1 (the bottom one), "
			  "or sha256:HEX", arg);
		return -1;
	}
	o->oci_layer = n;
	o->oci_layer_digest = NULL;
	return 0;
}

/* The metabox is compressed with the data's (first) algorithm: -m's may
 * only name that one again. */
static int check_metabox_alg(const char *alg, const ek_build_options *o)
{
	ek_build_options m;
	ek_error err;

	ek_build_options_init(&m);
	if (ek_parse_compressor(alg, &m, &err)) {
		cli_error(CMD, "-m ...:%s: %s", alg, err.message);
		return -1;
	}
	if (m.compressor != o->compressor || (m.level >= 0 && m.level != o->level) ||
	    m.extra_codec_count) {
		cli_error(CMD, "-m ...:%s: the metabox is compressed like the data (-z); "
			       "a second algorithm or level is not supported", alg);
		return -1;
	}
	return 0;
}

/* The --exclude-path, --exclude-regex and --xattr-prefix operands,
 * NULL-terminated, in arrays with room for every argument. */
struct option_lists {
	const char **paths, **regexes, **prefixes;
	size_t npaths, nregexes, nprefixes;
};

static int mkfs_main(int argc, char **argv, struct option_lists *ex)
{
	static const struct option longopts[] = {
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "mkfs-time", no_argument, NULL, OPT_MKFS_TIME },
		{ "all-root", no_argument, NULL, OPT_ALL_ROOT },
		{ "force-uid", required_argument, NULL, OPT_FORCE_UID },
		{ "force-gid", required_argument, NULL, OPT_FORCE_GID },
		{ "uid-offset", required_argument, NULL, OPT_UID_OFFSET },
		{ "gid-offset", required_argument, NULL, OPT_GID_OFFSET },
		{ "no-xattrs", no_argument, NULL, OPT_NO_XATTRS },
		{ "no-xattr-filter", no_argument, NULL, OPT_NO_FILTER },
		{ "xattr-share", required_argument, NULL, OPT_XATTR_SHARE },
		{ "file-contexts", required_argument, NULL, OPT_FILE_CONTEXTS },
		{ "max-extent-bytes", required_argument, NULL, OPT_MAX_EXTENT },
		{ "ovlfs-strip", no_argument, NULL, OPT_OVLFS_STRIP },
		{ "tar-copy", required_argument, NULL, OPT_TAR_COPY },
		{ "no-sparse-chunks", no_argument, NULL, OPT_NO_SPARSE },
		{ "chunksize", required_argument, NULL, OPT_CHUNKSIZE },
		{ "ignore-mtime", no_argument, NULL, OPT_IGNORE_MTIME },
		{ "preserve-mtime", no_argument, NULL, OPT_PRESERVE_MTIME },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "tar", optional_argument, NULL, OPT_TAR },
		{ "aufs", no_argument, NULL, OPT_AUFS },
		{ "oci", required_argument, NULL, OPT_OCI },
		{ "oci-layers", required_argument, NULL, OPT_OCI_LAYERS },
		{ "oci-layer", required_argument, NULL, OPT_OCI_LAYER },
		{ "platform", required_argument, NULL, OPT_PLATFORM },
		{ "exclude-path", required_argument, NULL, OPT_EXCLUDE_PATH },
		{ "exclude-regex", required_argument, NULL, OPT_EXCLUDE_REGEX },
		{ "compress-hints", required_argument, NULL, OPT_COMPRESS_HINTS },
		{ "xattr-prefix", required_argument, NULL, OPT_XATTR_PREFIX },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "fs-config-file", required_argument, NULL, OPT_FS_CONFIG },
		{ "mount-point", required_argument, NULL, OPT_MOUNT_POINT },
		{ "product-out", required_argument, NULL, OPT_PRODUCT_OUT },
		{ "block-list-file", required_argument, NULL, OPT_BLOCK_LIST },
		{ "blobdev", required_argument, NULL, OPT_BLOBDEV },
		{ "hard-dereference", no_argument, NULL, OPT_HARD_DEREF },
		{ "root-xattr-isize", required_argument, NULL, OPT_ROOT_XATTR_ISIZE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	ek_build_options o;
	ek_open_options remote;     /* -o: its http options only */
	ek_build_stats stats;
	struct cli_progress prog;
	struct sniffed sniffed;
	bool quiet = false, json = false, tar = false, block_size_set = false, to_stdout;
	struct block_list list = { NULL, NULL, false };
	const char *sde, *image, *source, *oci = NULL, *oci_layers = NULL, *metabox_alg = NULL;
	const char *product_out = NULL, *block_list = NULL;
	enum source_kind kind;
	ek_error err;
	int64_t iv;
	int c, ret;

	ek_build_options_init(&o);
	ek_open_options_init(&remote);
	optind = 1;
	while ((c = cli_getopt(CMD, argc, argv, "b:z:C:m:E:T:U:L:o:qh", longopts)) != -1) {
		switch (c) {
		case 'b':
			if (!size_option(optarg, true, "block size", "", &o.block_size))
				return EXIT_USAGE;
			block_size_set = true;
			break;
		case 'z':
			if (ek_parse_compressor(optarg, &o, &err)) {
				cli_error(CMD, "%s", err.message);
				return EXIT_USAGE;
			}
			break;
		case 'm':
			if (parse_metabox(optarg, &o, &metabox_alg))
				return EXIT_USAGE;
			break;
		case 'C':
			if (!size_option(optarg, false, "cluster size", " (a block multiple up to 1M)",
					 &o.pcluster_size))
				return EXIT_USAGE;
			break;
		case 'E':
			if (ek_parse_extended_options(optarg, &o, &err)) {
				cli_error(CMD, "%s", err.message);
				return EXIT_USAGE;
			}
			break;
		case OPT_WORKERS:
			if (!cli_parse_workers(CMD, optarg, &o.workers))
				return EXIT_USAGE;
			break;
		case 'T':
			if (!cli_parse_int(optarg, &iv)) {
				cli_error(CMD, "invalid timestamp '%s'", optarg);
				return EXIT_USAGE;
			}
			o.timestamp_set = true;
			o.timestamp = iv;
			break;
		case OPT_MKFS_TIME:
			o.timestamp_build_only = true;
			break;
		case 'U':
			if (!strcmp(optarg, "random")) {
				o.uuid_random = true;
			} else if (parse_uuid(optarg, o.uuid)) {
				o.uuid_set = true;
			} else {
				cli_error(CMD, "invalid UUID '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'L':
			if (strlen(optarg) > 15) {
				cli_error(CMD, "label '%s' is longer than 15 bytes", optarg);
				return EXIT_USAGE;
			}
			strncpy(o.label, optarg, sizeof(o.label) - 1);
			break;
		case OPT_ALL_ROOT:
			o.all_root = true;
			break;
		case OPT_FORCE_UID:
		case OPT_FORCE_GID:
		case OPT_UID_OFFSET:
		case OPT_GID_OFFSET:
			if (!cli_parse_int(optarg, &iv) || iv < 0 || iv > UINT32_MAX) {
				cli_error(CMD, "invalid id%s '%s' (0 to 4294967295)",
					  c == OPT_UID_OFFSET || c == OPT_GID_OFFSET ? " offset" : "",
					  optarg);
				return EXIT_USAGE;
			}
			*id_option(&o, c) = iv;
			break;
		case OPT_NO_XATTRS:
			o.no_xattrs = true;
			break;
		case OPT_NO_FILTER:
			o.no_xattr_filter = true;
			break;
		case OPT_TAR_COPY:
			o.tar_copy = optarg;
			break;
		case OPT_OVLFS_STRIP:
			o.ovlfs_strip = true;
			break;
		case OPT_MAX_EXTENT:
			if (!size_option(optarg, false, "--max-extent-bytes", " (at least a block)",
					 &o.max_extent_bytes))
				return EXIT_USAGE;
			break;
		case OPT_FILE_CONTEXTS:
			o.file_contexts = optarg;
			break;
		case OPT_FS_CONFIG:
			o.fs_config = optarg;
			break;
		case OPT_MOUNT_POINT:
			o.mount_point = optarg;
			break;
		case OPT_PRODUCT_OUT:
			product_out = optarg;
			break;
		case OPT_BLOCK_LIST:
			block_list = optarg;
			break;
		case OPT_BLOBDEV:
			o.blob_path = optarg;
			break;
		case OPT_HARD_DEREF:
			o.hard_dereference = true;
			break;
		case OPT_ROOT_XATTR_ISIZE:
			if (!size_option(optarg, true, "--root-xattr-isize", " (bytes)",
					 &o.root_xattr_isize))
				return EXIT_USAGE;
			break;
		case OPT_XATTR_SHARE:
			if (!cli_parse_count(optarg, 1, UINT32_MAX, &o.xattr_share)) {
				cli_error(CMD, "--xattr-share '%s': expected a number of inodes, "
					  "at least 1", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_NO_SPARSE:
			o.no_sparse_chunks = true;
			break;
		case OPT_CHUNKSIZE:
			if (!size_option(optarg, false, "chunk size",
					 " (a power of two, at least a block)", &o.chunk_size))
				return EXIT_USAGE;
			break;
		case OPT_IGNORE_MTIME:
		case OPT_PRESERVE_MTIME:
			o.ignore_mtime = c == OPT_IGNORE_MTIME;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_TAR:
			if (optarg && strcmp(optarg, "f") && strcmp(optarg, "i")) {
				cli_error(CMD, "--tar=%s: the modes are f (copy the data in) and i (index the tar)",
					  optarg);
				return EXIT_USAGE;
			}
			o.tar_index = optarg && !strcmp(optarg, "i");
			tar = true;
			break;
		case OPT_AUFS:
			o.aufs = true;
			break;
		case OPT_OCI:
			oci = optarg;
			break;
		case OPT_OCI_LAYERS:
			oci_layers = optarg;
			break;
		case OPT_OCI_LAYER:
			if (parse_oci_layer(optarg, &o))
				return EXIT_USAGE;
			break;
		case OPT_PLATFORM:
			o.platform = optarg;
			break;
		case OPT_EXCLUDE_PATH:
			ex->paths[ex->npaths++] = optarg;
			o.exclude_paths = ex->paths;
			break;
		case OPT_EXCLUDE_REGEX:
			ex->regexes[ex->nregexes++] = optarg;
			o.exclude_regexes = ex->regexes;
			break;
		case OPT_COMPRESS_HINTS:
			o.compress_hints = optarg;
			break;
		case OPT_OFFSET:
			if (cli_parse_offset(CMD, "--offset", optarg, &o.image_offset))
				return EXIT_USAGE;
			break;
		case OPT_XATTR_PREFIX:
			ex->prefixes[ex->nprefixes++] = optarg;
			o.xattr_prefixes = ex->prefixes;
			break;
		case 'o':
			if (cli_remote_options(CMD, CLI_REMOTE_PULL, optarg, &remote))
				return EXIT_USAGE;
			o.http = &remote.http;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			cli_usage_error(CMD, usage);
			return EXIT_USAGE;
		}
	}
	if (oci && tar) {
		cli_error(CMD, "--oci and --tar: the source is one or the other");
		return EXIT_USAGE;
	}
	if (oci_layers && !oci) {
		cli_error(CMD, "--oci-layers needs --oci");
		return EXIT_USAGE;
	}
	if ((o.oci_layer || o.oci_layer_digest) && (!oci || oci_layers)) {
		cli_error(CMD, oci_layers ? "--oci-layer picks one layer: --oci-layers builds "
			       "them all" : "--oci-layer picks a layer of an image: it needs "
			       "--oci");
		return EXIT_USAGE;
	}
	if (o.platform && !oci) {
		cli_error(CMD, "--platform picks an image index's entry: it needs --oci");
		return EXIT_USAGE;
	}
	if (o.http && !(oci && !strncmp(oci, "oci://", 6))) {
		cli_error(CMD, "-o says how to reach a registry: it needs --oci oci://...");
		return EXIT_USAGE;
	}
	if ((ex->npaths || ex->nregexes) && (tar || oci)) {
		cli_error(CMD, "--exclude-path and --exclude-regex take a directory source");
		return EXIT_USAGE;
	}
	if (o.xattr_share && (tar || oci)) {
		cli_error(CMD, "--xattr-share takes a directory source (an archive's xattrs are inline)");
		return EXIT_USAGE;
	}
	if (o.tar_copy && !tar) {
		cli_error(CMD, "--tar-copy takes a tar source");
		return EXIT_USAGE;
	}
	/* Android's mkfs.erofs reads the product tree's fs_config there only
	 * where no canned file is given, through libcutils' table of
	 * Android's ids, which erofskit does not have. */
	if (product_out && !o.fs_config) {
		cli_error(CMD, "--product-out is read only with --fs-config-file (erofskit has no "
			       "built-in Android fs_config): give the canned fs_config file");
		return EXIT_USAGE;
	}
	if (block_list && (oci_layers || o.tar_index || o.blob_path)) {
		cli_error(CMD, "--block-list-file lists the image's blocks: %s",
			  oci_layers ? "not with --oci-layers (an image per layer)" :
			  o.tar_index ? "not with --tar=i (the data is the tar's)" :
					"not with --blobdev (the data is the blob's)");
		return EXIT_USAGE;
	}
	if (o.ovlfs_strip && !tar) {
		cli_error(CMD, "--ovlfs-strip takes a tar source (--oci applies the whiteouts)");
		return EXIT_USAGE;
	}
	if (oci_layers ? argc != optind :
	    oci ? argc - optind != 1 :
	    tar ? argc - optind < 1 || argc - optind > 2 : argc - optind != 2) {
		cli_error(CMD, oci_layers ? "--oci-layers writes into OUTDIR: no IMAGE" :
			       oci ? "expected IMAGE (the source is --oci's)" :
			       tar ? "expected IMAGE and at most one TARBALL" :
				     "expected IMAGE and SOURCE_DIR");
		cli_usage_error(CMD, usage);
		return EXIT_USAGE;
	}
	if (metabox_alg && check_metabox_alg(metabox_alg, &o))
		return EXIT_USAGE;
	if (o.tar_index && !block_size_set)
		o.block_size = 512;     /* tar's own */
	if (o.aufs && !tar) {
		cli_error(CMD, oci ? "--aufs needs --tar (--oci applies the whiteouts; "
			       "--oci-layers keeps them)" : "--aufs needs --tar");
		return EXIT_USAGE;
	}
	sde = getenv("SOURCE_DATE_EPOCH");
	if (sde && *sde && !o.timestamp_set) {
		if (!cli_parse_int(sde, &iv)) {
			cli_error(CMD, "invalid SOURCE_DATE_EPOCH '%s'", sde);
			return EXIT_USAGE;
		}
		o.timestamp = iv;
		o.clamp_mtime = true;
	}
	kind = oci ? FROM_OCI : tar ? FROM_TAR : FROM_DIR;
	stop_on_signals(&o);
	if (oci_layers) {
		ret = ek_build_oci_layers(oci_layers, oci, &o, layer_done, &quiet, &err);
		return !ret ? EXIT_OK : build_failed(ret, kind, "no layer's image is left", &err);
	}
	image = argv[optind];
	source = oci ? oci : optind + 1 < argc ? argv[optind + 1] : "-";
	to_stdout = !strcmp(image, "-");
	if (to_stdout && tar && !strcmp(source, "-")) {
		cli_error(CMD, "IMAGE '-' and a tar on standard input: one of them must be a file");
		return EXIT_USAGE;
	}
	if (kind == FROM_DIR && !strcmp(source, "-")) {
		cli_error(CMD, "SOURCE '-' (a tar on standard input) needs --tar");
		return EXIT_USAGE;
	}
	/* The library takes an image where a directory goes; a bad one is
	 * bad input, as a bad archive is. */
	if (kind == FROM_DIR && sniff_source(source, &sniffed) && sniffed.erofs)
		kind = FROM_IMAGE;
	/* A tar typed at a terminal is never meant: the user forgot the
	 * TARBALL, and libarchive would only call the input unrecognised. */
	if (kind == FROM_TAR && !strcmp(source, "-") && isatty(STDIN_FILENO)) {
		cli_error(CMD, "no TARBALL, and standard input is a terminal; name the tar or pipe it in");
		return EXIT_USAGE;
	}
	if (to_stdout && block_list) {
		cli_error(CMD, "--block-list-file reads the image back: IMAGE must be a file, not '-'");
		return EXIT_USAGE;
	}
	if (to_stdout && json) {
		cli_error(CMD, "--json and IMAGE '-' both want standard output");
		return EXIT_USAGE;
	}
	if (to_stdout && isatty(STDOUT_FILENO)) {
		cli_error(CMD, "IMAGE '-': standard output is a terminal; redirect it to a file or a pipe");
		return EXIT_USAGE;
	}
	memset(&stats, 0, sizeof(stats));
	cli_progress_init(&prog, "mkfs");
	if (prog.enabled) {     /* else the library need not count */
		o.progress = progress;
		o.progress_ctx = &prog;
	}
	if (block_list) {
		list.path = block_list;
		list.o = &o;
		o.before_commit = write_list_before_commit;
		o.before_commit_ctx = &list;
	}
	if (to_stdout)
		ret = build_to_stdout(kind, source, &o, &stats, &err);
	else
		ret = build_from(kind, image, source, &o, &stats, &err);
	cli_progress_done(&prog);
	if (ret && json)
		print_json(image, &stats, err.message);
	if (ret && list.failed) {
		cli_error(CMD, "%s (the image was not written)", err.message);
		return EXIT_USAGE;
	}
	if (ret) {
		ret = build_failed(ret, kind, to_stdout ? "nothing was written" :
				   "the image was not written", &err);
		if (kind == FROM_DIR && !to_stdout && swapped(image, source))
			cli_error(CMD, "(the image comes first: erofskit mkfs IMAGE SOURCE)");
		else if (kind == FROM_DIR && err.code == -ENOTDIR && sniff_source(source, &sniffed))
			cli_error(CMD, "(%s is %s: %s)", source, sniffed.what, sniffed.advice);
		return ret;
	}
	if (json)
		print_json(image, &stats, NULL);
	else if (!quiet)
		print_summary(to_stdout ? stderr : stdout, image, &stats);
	return EXIT_OK;
}

int cmd_mkfs(int argc, char **argv)
{
	struct option_lists ex = {
		calloc((size_t)argc + 1, sizeof(char *)), calloc((size_t)argc + 1, sizeof(char *)),
		calloc((size_t)argc + 1, sizeof(char *)), 0, 0, 0,
	};
	int ret = EXIT_USAGE;

	if (ex.paths && ex.regexes && ex.prefixes)
		ret = mkfs_main(argc, argv, &ex);
	else
		cli_error(CMD, "out of memory");
	free(ex.paths);
	free(ex.regexes);
	free(ex.prefixes);
	return ret;
}
