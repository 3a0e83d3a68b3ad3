/*
 * What the two halves of compressed reading share: zdata.c (reading bytes
 * of a file, through the cache or around it) and zcache.c (filling the
 * cache with decoded extents, in batches).
 */
#ifndef EK_READ_ZDATA_H
#define EK_READ_ZDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/internal.h"

/* Scratch buffers, pooled per image (img->zbufs). */
struct zbuf {
	uint8_t *in, *out;
	size_t in_cap, out_cap;
};

int zbuf_grow(uint8_t **buf, size_t *cap, size_t need);

/* Where the compressed stream starts in pcluster `in` (past the zero
 * padding), and whether it is a legacy LZ4 stream decoded as a prefix. */
int zdata_stream_start(ek_inode *inode, const ek_extent *e, const uint8_t *in,
		       size_t *skip, bool *legacy, ek_error *err);
/* Report a failed decode of extent e (code: the codec's result). */
int zdata_decode_failed(ek_inode *inode, const ek_extent *e, int code,
			const char *why, ek_error *err);

/* zcache.c: make sure the compressed extents of [off, end) are cached, or
 * being decoded by another thread (ek_cache_wait() for those). */
int zcache_fill(ek_inode *inode, uint64_t off, uint64_t end, ek_error *err);

#endif
