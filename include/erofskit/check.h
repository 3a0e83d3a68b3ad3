/*
 * erofskit checker and extractor: walk every inode reachable from the root,
 * validate all metadata, read every byte, optionally recreate the tree.
 */
#ifndef EROFSKIT_CHECK_H
#define EROFSKIT_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* No file offset: the problem is not about a file's data. */
#define EK_NO_OFFSET UINT64_MAX

/* One problem found, as ek_check reports it once the walk is over. */
typedef struct ek_problem {
	const char *path;       /* "/a/b": the entry or inode concerned (an
	                           inode's problems name its smallest path) */
	ek_nid nid;
	int code;               /* negative errno, -EUCLEAN for corruption */
	const char *message;
	uint64_t offset;        /* file byte where bad data starts, or
	                           EK_NO_OFFSET */
	uint64_t image_offset;  /* image byte of the extent holding it, or
	                           EK_NO_OFFSET (not stored in the image, or
	                           not mapped) */
	const char *decoder;    /* algorithm of that extent ("lz4", ...), or
	                           NULL when no decompression was involved */
} ek_problem;

/* Called from the thread that called ek_check, in report order: by path
 * in walk order, then message. */
typedef void (*ek_problem_fn)(void *ctx, const ek_problem *problem);

typedef void (*ek_check_progress_fn)(void *ctx, uint64_t bytes_done,
				     uint64_t bytes_total);

typedef struct ek_check_options {
	const char *extract_dir;    /* NULL: check only */
	bool overwrite;             /* replace existing files in extract_dir */
	int preserve_owner;         /* -1: when running as root */
	bool no_xattrs;             /* do not restore xattrs */
	unsigned int workers;       /* 0: online CPUs; 1: single-threaded */
	ek_problem_fn problem;
	void *problem_ctx;
	ek_check_progress_fn progress;
	void *progress_ctx;
} ek_check_options;

typedef struct ek_check_stats {
	uint64_t inodes;
	uint64_t directories;
	uint64_t regular_files;
	uint64_t bytes;             /* file bytes read */
	uint64_t problems;          /* corruption found */
	uint64_t io_errors;         /* extraction failures (not the image's) */
	double seconds;
} ek_check_stats;

EK_API void ek_check_options_init(ek_check_options *o);

/*
 * Check (and extract) the whole image.  Returns 0 when the walk completed
 * (stats->problems says whether the image is clean), or a negative errno
 * when it could not run at all (bad extract dir, out of memory).
 */
EK_API int ek_check(ek_image *img, const ek_check_options *opts,
		    ek_check_stats *stats, ek_error *err);

#ifdef __cplusplus
}
#endif
#endif
