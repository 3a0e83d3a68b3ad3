/* Decompression engines (filled in by the compression work). */
#ifndef EK_CODEC_ENGINE_H
#define EK_CODEC_ENGINE_H

#include "erofskit/erofskit.h"

struct ek_codecs;

int ek_codecs_create(const char *deflate_engine, struct ek_codecs **out,
		     ek_error *err);
void ek_codecs_destroy(struct ek_codecs *c);

#endif
