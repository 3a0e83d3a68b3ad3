/* Decoding one pcluster: scratch buffers, the stream's start, failures
 * (zdecode.c). */
#ifndef EK_READ_ZDECODE_H
#define EK_READ_ZDECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/internal.h"

/* Scratch buffers, pooled per image (img->zbufs). */
struct zbuf {
	uint8_t *in, *out;
	size_t in_cap, out_cap;
};

void *zbuf_new(void);
void zbuf_free(void *p);
/* At least need bytes in *buf, its old contents gone; -ENOMEM. */
int zbuf_grow(uint8_t **buf, size_t *cap, size_t need);

/* Where the compressed stream starts in pcluster `in` (past the zero
 * padding), and whether it is a legacy LZ4 stream decoded as a prefix. */
int zdecode_stream_start(ek_inode *inode, const ek_extent *e, const uint8_t *in,
			 size_t *skip, bool *legacy, ek_error *err);
/* Report a failed decode of extent e (code: the decoder's result). */
int zdecode_failed(ek_inode *inode, const ek_extent *e, int code,
		   const char *why, ek_error *err);

#endif
