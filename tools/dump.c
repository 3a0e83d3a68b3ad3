/* erofskit dump: the superblock, one inode, a directory listing, a file. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dumpstats.h"
#include "erofskit/erofskit.h"

static const char *const CMD = "dump";

/* A name from the image in the text output: as it is into a pipe (as
 * ls(1) does, for scripts), with control bytes shown as \xNN on a
 * terminal, which would act on them. */
static void show_name(const char *name, size_t len)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDOUT_FILENO);
	if (tty)
		cli_text(stdout, name, len);
	else
		fwrite(name, 1, len, stdout);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: erofskit dump [options] IMAGE\n"
"\n"
"Without options, print the superblock.  IMAGE '-' reads the image from\n"
"standard input.\n"
"\n"
"options:\n"
"  --path P       one inode in detail: attributes, layout, xattrs, extents\n"
"  --nid N        the same for the inode N, such as the packed inode\n"
"  --ls P         list the directory P\n"
"  --cat P        write the contents of file P to standard output\n"
"  --stats        statistics of the whole image: inodes by type and\n"
"                 layout, file sizes, where the data is and how much it\n"
"                 was compressed\n"
"  --json         machine-readable output (with --path, --ls, --stats or\n"
"                 alone)\n"
"  --engine NAME  a decoder; repeat for both algorithms:\n"
"                 deflate: libdeflate (default), isal, zlib\n"
"                 lzma: builtin (default, erofskit's), liblzma\n"
"  --device FILE  the file of the image's next extra device (an\n"
"                 upstream --blobdev's blob), in its device table's\n"
"                 order; once per device\n"
"  --offset BYTES the image starts BYTES into IMAGE (as mkfs --offset\n"
"                 writes it)\n"
"  -o OPT,...     options of an IMAGE at a URL:\n"
CLI_REMOTE_ITEMS
"  -h, --help     this text\n"
"\n"
"IMAGE may be an http:// or https:// URL, or oci://REGISTRY/REPO:TAG (or\n"
"REPO@sha256:DIGEST) for an image erofskit push stored; it is read with\n"
"Range requests, its blocks kept in a cache that later runs share.\n"
"\n"
"examples:\n"
"  erofskit dump root.erofs\n"
"  erofskit dump --path /etc/passwd --json root.erofs\n"
"  erofskit dump --cat /etc/os-release root.erofs\n"
"  erofskit dump --stats root.erofs\n"
"  erofskit dump https://example.com/root.erofs\n");
}

static const char *type_name(uint32_t mode)
{
	return ek_file_type_name(ek_file_type_of_mode(mode));
}

static void mode_string(uint32_t mode, char out[11])
{
	static const char types[] = "?pc?d?b?-?l?s???";
	const char *rwx = "rwxrwxrwx";
	int i;

	out[0] = types[(mode >> 12) & 15];
	for (i = 0; i < 9; i++)
		out[1 + i] = (mode & (1u << (8 - i))) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = (mode & S_IXOTH) ? 't' : 'T';
	out[10] = '\0';
}

static void time_string(int64_t sec, uint32_t nsec, char *out, size_t size)
{
	time_t t = (time_t)sec;
	struct tm tm;
	char base[64];

	if (!gmtime_r(&t, &tm) || !strftime(base, sizeof(base), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(base, sizeof(base), "%lld", (long long)sec);
	snprintf(out, size, "%s.%09u UTC", base, nsec);
}

static void uuid_string(const uint8_t *u, char out[37])
{
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
		 u[11], u[12], u[13], u[14], u[15]);
}

static void algorithms_string(uint16_t bitmap, char *out, size_t size)
{
	size_t used = 0;
	unsigned int i;

	out[0] = '\0';
	for (i = 0; i < 16 && used < size; i++)
		if (bitmap & (1u << i))
			used += (size_t)snprintf(out + used, size - used, "%s%s",
						 used ? "," : "", ek_algorithm_name(i));
}

/* Where each extra device is read from, in words. */
static const char *device_source(const ek_device_info *d)
{
	if (d->own_file)
		return "its own file";
	if (d->physical == UINT64_MAX)
		return "nowhere (its file not given)";
	if (!d->readable)
		return "nowhere (the image file ends before it; its file not given)";
	return "the image file";
}

static void print_device_json(const ek_device_info *d, bool first)
{
	printf("%s{\"tag\": ", first ? "" : ", ");
	cli_json_string(stdout, d->tag, strlen(d->tag));
	printf(", \"blocks\": %llu, \"uniaddr\": %llu, \"own_file\": %s, \"physical\": ",
	       (unsigned long long)d->blocks, (unsigned long long)d->uniaddr,
	       d->own_file ? "true" : "false");
	if (d->physical == UINT64_MAX)
		fputs("null}", stdout);
	else
		printf("%llu}", (unsigned long long)d->physical);
}

static void print_device_text(const ek_device_info *d, unsigned int k)
{
	char label[32], size[48] = "size not recorded";

	snprintf(label, sizeof(label), "Device %u:", k);
	if (d->blocks)
		snprintf(size, sizeof(size), "%llu blocks", (unsigned long long)d->blocks);
	printf("%-21s%s at unified block %llu, read from %s", label, size,
	       (unsigned long long)d->uniaddr, device_source(d));
	if (d->tag[0]) {
		fputs(", tag '", stdout);
		show_name(d->tag, strlen(d->tag));
		putchar('\'');
	}
	putchar('\n');
}

/* Each of the image's count extra devices. */
static void print_devices(ek_image *img, unsigned int count, bool json)
{
	ek_device_info d;

	for (unsigned int k = 1; k <= count && !ek_get_device_info(img, k, &d); k++) {
		if (json)
			print_device_json(&d, k == 1);
		else
			print_device_text(&d, k);
	}
}

/* The image's count long xattr name prefixes, whole; JSON null, or
 * "(unknown)", for one whose built-in prefix the format does not know. */
static void print_prefixes(ek_image *img, unsigned int count, bool json)
{
	char prefix[320];

	for (unsigned int i = 0; i < count; i++) {
		int len = ek_get_xattr_prefix(img, i, prefix, sizeof(prefix));

		if (json) {
			fputs(i ? ", " : "", stdout);
			if (len >= 0)
				cli_json_string(stdout, prefix, (size_t)len);
			else
				fputs("null", stdout);
			continue;
		}
		printf("%-21s", i ? "" : "Xattr prefixes:");
		if (len >= 0)
			show_name(prefix, (size_t)len);
		else
			fputs("(unknown)", stdout);
		printf(" (%u)\n", i);
	}
}

/* Of img's devices, the one whose own file holds physical offset off:
 * its number (0: none, the image file) and the offset in that file. */
static unsigned int device_of(ek_image *img, unsigned int devices, uint64_t off, uint64_t *in)
{
	ek_device_info d;

	for (unsigned int k = 1; k <= devices && !ek_get_device_info(img, k, &d); k++)
		if (d.own_file && off >= d.physical && off - d.physical < d.size) {
			*in = off - d.physical;
			return k;
		}
	return 0;
}

static int dump_super(ek_image *img, bool json)
{
	ek_super_info sb;
	char uuid[37], features[256], algs[64], when[96];

	ek_get_super_info(img, &sb);
	uuid_string(sb.uuid, uuid);
	ek_feature_names(&sb, features, sizeof(features));
	algorithms_string(sb.compr_algs, algs, sizeof(algs));
	time_string(sb.epoch, sb.fixed_nsec, when, sizeof(when));
	if (json) {
		printf("{\"block_size\": %u, \"blocks\": %llu, \"image_size\": %llu, "
		       "\"root_nid\": %llu, \"inodes\": %llu, \"epoch\": %lld, "
		       "\"fixed_nsec\": %u, \"meta_blkaddr\": %llu, \"xattr_blkaddr\": %llu, "
		       "\"uuid\": \"%s\", \"label\": ",
		       sb.block_size, (unsigned long long)sb.blocks,
		       (unsigned long long)sb.image_size, (unsigned long long)sb.root_nid,
		       (unsigned long long)sb.inodes, (long long)sb.epoch, sb.fixed_nsec,
		       (unsigned long long)sb.meta_blkaddr,
		       (unsigned long long)sb.xattr_blkaddr, uuid);
		cli_json_string(stdout, sb.volume_name, strlen(sb.volume_name));
		printf(", \"feature_compat\": %u, \"feature_incompat\": %u, \"features\": \"%s\", "
		       "\"checksum\": %u, \"checksum_present\": %s, \"algorithms\": \"%s\", "
		       "\"packed_nid\": %llu, \"metabox_nid\": %llu, \"extra_devices\": %u, "
		       "\"devices\": [",
		       sb.feature_compat, sb.feature_incompat, features, sb.checksum,
		       sb.checksum_present ? "true" : "false", algs,
		       (unsigned long long)sb.packed_nid,
		       (unsigned long long)sb.metabox_nid, sb.extra_devices);
		print_devices(img, sb.extra_devices, true);
		fputs("], \"xattr_prefixes\": [", stdout);
		print_prefixes(img, sb.xattr_prefix_count, true);
		puts("]}");
		return EXIT_OK;
	}
	printf("Block size:          %u\n", sb.block_size);
	printf("Blocks:              %llu\n", (unsigned long long)sb.blocks);
	printf("Image size:          %llu bytes\n", (unsigned long long)sb.image_size);
	printf("Root nid:            %llu\n", (unsigned long long)sb.root_nid);
	printf("Inodes:              %llu\n", (unsigned long long)sb.inodes);
	printf("Epoch (build time):  %s\n", when);
	printf("Meta block address:  %llu\n", (unsigned long long)sb.meta_blkaddr);
	printf("Xattr block address: %llu\n", (unsigned long long)sb.xattr_blkaddr);
	printf("UUID:                %s\n", uuid);
	fputs("Label:               ", stdout);
	show_name(sb.volume_name, strlen(sb.volume_name));
	putchar('\n');
	printf("Features:            %s\n", features);
	printf("Algorithms:          %s\n",
	       sb.compressed && *algs ? algs : "none");
	if (sb.checksum_present)
		printf("Checksum:            0x%08x (verified)\n", sb.checksum);
	if (sb.packed_nid)
		printf("Packed nid:          %llu\n", (unsigned long long)sb.packed_nid);
	if (sb.metabox_nid)
		printf("Metabox nid:         %llu\n", (unsigned long long)sb.metabox_nid);
	if (sb.extra_devices)
		printf("Extra devices:       %u\n", sb.extra_devices);
	print_devices(img, sb.extra_devices, false);
	print_prefixes(img, sb.xattr_prefix_count, false);
	return EXIT_OK;
}

struct xattr_print {
	bool json;
	bool first;
};

static int print_xattr(void *ctx, const char *name, size_t name_len,
		       const void *value, size_t value_len)
{
	struct xattr_print *p = ctx;

	(void)value;
	if (p->json) {
		printf("%s{\"name\": ", p->first ? "" : ", ");
		cli_json_string(stdout, name, name_len);
		printf(", \"size\": %zu}", value_len);
	} else {
		fputs("  ", stdout);
		show_name(name, name_len);
		printf(" (%zu bytes)\n", value_len);
	}
	p->first = false;
	return 0;
}

static int print_extents(ek_inode *inode, bool json, ek_error *err)
{
	const ek_stat *st = ek_inode_stat(inode);
	ek_image *img = ek_inode_image(inode);
	uint64_t off = 0;
	bool first = true;
	ek_super_info sb;

	ek_get_super_info(img, &sb);

	while (off < st->size) {
		char where[64] = "";
		uint64_t in = 0;
		unsigned int device;
		ek_extent e;
		int ret = ek_map(inode, off, &e, err);

		if (ret)
			return ret;
		device = !sb.extra_devices || e.in_metadata ||
			 (e.kind != EK_EXTENT_PLAIN && e.kind != EK_EXTENT_COMPRESSED) ?
			 0 : device_of(img, sb.extra_devices, e.physical, &in);
		if (device)
			snprintf(where, sizeof(where), json ? ", \"device\": %u, \"device_offset\": %llu" :
				 " on device %u +%llu", device, (unsigned long long)in);
		if (json)
			printf("%s{\"logical\": %llu, \"length\": %llu, \"kind\": \"%s\", "
			       "\"physical\": %llu, \"physical_length\": %llu%s%s%s%s%s}",
			       first ? "" : ", ", (unsigned long long)e.logical,
			       (unsigned long long)e.length, ek_extent_kind_name(e.kind),
			       (unsigned long long)e.physical,
			       (unsigned long long)e.physical_length,
			       e.kind == EK_EXTENT_COMPRESSED ? ", \"algorithm\": \"" : "",
			       e.kind == EK_EXTENT_COMPRESSED ? ek_algorithm_name(e.algorithm) : "",
			       e.kind == EK_EXTENT_COMPRESSED ? "\"" : "",
			       e.in_metadata ? ", \"inline\": true" : "", where);
		else
			printf("  %12llu..%-12llu %-10s physical %llu (+%llu)%s%s%s%s%s\n",
			       (unsigned long long)e.logical,
			       (unsigned long long)(e.logical + e.length),
			       ek_extent_kind_name(e.kind), (unsigned long long)e.physical,
			       (unsigned long long)e.physical_length,
			       e.kind == EK_EXTENT_COMPRESSED ? " " : "",
			       e.kind == EK_EXTENT_COMPRESSED ? ek_algorithm_name(e.algorithm) : "",
			       e.partial ? " partial" : "", e.in_metadata ? " inline" : "", where);
		first = false;
		off = e.logical + e.length;
	}
	return 0;
}

/* The inode at path, or with --nid (path NULL) the one at nid. */
static int dump_inode(ek_image *img, const char *path, ek_nid nid, bool json,
		      ek_error *err)
{
	struct xattr_print xp = { json, true };
	ek_inode_detail d;
	const ek_stat *st;
	ek_inode *inode;
	char mode[11], when[96], target[4096], label[32];
	int ret = 0;

	if (path)
		ret = ek_lookup(img, path, &nid, err);
	else
		snprintf(label, sizeof(label), "(nid %llu)", (unsigned long long)nid);
	if (!path)
		path = label;
	if (!ret)
		ret = ek_inode_get(img, nid, &inode, err);
	if (ret && path == label && ek_is_image_error(ret)) {
		/* A nid the user gave, not one the image holds: no inode is
		 * there, rather than a damaged one (as for a missing path). */
		size_t len = strlen(err->message);

		snprintf(err->message + len, sizeof(err->message) - len,
			 " (is %llu an inode's nid? dump --ls and --path show them)",
			 (unsigned long long)nid);
		return -ENOENT;
	}
	if (ret)
		return ret;
	st = ek_inode_stat(inode);
	ek_inode_get_detail(inode, &d);
	mode_string(st->mode, mode);
	time_string(st->mtime, st->mtime_nsec, when, sizeof(when));
	target[0] = '\0';
	if (S_ISLNK(st->mode) && ek_readlink(inode, target, sizeof(target), err) < 0)
		goto fail;
	if (json) {
		printf("{\"path\": ");
		cli_json_string(stdout, path, strlen(path));
		printf(", \"nid\": %llu, \"ino\": %llu, \"type\": \"%s\", \"mode\": \"%04o\", "
		       "\"uid\": %u, \"gid\": %u, \"nlink\": %u, \"size\": %llu, "
		       "\"mtime\": %lld, \"mtime_nsec\": %u, \"blocks\": %llu, "
		       "\"extended\": %s, \"layout\": \"%s\", \"inode_offset\": %llu, "
		       "\"xattr_size\": %u, \"dot_omitted\": %s",
		       (unsigned long long)st->nid, (unsigned long long)st->ino,
		       type_name(st->mode), st->mode & 07777, st->uid, st->gid, st->nlink,
		       (unsigned long long)st->size, (long long)st->mtime, st->mtime_nsec,
		       (unsigned long long)st->blocks, d.extended ? "true" : "false",
		       ek_layout_name(d.layout), (unsigned long long)d.inode_offset,
		       d.xattr_size, d.dot_omitted ? "true" : "false");
		if (S_ISCHR(st->mode) || S_ISBLK(st->mode))
			printf(", \"rdev\": [%u, %u]", st->rdev_major, st->rdev_minor);
		if (S_ISLNK(st->mode)) {
			printf(", \"target\": ");
			cli_json_string(stdout, target, strlen(target));
		}
		printf(", \"xattrs\": [");
		if (ek_xattr_iterate(inode, print_xattr, &xp, err))
			goto fail;
		printf("], \"extents\": [");
		if (!S_ISDIR(st->mode) && !S_ISCHR(st->mode) && !S_ISBLK(st->mode) &&
		    print_extents(inode, true, err))
			goto fail;
		printf("]}\n");
	} else {
		printf("Path:        %s\n", path);
		printf("Nid:         %llu (st_ino %llu)\n", (unsigned long long)st->nid,
		       (unsigned long long)st->ino);
		printf("Type:        %s\n", type_name(st->mode));
		printf("Mode:        %04o (%s)\n", st->mode & 07777, mode);
		printf("Owner:       %u:%u\n", st->uid, st->gid);
		printf("Links:       %u\n", st->nlink);
		printf("Size:        %llu\n", (unsigned long long)st->size);
		printf("Mtime:       %s (%lld)\n", when, (long long)st->mtime);
		if (S_ISCHR(st->mode) || S_ISBLK(st->mode))
			printf("Device:      %u:%u\n", st->rdev_major, st->rdev_minor);
		if (S_ISLNK(st->mode)) {
			fputs("Target:      ", stdout);
			show_name(target, strlen(target));
			putchar('\n');
		}
		printf("Inode:       %s core at byte %llu, layout %s, %u bytes of xattrs%s\n",
		       d.extended ? "extended" : "compact",
		       (unsigned long long)d.inode_offset, ek_layout_name(d.layout),
		       d.xattr_size, d.dot_omitted ? ", \".\" not stored" : "");
		printf("Xattrs:\n");
		if (ek_xattr_iterate(inode, print_xattr, &xp, err))
			goto fail;
		if (!S_ISDIR(st->mode) && !S_ISCHR(st->mode) && !S_ISBLK(st->mode) &&
		    st->size) {
			printf("Extents:\n");
			if (print_extents(inode, false, err))
				goto fail;
		}
	}
	ek_inode_put(inode);
	return 0;
fail:
	fflush(stdout);
	ek_inode_put(inode);
	return err->code ? err->code : -EIO;
}

struct ls_ctx {
	ek_image *img;
	bool json;
	bool first;
	ek_error *err;
};

static int ls_entry(void *ctx, const ek_dirent *d)
{
	struct ls_ctx *l = ctx;
	char mode[11], when[96];
	ek_stat st;
	int ret = ek_stat_nid(l->img, d->nid, &st, l->err);

	if (ret)
		return ret;
	mode_string(st.mode, mode);
	time_string(st.mtime, st.mtime_nsec, when, sizeof(when));
	if (l->json) {
		printf("%s{\"name\": ", l->first ? "" : ",\n ");
		cli_json_string(stdout, d->name, d->name_len);
		printf(", \"nid\": %llu, \"type\": \"%s\", \"mode\": \"%04o\", \"uid\": %u, "
		       "\"gid\": %u, \"nlink\": %u, \"size\": %llu, \"mtime\": %lld, "
		       "\"mtime_nsec\": %u}",
		       (unsigned long long)d->nid, type_name(st.mode), st.mode & 07777,
		       st.uid, st.gid, st.nlink, (unsigned long long)st.size,
		       (long long)st.mtime, st.mtime_nsec);
	} else {
		printf("%s %3u %6u %6u %12llu %.19s %8llu ", mode, st.nlink, st.uid,
		       st.gid, (unsigned long long)st.size, when,
		       (unsigned long long)d->nid);
		show_name(d->name, d->name_len);
		putchar('\n');
	}
	l->first = false;
	return 0;
}

static int dump_ls(ek_image *img, const char *path, bool json, ek_error *err)
{
	struct ls_ctx l = { img, json, true, err };
	ek_inode *dir;
	ek_nid nid;
	int ret = ek_lookup(img, path, &nid, err);

	if (!ret)
		ret = ek_inode_get(img, nid, &dir, err);
	if (ret)
		return ret;
	if (!S_ISDIR(ek_inode_stat(dir)->mode)) {
		ek_inode_put(dir);
		err->code = -ENOTDIR;
		snprintf(err->message, sizeof(err->message), "%s: not a directory", path);
		return err->code;
	}
	if (json)
		printf("[");
	ret = ek_readdir(dir, 0, ls_entry, &l, err);
	if (json && !ret)
		printf("]\n");
	ek_inode_put(dir);
	return ret;
}

static int dump_cat(ek_image *img, const char *path, ek_error *err)
{
	static char buf[1 << 20];
	ek_inode *inode;
	uint64_t off = 0;
	ek_nid nid;
	int ret = ek_lookup(img, path, &nid, err);

	if (!ret)
		ret = ek_inode_get(img, nid, &inode, err);
	if (ret)
		return ret;
	if (!S_ISREG(ek_inode_stat(inode)->mode)) {
		ek_inode_put(inode);
		err->code = -EINVAL;
		snprintf(err->message, sizeof(err->message), "%s: not a regular file", path);
		return err->code;
	}
	for (;;) {
		ssize_t n = ek_read(inode, buf, sizeof(buf), off, err);

		if (n <= 0) {
			ret = (int)n;
			break;
		}
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n) {
			err->code = -EIO;
			snprintf(err->message, sizeof(err->message), "writing to standard output failed");
			ret = -EIO;
			break;
		}
		off += (uint64_t)n;
	}
	ek_inode_put(inode);
	return ret;
}

enum {
	OPT_PATH = 256, OPT_NID, OPT_LS, OPT_CAT, OPT_STATS, OPT_JSON, OPT_ENGINE, OPT_DEVICE,
	OPT_OFFSET,
};

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "path", required_argument, NULL, OPT_PATH },
		{ "nid", required_argument, NULL, OPT_NID },
		{ "ls", required_argument, NULL, OPT_LS },
		{ "cat", required_argument, NULL, OPT_CAT },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	int64_t nid = 0;
	ek_open_options oo;
	int mode = 0, c, ret;
	bool json = false;
	ek_image *img;
	ek_error err;

	ek_open_options_init(&oo);
	optind = 1;
	while ((c = cli_getopt(CMD, argc, argv, "ho:", longopts)) != -1) {
		switch (c) {
		case OPT_NID:
			if (!cli_parse_int(optarg, &nid) || nid < 0) {
				cli_error(CMD, "invalid nid '%s'", optarg);
				return EXIT_USAGE;
			}
			/* fall through */
		case OPT_PATH:
		case OPT_LS:
		case OPT_CAT:
		case OPT_STATS:
			if (mode) {
				cli_error(CMD, "--path, --nid, --ls, --cat and --stats exclude each other");
				return EXIT_USAGE;
			}
			mode = c;
			path = c == OPT_NID || c == OPT_STATS ? NULL : optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_ENGINE:
			if (ek_open_options_set_engine(&oo, optarg, &err)) {
				cli_error(CMD, "%s", err.message);
				return EXIT_USAGE;
			}
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
	ret = cli_open_image(argv[optind], &oo, &img, &err);
	if (ret) {
		cli_error(CMD, "%s", err.message);
		return cli_exit_code(ret);
	}
	switch (mode) {
	case OPT_PATH:
	case OPT_NID:
		ret = dump_inode(img, path, (ek_nid)nid, json, &err);
		break;
	case OPT_LS:
		ret = dump_ls(img, path, json, &err);
		break;
	case OPT_CAT:
		ret = dump_cat(img, path, &err);
		break;
	case OPT_STATS:
		ret = dump_stats(img, json, &err);
		break;
	default:
		ret = dump_super(img, json);
		break;
	}
	ek_close(img);
	if (fflush(stdout) != 0 && !ret) {
		cli_error(CMD, "writing to standard output failed");
		return EXIT_USAGE;
	}
	if (ret) {
		cli_error(CMD, "%s", err.message);
		return cli_exit_code(ret);
	}
	return EXIT_OK;
}
