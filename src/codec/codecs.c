/* The table of codecs, and choosing among an algorithm's decoders. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "util/error.h"

static const struct decoder *const lz4_decoders[] = { &lz4_decoder, NULL };
/* Measured on deflate-9 clusters of 256 KiB: libdeflate ~780 MiB/s per
 * core, ISA-L ~575, zlib ~370. */
static const struct decoder *const deflate_decoders[] = {
	&libdeflate_decoder, &isal_decoder, &zlib_decoder, NULL,
};
static const struct decoder *const zstd_decoders[] = { &zstd_decoder, NULL };
/* Ours is ~1.1x liblzma's on a root filesystem's 4 KiB clusters. */
static const struct decoder *const lzma_decoders[] = {
	&microlzma_decoder, &liblzma_decoder, NULL,
};

/* Indexed by enum ek_compressor, the public names of the rows. */
static const struct codec codecs[CODEC_COUNT] = {
	/* The kernel (6.18) refuses an lz4 record of more than 256 blocks a
	 * cluster, whatever the block size: 128 KiB at 512-byte blocks. */
	[EK_COMPRESS_LZ4] = {
		.name = "lz4", .algorithm = EROFS_ALG_LZ4,
		.level_min = 0, .level_max = 0, .level_default = 0,
		.cluster_blocks_max = 256,
		.encoder = &lz4_encoder_ops, .decoders = lz4_decoders,
		.try_is_cheap = true,
	},
	[EK_COMPRESS_LZ4HC] = {
		.name = "lz4hc", .algorithm = EROFS_ALG_LZ4,
		.level_min = 0, .level_max = 12, .level_default = 9,
		.cluster_blocks_max = 256,
		.encoder = &lz4hc_encoder_ops,
	},
	[EK_COMPRESS_DEFLATE] = {
		/* libdeflate goes to 12; levels above 9 are its slow ones. */
		.name = "deflate", .alias = "libdeflate", /* mkfs.erofs's name */
		.algorithm = EROFS_ALG_DEFLATE,
		.level_min = 0, .level_max = 12, .level_default = 6,
		.encoder = &deflate_encoder_ops, .decoders = deflate_decoders,
		.entropy_coded = true,
		.decoder_env = "EROFSKIT_ENGINE",
	},
	[EK_COMPRESS_ZSTD] = {
		.name = "zstd", .algorithm = EROFS_ALG_ZSTD,
		.level_min = 1, .level_max = 22, .level_default = 3,
		.encoder = &zstd_encoder_ops, .decoders = zstd_decoders,
		.entropy_coded = true,
	},
	[EK_COMPRESS_LZMA] = {
		.name = "lzma", .algorithm = EROFS_ALG_LZMA,
		.level_min = 0, .level_max = 9, .level_default = 6,
		.level_extreme = 100,
		/* liblzma's smallest; the kernel takes up to 8 MiB. */
		.dict_min = 4096, .dict_max = 8u << 20,
		.encoder = &lzma_encoder_ops, .decoders = lzma_decoders,
		.entropy_coded = true,
		.decoder_env = "EROFSKIT_LZMA_ENGINE",
	},
};

const struct codec *codec_get(enum ek_compressor c)
{
	return (unsigned int)c < CODEC_COUNT ? &codecs[c] : NULL;
}

const struct codec *codec_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < CODEC_COUNT; i++)
		if (!strcmp(name, codecs[i].name) ||
		    (codecs[i].alias && !strcmp(name, codecs[i].alias)))
			return &codecs[i];
	return NULL;
}

const struct codec *codec_of_algorithm(unsigned int algorithm)
{
	size_t i;

	for (i = 0; i < CODEC_COUNT; i++)
		if (codecs[i].algorithm == algorithm)
			return &codecs[i];
	return NULL;
}

const char *ek_algorithm_name(unsigned int id)
{
	const struct codec *c = codec_of_algorithm(id);

	return c ? c->name : "unknown";
}

bool codec_level_valid(const struct codec *c, int level)
{
	if (level >= c->level_min && level <= c->level_max)
		return true;
	return c->level_extreme && level >= c->level_extreme + c->level_min &&
	       level <= c->level_extreme + c->level_max;
}

/* "a, b, c or d" of count names taken by name(i). */
static void list_names(char *buf, size_t size, size_t count,
		       const char *(*name)(size_t i, const void *ctx), const void *ctx)
{
	size_t used = 0, i;

	buf[0] = '\0';
	for (i = 0; i < count && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s",
					 i == 0 ? "" : i + 1 == count ? " or " : ", ",
					 name(i, ctx));
}

static const char *row_name(size_t i, const void *ctx)
{
	(void)ctx;
	return codecs[i].name;
}

void codec_names(char *buf, size_t size)
{
	list_names(buf, size, CODEC_COUNT, row_name, NULL);
}

/* ------------------------------------------------------------ decoders */

static size_t count_decoders(const struct codec *c)
{
	size_t n = 0;

	while (c->decoders && c->decoders[n])
		n++;
	return n;
}

static const char *decoder_name(size_t i, const void *ctx)
{
	return ((const struct codec *)ctx)->decoders[i]->name;
}

/* "libdeflate, isal or zlib" */
static void decoder_names(const struct codec *c, char *buf, size_t size)
{
	list_names(buf, size, count_decoders(c), decoder_name, c);
}

/* Every algorithm that has a choice: "x or y for a; z or w for b". */
static void all_choices(char *buf, size_t size)
{
	size_t used = 0, i;

	buf[0] = '\0';
	for (i = 0; i < CODEC_COUNT && used < size; i++) {
		char names[64];

		if (count_decoders(&codecs[i]) < 2)
			continue;
		decoder_names(&codecs[i], names, sizeof(names));
		used += (size_t)snprintf(buf + used, size - used, "%s%s for %s",
					 used ? "; " : "", names, codecs[i].name);
	}
}

int decoder_lookup(const char *name, unsigned int *algorithm,
		   const struct decoder **out, ek_error *err)
{
	char choices[160];
	size_t i, k;

	for (i = 0; name && i < CODEC_COUNT; i++)
		for (k = 0; codecs[i].decoders && codecs[i].decoders[k]; k++)
			if (!strcmp(name, codecs[i].decoders[k]->name)) {
				*algorithm = codecs[i].algorithm;
				*out = codecs[i].decoders[k];
				return 0;
			}
	all_choices(choices, sizeof(choices));
	return err_fail(err, -EINVAL, "unknown decoder '%s' (%s)", name ? name : "",
			choices);
}

/* One algorithm's decoder: the name given, else its variable's. */
static int choose_one(const struct codec *c, const char *name,
		      const struct decoder **out, ek_error *err)
{
	const char *source = NULL;
	char names[64];
	size_t k;

	*out = c->decoders[0];
	if ((!name || !*name) && c->decoder_env) {
		name = getenv(c->decoder_env);
		source = c->decoder_env;
	}
	if (!name || !*name)
		return 0;
	for (k = 0; c->decoders[k]; k++)
		if (!strcmp(name, c->decoders[k]->name)) {
			*out = c->decoders[k];
			return 0;
		}
	decoder_names(c, names, sizeof(names));
	return err_fail(err, -EINVAL, "%s%sunknown %s decoder '%s' (%s)",
			source ? source : "", source ? ": " : "", c->name, name,
			names);
}

int decoder_choose(const char *const names[EROFS_ALG_MAX],
		   struct decoder_choice *out, ek_error *err)
{
	unsigned int alg;

	for (alg = 0; alg < EROFS_ALG_MAX; alg++) {
		const struct codec *c = codec_of_algorithm(alg);
		int ret;

		out->use[alg] = NULL;
		if (!c || !c->decoders)
			continue;
		ret = choose_one(c, names ? names[alg] : NULL, &out->use[alg], err);
		if (ret)
			return ret;
	}
	return 0;
}
