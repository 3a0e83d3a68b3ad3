/*
 * erofskit image builder: a directory tree in, an EROFS image out.
 *
 * The image is written to a temporary file beside the target and renamed
 * over it only when everything succeeded; on any error the target is left
 * untouched and the error names the source file and what went wrong.
 */
#ifndef EROFSKIT_BUILD_H
#define EROFSKIT_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ek_compressor {
	EK_COMPRESS_NONE = -1,
	EK_COMPRESS_LZ4 = 0,
	EK_COMPRESS_LZ4HC = 1,
	EK_COMPRESS_DEFLATE = 2,
	EK_COMPRESS_ZSTD = 3,
	EK_COMPRESS_LZMA = 4,
};

/* Progress: called from the building thread with bytes done/total. */
typedef void (*ek_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct ek_build_options {
	uint32_t block_size;        /* 512..4096, power of two; default 4096 */

	/* timestamps */
	bool timestamp_set;         /* -T: build time (and every mtime) */
	int64_t timestamp;
	bool timestamp_build_only;  /* --mkfs-time: -T sets only the build time */
	bool clamp_mtime;           /* SOURCE_DATE_EPOCH: clamp newer mtimes */

	/* identity */
	bool uuid_set;
	uint8_t uuid[16];
	bool uuid_random;           /* -U random */
	char label[16];             /* volume name, at most 15 bytes */

	/* ownership */
	bool all_root;
	int64_t force_uid;          /* -1: keep */
	int64_t force_gid;          /* -1: keep */

	/* xattrs */
	bool no_xattrs;
	bool no_xattr_filter;

	/* compression */
	enum ek_compressor compressor;
	int level;                  /* -1: the algorithm's default */
	uint32_t pcluster_size;     /* bytes; 0: one block */
	uint32_t dict_size;         /* lzma/deflate dictionary; 0: default */
	unsigned int workers;       /* 0: online CPUs */

	/* sparse files become chunk-based (holes cost no space); default on */
	bool no_sparse_chunks;

	ek_progress_fn progress;
	void *progress_ctx;
} ek_build_options;

typedef struct ek_build_stats {
	uint64_t files;             /* inodes written */
	uint64_t regular_files;
	uint64_t directories;
	uint64_t input_bytes;       /* regular file and symlink bytes read */
	uint64_t image_bytes;
	uint64_t compressed_files;
	double seconds;
} ek_build_stats;

EK_API void ek_build_options_init(ek_build_options *o);

/* Build `image_path` from the directory `source_dir`. */
EK_API int ek_build(const char *image_path, const char *source_dir,
		    const ek_build_options *opts, ek_build_stats *stats,
		    ek_error *err);

/* Parse a compressor spec as mkfs.erofs takes it: "lz4", "lz4hc,9",
 * "deflate,level=9", "zstd,level=15", "lzma,level=109,dictsize=65536". */
EK_API int ek_parse_compressor(const char *spec, ek_build_options *o, ek_error *err);

#ifdef __cplusplus
}
#endif
#endif
