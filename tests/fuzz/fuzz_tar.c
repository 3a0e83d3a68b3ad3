/*
 * Fuzz target: mkfs --tar over bytes taken as an archive (libarchive
 * parses; what erofskit does with what it returns is what is fuzzed),
 * compressed, with whiteouts.  Whatever the bytes, the build either fails
 * with an error or writes an image that opens and that fsck finds clean:
 * an image erofskit writes is never corrupt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <erofskit/build.h>

#include "clean.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[] = "/tmp/ek-fuzz-tar.XXXXXX";
	static int made;
	char input[64], image[64];
	ek_build_options o;
	ek_error err;
	int fd;

	if (!made && !mkdtemp(dir))
		abort();
	made = 1;
	fd = memfd_create("tar", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(input, sizeof(input), "/proc/self/fd/%d", fd);
	snprintf(image, sizeof(image), "%s/out.img", dir);
	ek_build_options_init(&o);
	o.workers = 1;
	o.aufs = true;
	if (ek_parse_compressor("lz4", &o, &err))
		abort();
	if (!ek_build_tar(image, input, &o, NULL, &err)) {
		fuzz_require_clean(image, "fuzz_tar");
		unlink(image);
	}
	close(fd);
	return 0;
}
