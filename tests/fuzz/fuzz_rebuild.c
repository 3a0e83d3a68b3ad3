/*
 * Fuzz target: mkfs with the bytes as its source image (the reader
 * validates them; the walk over what it returns, the hole search and the
 * copy are erofskit's writer's), uncompressed and, for odd sizes, with
 * lz4 and fragments.  Whatever the bytes, the build either fails with an
 * error or writes an image that opens and that fsck finds clean.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <erofskit/build.h>

#include "clean.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A few bytes can describe gigabytes (a compressed file of zeros, which
 * the copy writes out): past this much data the build is stopped, which
 * tests the stop as well. */
#define DATA_MAX (64ull << 20)

static volatile int stop;

static void watch(void *ctx, const ek_build_progress *p)
{
	(void)ctx;
	if (p->bytes_total > DATA_MAX)
		stop = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[] = "/tmp/ek-fuzz-rebuild.XXXXXX";
	static int made;
	char source[64], image[64];
	ek_build_options o;
	ek_error err;
	int fd;

	if (!made)
		fuzz_scratch_dir(dir);
	made = 1;
	/* A file of its own: the build tells an image from a directory by
	 * its magic, through its path. */
	snprintf(source, sizeof(source), "%s/source.img", dir);
	snprintf(image, sizeof(image), "%s/out.img", dir);
	fd = open(source, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	ek_build_options_init(&o);
	o.workers = 1;
	stop = 0;
	o.cancel = &stop;
	o.progress = watch;
	if (size & 1) {
		o.compressor = EK_COMPRESS_LZ4;
		o.fragments = EK_FRAGMENTS_TAILS;
	}
	if (ek_build(image, source, &o, NULL, &err) == 0)
		fuzz_require_clean(image, "mkfs from a source image");
	unlink(image);
	unlink(source);
	return 0;
}
