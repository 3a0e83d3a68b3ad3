/*
 * Fuzz target: mkfs --tar over bytes taken as an archive (libarchive
 * parses; what erofskit does with what it returns is what is fuzzed),
 * compressed, with whiteouts (stripped for odd sizes); then --tar=i over
 * the same bytes, its headers parsed on a second thread, and for half the
 * sizes the tar copied out (decompressed, --tar-copy) and indexed.  Whatever the
 * bytes, each build either fails with an error or writes an image that
 * opens and that fsck finds clean (the index with the bytes appended, as
 * it is used): an image erofskit writes is never corrupt.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <erofskit/build.h>

#include "clean.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An index's tar goes after it. */
static void append(const char *image, const uint8_t *data, size_t size)
{
	int fd = open(image, O_WRONLY | O_APPEND);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
}

/* The tar --tar-copy wrote, after the index. */
static void append_copy(const char *image, const char *copy)
{
	int fd = open(copy, O_RDONLY);
	off_t size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
	uint8_t *p = size > 0 ? mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;

	if (size < 0 || (size > 0 && p == MAP_FAILED))
		abort();
	append(image, p, (size_t)size);
	if (size > 0)
		munmap(p, (size_t)size);
	close(fd);
	unlink(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[] = "/tmp/ek-fuzz-tar.XXXXXX";
	static int made;
	char input[64], image[64], copy[64];
	ek_build_options o;
	ek_error err;
	int fd;

	if (!made)
		fuzz_scratch_dir(dir);
	made = 1;
	fd = memfd_create("tar", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(input, sizeof(input), "/proc/self/fd/%d", fd);
	snprintf(image, sizeof(image), "%s/out.img", dir);
	snprintf(copy, sizeof(copy), "%s/copy.tar", dir);
	ek_build_options_init(&o);
	o.workers = 1;
	o.aufs = true;
	o.ovlfs_strip = size & 1;   /* whiteouts kept, or only taking names away */
	if (ek_parse_compressor("lz4", &o, &err))
		abort();
	if (!ek_build_tar(image, input, &o, NULL, &err)) {
		fuzz_require_clean(image, "fuzz_tar");
		unlink(image);
	}
	ek_build_options_init(&o);
	o.workers = 2;
	o.aufs = true;
	o.tar_index = true;
	o.block_size = 512;
	/* Half the time the tar is copied out (decompressed) and indexed. */
	o.tar_copy = size & 2 ? copy : NULL;
	if (!ek_build_tar(image, input, &o, NULL, &err)) {
		if (o.tar_copy)
			append_copy(image, copy);
		else
			append(image, data, size);
		fuzz_require_clean(image, "fuzz_tar (--tar=i)");
		unlink(image);
	}
	close(fd);
	return 0;
}
