/*
 * Build options: defaults, mkfs.erofs's -z and -E spellings, and every
 * option's meaning checked in one place, so that a caller of the library
 * gets the same answers as the tool.  The layouts left to the library
 * (EK_DEFAULT) are resolved here, from measurements (see README).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "format/ondisk.h"
#include "format/zindex.h"
#include "util/error.h"
#include "util/pool.h"
#include "write/hints.h"
#include "write/selabel.h"
#include "write/internal.h"

/* What an image's offset in its file must be a multiple of (below). */
#define IMAGE_OFFSET_ALIGN 4096u

void ek_build_options_init(ek_build_options *o)
{
	memset(o, 0, sizeof(*o));
	o->block_size = 4096;
	o->force_uid = -1;
	o->force_gid = -1;
	o->compressor = EK_COMPRESS_NONE;
	o->level = -1;
	o->ztailpacking = EK_DEFAULT;
	o->fragments = EK_DEFAULT;
	o->fragdedupe = EK_DEFAULT;
	o->dedupe = EK_DEFAULT;
}

/* One algorithm of a -z spec: "NAME[,LEVEL|,level=N][,dictsize=SIZE]". */
static int parse_codec(char *part, const char *spec, ek_build_codec *out, ek_error *err)
{
	char *tok, *save = NULL;
	const struct codec *c;

	tok = strtok_r(part, ",", &save);
	if (!tok)
		return err_fail(err, -EINVAL, "empty compressor spec in '%s'", spec);
	c = codec_by_name(tok);
	if (!c) {
		char names[96];

		codec_names(names, sizeof(names));
		return err_fail(err, -EINVAL, "unknown compressor '%s' (%s)", tok, names);
	}
	out->compressor = (enum ek_compressor)(c - codec_get(0));
	out->level = -1;
	out->dict_size = 0;
	while ((tok = strtok_r(NULL, ",", &save))) {
		const char *val = tok;
		char *end;
		long v;

		if (!strncmp(tok, "level=", 6)) {
			val = tok + 6;
		} else if (!strncmp(tok, "dictsize=", 9)) {
			uint64_t d;

			if (!c->dict_max)
				return err_fail(err, -EINVAL, "%s takes no dictsize", c->name);
			if (ek_parse_size(tok + 9, &d) || d < c->dict_min || d > c->dict_max)
				return err_fail(err, -EINVAL, "dictsize '%s': %s takes %u to %u bytes",
						tok + 9, c->name, c->dict_min, c->dict_max);
			out->dict_size = (uint32_t)d;
			continue;
		}
		v = strtol(val, &end, 10);
		if (end == val || *end)
			return err_fail(err, -EINVAL, "bad compressor option '%s' in '%s'", tok, spec);
		if (!codec_level_valid(c, (int)v))
			return err_fail(err, -EINVAL, "level %ld is out of range for %s", v,
					c->name);
		out->level = (int)v;
	}
	return 0;
}

int ek_parse_compressor(const char *spec, ek_build_options *o, ek_error *err)
{
	ek_build_codec codecs[EK_CODECS_MAX];
	char buf[256], *part, *next;
	unsigned int n = 0, i;

	if (strlen(spec) >= sizeof(buf))
		return err_fail(err, -EINVAL, "compressor spec '%s' is too long", spec);
	strcpy(buf, spec);
	for (part = buf; part; part = next) {
		int ret;

		next = strchr(part, ':');
		if (next)
			*next++ = '\0';
		if (n == EK_CODECS_MAX)
			return err_fail(err, -EINVAL, "'%s': at most %u algorithms", spec,
					EK_CODECS_MAX);
		ret = parse_codec(part, spec, &codecs[n++], err);
		if (ret)
			return ret;
	}
	o->compressor = codecs[0].compressor;
	o->level = codecs[0].level;
	o->dict_size = codecs[0].dict_size;
	o->extra_codec_count = n - 1;
	for (i = 1; i < n; i++)
		o->extra_codecs[i - 1] = codecs[i];
	return 0;
}

/* ------------------------------------------------------------ -E */

/* -ENAME=SIZE: a pcluster size, spelled as -C's is ("64K", "1M"). */
static int parse_size_arg(const char *name, const char *arg, uint32_t *out, ek_error *err)
{
	uint64_t v;

	if (!arg) {
		*out = 0;
		return 0;
	}
	if (ek_parse_size(arg, &v) || v > EROFS_MAX_PCLUSTER_BYTES)
		return err_fail(err, -EINVAL,
				"-E%s=%s: not a cluster size (bytes up to 1 MiB: 65536, 64K, 1M)",
				name, arg);
	*out = (uint32_t)v;
	return 0;
}

/*
 * The -E options, one row each: the name (and how a value is spelled, for
 * the message that lists them), and what it sets.  A setter sees the
 * option as given: its name, whether it came as ^NAME (off), and its
 * value, if any (only rows that spell one take one).
 */
struct option_use {
	const char *name;
	bool off;
	const char *arg;            /* NULL: none given */
	ek_error *err;
};

typedef int (*set_fn)(ek_build_options *o, const struct option_use *u);

static int set_fragments(ek_build_options *o, const struct option_use *u)
{
	o->fragments = u->off ? EK_FRAGMENTS_OFF : u->name[0] == 'a' ? EK_FRAGMENTS_ALL :
		       EK_FRAGMENTS_TAILS;
	return parse_size_arg(u->name, u->arg, &o->fragment_cluster, u->err);
}

static int set_fragdedupe(ek_build_options *o, const struct option_use *u)
{
	const char *arg = u->arg;

	if (u->off || (arg && !strcmp(arg, "off")))
		o->fragdedupe = EK_FRAGDEDUPE_OFF;
	else if (arg && !strcmp(arg, "inode"))
		o->fragdedupe = EK_FRAGDEDUPE_INODE;
	else if (!arg || !strcmp(arg, "full"))
		o->fragdedupe = EK_FRAGDEDUPE_FULL;
	else
		return err_fail(u->err, -EINVAL, "-Efragdedupe=%s: inode, full or off", arg);
	return 0;
}

/* The plain switches: a member set to 1 or 0 (true or false), and
 * whether NAME sets it to 1. */
#define SWITCH(setter, member, on_means)                                                \
	static int setter(ek_build_options *o, const struct option_use *u)               \
	{                                                                                \
		o->member = (on_means) != u->off;                                        \
		return 0;                                                                \
	}
SWITCH(set_ztailpacking, ztailpacking, true)
SWITCH(set_dedupe, dedupe, true)
SWITCH(set_no_inline_data, no_inline_data, true)
SWITCH(set_inline_data, no_inline_data, false)
SWITCH(set_48bit, format_48bit, true)
SWITCH(set_dot_omitted, dot_omitted, true)
SWITCH(set_no_sb_checksum, no_sb_checksum, true)
SWITCH(set_xattr_filter, no_xattr_filter, false)   /* on by default here, off upstream */
SWITCH(set_chunk_indexes, chunk_indexes, true)
SWITCH(set_full_indexes, full_indexes, true)
#undef SWITCH

/* ^NAME undoes only its own form, so "compact,^extended" stays compact. */
static int set_inode_form(ek_build_options *o, const struct option_use *u)
{
	int form = strcmp(u->name, "force-inode-compact") ? EK_INODES_EXTENDED :
		   EK_INODES_COMPACT;

	if (!u->off)
		o->inode_form = form;
	else if (o->inode_form == form)
		o->inode_form = EK_INODES_FIT;
	return 0;
}

/* The block map is the default: ^force-inode-blockmap leaves the form as
 * it is, so "force-chunk-indexes,^force-inode-blockmap" keeps indexes. */
static int set_blockmap(ek_build_options *o, const struct option_use *u)
{
	if (!u->off)
		o->chunk_indexes = false;
	return 0;
}

static const struct extended_option {
	const char *name;
	const char *value;          /* "=SIZE" and such; NULL: takes none */
	set_fn set;
} extended_options[] = {
	{ "ztailpacking",         NULL,                set_ztailpacking },
	{ "fragments",            "[=SIZE]",           set_fragments },
	{ "all-fragments",        "[=SIZE]",           set_fragments },
	{ "dedupe",               NULL,                set_dedupe },
	{ "fragdedupe",           "=inode|full|off",   set_fragdedupe },
	{ "noinline_data",        NULL,                set_no_inline_data },
	{ "inline_data",          NULL,                set_inline_data },
	{ "48bit",                NULL,                set_48bit },
	{ "dot-omitted",          NULL,                set_dot_omitted },
	{ "xattr-name-filter",    NULL,                set_xattr_filter },
	{ "force-inode-compact",  NULL,                set_inode_form },
	{ "force-inode-extended", NULL,                set_inode_form },
	{ "force-chunk-indexes",  NULL,                set_chunk_indexes },
	{ "force-inode-blockmap", NULL,                set_blockmap },
	{ "nosbcrc",              NULL,                set_no_sb_checksum },
	{ "legacy-compress",      NULL,                set_full_indexes },
};

/* "-ENAME: not an extended option ... (every name)". */
static int unknown_option(const char *name, ek_error *err)
{
	char list[512];
	size_t i, len = 0;

	for (i = 0; i < sizeof(extended_options) / sizeof(extended_options[0]); i++) {
		const struct extended_option *e = &extended_options[i];
		int w = snprintf(list + len, sizeof(list) - len, "%s%s%s", i ? ", " : "", e->name,
				 e->value ? e->value : "");

		if (w < 0 || (size_t)w >= sizeof(list) - len)
			break;
		len += (size_t)w;
	}
	return err_fail(err, -EINVAL, "-E%s: not an extended option erofskit implements (%s)",
			name, list);
}

/* One -E option: NAME, NAME=ARG or ^NAME. */
static int parse_one(char *tok, ek_build_options *o, ek_error *err)
{
	bool off = tok[0] == '^';
	char *name = off ? tok + 1 : tok, *arg = strchr(name, '=');
	size_t i;

	if (arg)
		*arg++ = '\0';
	for (i = 0; i < sizeof(extended_options) / sizeof(extended_options[0]); i++) {
		const struct extended_option *e = &extended_options[i];

		if (strcmp(name, e->name))
			continue;
		if (arg && (off || !e->value))
			return err_fail(err, -EINVAL, "-E%s%s takes no value", off ? "^" : "", name);
		return e->set(o, &(const struct option_use){ .name = name, .off = off,
							     .arg = arg, .err = err });
	}
	return unknown_option(name, err);
}

int ek_parse_extended_options(const char *list, ek_build_options *o, ek_error *err)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return err_fail(err, -ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save))
		ret = parse_one(tok, o, err);
	free(copy);
	return ret;
}

/* ------------------------------------------------------------ checks */

static int too_big_to_mount(const struct codec *c, uint32_t size, uint32_t bs, ek_error *err)
{
	if (!c->cluster_blocks_max || size / bs <= c->cluster_blocks_max)
		return 0;
	return err_fail(err, -EINVAL,
			"%s clusters of more than %u blocks (%u bytes with %u-byte blocks) do not mount in Linux",
			c->name, c->cluster_blocks_max, c->cluster_blocks_max * bs, bs);
}

/* Whether pc is whole blocks, as many as a cluster may have; else err
 * says so, for what (the "cluster size", the "metabox cluster", ...). */
static bool cluster_fits(const char *what, uint32_t pc, uint32_t bs, ek_error *err)
{
	/* 1 MiB, or 2047 blocks where blocks are smaller than 4 KiB */
	uint32_t max = Z_CBLKCNT_MASK * bs < EROFS_MAX_PCLUSTER_BYTES ? Z_CBLKCNT_MASK * bs
								    : EROFS_MAX_PCLUSTER_BYTES;

	if (pc && !(pc % bs) && pc <= max)
		return true;
	err_fail(err, -EINVAL, "%s %u: a cluster is whole %u-byte blocks, %u bytes at most",
		 what, pc, bs, max);
	return false;
}

/* A compressed cluster's size, -C's or a --compress-hints rule's. */
static int check_cluster(const struct codec *c, uint32_t pc, uint32_t bs, ek_error *err)
{
	if (!cluster_fits("cluster size", pc, bs, err))
		return -EINVAL;
	return too_big_to_mount(c, pc, bs, err);
}

ek_build_codec build_codec(const ek_build_options *o, unsigned int k)
{
	ek_build_codec c = { o->compressor, o->level, o->dict_size };

	return k ? o->extra_codecs[k - 1] : c;
}

static int check_hint(const void *ctx, uint32_t size, unsigned int codec, ek_error *err)
{
	const struct build *b = ctx;

	if (codec > b->o.extra_codec_count)
		return err_fail(err, -EINVAL, "algorithm %u: -z lists %u, numbered from 0", codec,
				b->o.extra_codec_count + 1);
	return check_cluster(codec_get(build_codec(&b->o, codec).compressor), size, b->blksz,
			     err);
}

/* One of the image's algorithms (k: its place in -z's list) and the
 * clusters it compresses: -C's for each, the packed inode's and the
 * metabox's for the first, which compresses those. */
static int check_codec(const ek_build_options *o, unsigned int k, uint32_t bs, ek_error *err)
{
	ek_build_codec want = build_codec(o, k);
	const struct codec *c = codec_get(want.compressor);
	uint32_t pc = o->pcluster_size;
	int ret;

	if (!c)
		return err_fail(err, -EINVAL, "unknown compressor %d", (int)want.compressor);
	if (want.level >= 0 && !codec_level_valid(c, want.level))
		return err_fail(err, -EINVAL, "level %d is out of range for %s", want.level,
				c->name);
	if (want.dict_size && (want.dict_size < c->dict_min || want.dict_size > c->dict_max))
		return err_fail(err, -EINVAL, "dictionary of %u bytes: %s takes %u to %u",
				want.dict_size, c->name, c->dict_min, c->dict_max);
	ret = pc ? check_cluster(c, pc, bs, err) : 0;
	if (ret || k)
		return ret;
	if (o->fragment_cluster)
		ret = too_big_to_mount(c, o->fragment_cluster, bs, err);
	if (ret)
		return ret;
	if (c->cluster_blocks_max && o->metabox_cluster / bs > c->cluster_blocks_max)
		return err_fail(err, -EINVAL,
				"metabox (-m) clusters of %u bytes: %s clusters of more than %u blocks do not mount in Linux",
				o->metabox_cluster, c->name, c->cluster_blocks_max);
	return 0;
}

static int check_compression(const ek_build_options *o, uint32_t bs, ek_error *err)
{
	unsigned int k;
	int ret = 0;

	if (o->compressor == EK_COMPRESS_NONE) {
		if (o->pcluster_size)
			return err_fail(err, -EINVAL,
					"a cluster size sets the compressed cluster: it needs a compressor");
		if (o->extra_codec_count)
			return err_fail(err, -EINVAL,
					"more algorithms than one, and the first is none");
		return 0;
	}
	if (o->extra_codec_count > EK_CODECS_MAX - 1)
		return err_fail(err, -EINVAL, "%u algorithms: at most %u", o->extra_codec_count + 1,
				EK_CODECS_MAX);
	for (k = 0; k <= o->extra_codec_count && !ret; k++)
		ret = check_codec(o, k, bs, err);
	return ret;
}

static bool chosen(int v)
{
	return v != EK_DEFAULT;
}

/* The layouts of compressed files: each needs a compressor. */
static int check_layouts(const ek_build_options *o, ek_error *err)
{
	bool compressed = o->compressor != EK_COMPRESS_NONE;

	if (chosen(o->fragments) && (o->fragments < EK_FRAGMENTS_OFF || o->fragments > EK_FRAGMENTS_ALL))
		return err_fail(err, -EINVAL, "fragments mode %d", o->fragments);
	if (chosen(o->fragdedupe) &&
	    (o->fragdedupe < EK_FRAGDEDUPE_OFF || o->fragdedupe > EK_FRAGDEDUPE_FULL))
		return err_fail(err, -EINVAL, "fragdedupe mode %d", o->fragdedupe);
	if (!compressed && ((chosen(o->ztailpacking) && o->ztailpacking) ||
			    (chosen(o->fragments) && o->fragments)))
		return err_fail(err, -EINVAL,
				"tail packing and fragments are layouts of compressed files: they need a compressor");
	if (o->fragment_cluster &&
	    !cluster_fits("packed inode cluster", o->fragment_cluster, o->block_size, err))
		return -EINVAL;
	if (!o->metabox_cluster)
		return 0;
	if (!compressed)
		return err_fail(err, -EINVAL, "the metabox (-m) is compressed: it needs a compressor");
	if (!cluster_fits("metabox cluster", o->metabox_cluster, o->block_size, err))
		return -EINVAL;
	return 0;
}

/*
 * What EK_DEFAULT stands for.  Compressed images get fragments (tails and
 * files smaller than a cluster, with their neighbours) and dedupe: on the
 * tree of 13,830 small files, lz4hc at one-block clusters, 90.6 MiB
 * instead of 138.9, while the kernel reads every file cold in 1.58 s
 * against 1.65 s from the image the previous default made, and erofskit
 * mount serves 400 random files in 0.91 s against 0.90 s
 * (bench/layouts.sh; all-fragments: 90.5 MiB, but 2.01 s and 1.14 s).
 * Uncompressed images stay as they were, like mkfs.erofs's, but for the
 * chunks --chunksize asks for, which dedupe (as mkfs.erofs's do).
 */
static void resolve_layouts(struct build *b)
{
	const ek_build_options *o = &b->o;
	struct layouts *l = &b->lay;
	bool compressed = o->compressor != EK_COMPRESS_NONE;

	/* Asking for tail packing asks for tails after their inode, not in
	 * the packed inode: the default fragments give way to it. */
	l->fragments = chosen(o->fragments) ? (enum ek_fragments)o->fragments :
		       compressed && !(chosen(o->ztailpacking) && o->ztailpacking) ?
		       EK_FRAGMENTS_TAILS : EK_FRAGMENTS_OFF;
	l->tailpack = compressed && l->fragments == EK_FRAGMENTS_OFF &&
		      (chosen(o->ztailpacking) ? o->ztailpacking != 0 : false);
	l->dedupe = chosen(o->dedupe) ? o->dedupe != 0 : compressed || o->chunk_size;
	l->fragdedupe = l->fragments == EK_FRAGMENTS_OFF ? EK_FRAGDEDUPE_OFF :
			chosen(o->fragdedupe) ? (enum ek_fragdedupe)o->fragdedupe :
			EK_FRAGDEDUPE_FULL;
	l->inline_data = !o->no_inline_data;
	l->metabox = o->metabox_cluster != 0;
	l->inline_max = 0;
}

/* --chunksize: a power of two from a block up (2 GiB at most fits the
 * format's five bits over any block), for data the image holds. */
static int check_chunks(const ek_build_options *o, ek_error *err)
{
	uint32_t cs = o->chunk_size;

	if (!cs)
		return 0;
	if ((cs & (cs - 1)) || cs < o->block_size)
		return err_fail(err, -EINVAL,
				"chunk size %u is not a power of two of at least the %u-byte block",
				cs, o->block_size);
	if (o->tar_index)
		return err_fail(err, -EINVAL,
				"--tar=i stores no data of its own: it takes no chunk size");
	return 0;
}

/* --blobdev: the chunks' device, a file apart from the image. */
static int check_blob(const ek_build_options *o, ek_error *err)
{
	if (!o->blob_path)
		return 0;
	if (!o->chunk_size)
		return err_fail(err, -EINVAL,
				"--blobdev %s holds chunk-based files' data: it needs --chunksize",
				o->blob_path);
	if (!*o->blob_path || !strcmp(o->blob_path, "-"))
		return err_fail(err, -EINVAL, "--blobdev takes a file name, not '%s'", o->blob_path);
	return 0;
}

/* Forced ids and offsets in range, and so 0:0 once shifted: only ids
 * from the source can overflow. */
static int check_owners(const ek_build_options *o, ek_error *err)
{
	if (o->force_uid < -1 || o->force_uid > UINT32_MAX ||
	    o->force_gid < -1 || o->force_gid > UINT32_MAX)
		return err_fail(err, -EINVAL, "forced owner %lld:%lld out of range",
				(long long)o->force_uid, (long long)o->force_gid);
	if (o->uid_offset < 0 || o->uid_offset > UINT32_MAX ||
	    o->gid_offset < 0 || o->gid_offset > UINT32_MAX)
		return err_fail(err, -EINVAL, "id offsets %lld:%lld: each takes 0 to 4294967295",
				(long long)o->uid_offset, (long long)o->gid_offset);
	if ((o->force_uid >= 0 && o->force_uid + o->uid_offset > UINT32_MAX) ||
	    (o->force_gid >= 0 && o->force_gid + o->gid_offset > UINT32_MAX))
		return err_fail(err, -EINVAL,
				"a forced owner with its id offset is over 4294967295");
	return 0;
}

int build_check_options(struct build *b)
{
	uint32_t bs = b->o.block_size;
	int ret;

	if (bs < 512 || bs > 4096 || (bs & (bs - 1)))
		return err_fail(b->err, -EINVAL,
			       "block size %u is not a power of two in 512..4096", bs);
	b->blksz = bs;
	b->blkszbits = (unsigned int)__builtin_ctz(bs);
	if (strnlen(b->o.label, sizeof(b->o.label)) > 15)
		return err_fail(b->err, -EINVAL, "volume label longer than 15 bytes");
	ret = check_compression(&b->o, bs, b->err);
	if (!ret)
		ret = check_layouts(&b->o, b->err);
	if (!ret)
		ret = pool_resolve_workers(b->o.workers, &b->workers, b->err);
	if (!ret)
		ret = check_chunks(&b->o, b->err);
	if (!ret)
		ret = check_blob(&b->o, b->err);
	/* Only an 8-byte chunk index names a device. */
	if (b->o.blob_path)
		b->o.chunk_indexes = true;
	if (!ret)
		ret = check_owners(&b->o, b->err);
	/* The inode's xattr count is 16 bits of 4-byte slots. */
	if (!ret && b->o.root_xattr_isize > EROFS_XATTR_HEADER_SIZE + 4u * 0xFFFE)
		ret = err_fail(b->err, -EINVAL, "--root-xattr-isize %u: an inode's xattrs take at "
			       "most %u bytes", b->o.root_xattr_isize,
			       EROFS_XATTR_HEADER_SIZE + 4u * 0xFFFE);
	if (!ret && (b->o.inode_form < EK_INODES_FIT || b->o.inode_form > EK_INODES_EXTENDED))
		ret = err_fail(b->err, -EINVAL, "inode form %d", b->o.inode_form);
	/* Every inode compact: no mtime may stand in the way. */
	if (b->o.inode_form == EK_INODES_COMPACT)
		b->o.ignore_mtime = true;
	if (!ret)
		resolve_layouts(b);
	/* A root inside the metabox needs the 64-bit root nid of 48bit;
	 * directories without "." are for 48bit's kernels. */
	if (b->o.metabox_cluster || b->o.dot_omitted)
		b->o.format_48bit = true;
	if (b->o.format_48bit)
		b->feature_incompat |= EROFS_INCOMPAT_48BIT;
	if (!ret && b->o.compress_hints && b->o.compressor == EK_COMPRESS_NONE)
		ret = err_fail(b->err, -EINVAL, "compress hints set compressed clusters: "
			       "they need a compressor");
	if (!ret && b->o.compress_hints)
		ret = hints_open(b->o.compress_hints, check_hint, b, &b->hints, b->err);
	/* Linux 6.18 finds no superblock at an fsoffset= that is not a
	 * multiple of its 4 KiB page (512-byte blocks or not), though its
	 * documentation asks only for a block multiple. */
	if (!ret && b->o.image_offset % IMAGE_OFFSET_ALIGN)
		ret = err_fail(b->err, -EINVAL, "offset %llu is not a multiple of %u: the kernel's "
			       "fsoffset= mounts page multiples only", (unsigned long long)b->o.image_offset,
			       IMAGE_OFFSET_ALIGN);
	if (!ret && b->o.max_extent_bytes && b->o.compressor == EK_COMPRESS_NONE)
		ret = err_fail(b->err, -EINVAL, "--max-extent-bytes bounds compressed extents: "
			       "it needs a compressor");
	if (!ret && b->o.max_extent_bytes && b->o.max_extent_bytes < b->blksz)
		ret = err_fail(b->err, -EINVAL, "--max-extent-bytes %u is less than a block (%u "
			       "bytes): two extents would start in one", b->o.max_extent_bytes,
			       b->blksz);
	if (!ret)
		ret = prefixes_open(b);
	if (!ret)
		ret = path_rules_open(b);
	return ret;
}

