/* Compressed files: placeholder until the compression work lands. */
#include <stdlib.h>

#include "build/compress.h"

void bcompressed_free(struct bcompressed *z)
{
	free(z);
}

#include <errno.h>

#include "build/build.h"
#include "util/error.h"

bool zbuild_wants(struct build *b, const struct binode *n)
{
	(void)b;
	(void)n;
	return false;
}

int zbuild_file(struct build *b, struct binode *n, int fd)
{
	(void)n;
	(void)fd;
	return ek_fail(b->err, -EOPNOTSUPP, "compression is not available yet");
}

void zbuild_encode_index(struct build *b, const struct binode *n, uint8_t *rec)
{
	(void)b;
	(void)n;
	(void)rec;
}

uint16_t zbuild_sb_u1(const struct build *b)
{
	(void)b;
	return 0;
}

int zbuild_setup(struct build *b)
{
	if (b->o.compressor != EK_COMPRESS_NONE)
		return ek_fail(b->err, -EOPNOTSUPP, "compression is not available yet");
	return 0;
}

int zbuild_finish_data(struct build *b)
{
	(void)b;
	return 0;
}

void zbuild_teardown(struct build *b)
{
	(void)b;
}

int ek_parse_compressor(const char *spec, ek_build_options *o, ek_error *err)
{
	(void)o;
	return ek_fail(err, -EOPNOTSUPP, "compressor %s: compression is not available yet", spec);
}
