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
#include <erofskit/check.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_problem(void *ctx, const ek_problem *p)
{
	(void)ctx;
	fprintf(stderr, "fuzz_tar: the image it wrote has a problem: %s (nid %llu): %s\n",
		p->path, (unsigned long long)p->nid, p->message);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[] = "/tmp/ek-fuzz-tar.XXXXXX";
	static int made;
	char input[64], image[64];
	ek_build_options o;
	ek_check_options co;
	ek_check_stats st;
	ek_error err;
	ek_image *img;
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
		if (ek_open(image, NULL, &img, &err)) {
			fprintf(stderr, "fuzz_tar: the image it wrote does not open: %s\n", err.message);
			abort();
		}
		ek_check_options_init(&co);
		co.workers = 1;
		co.problem = on_problem;
		if (ek_check(img, &co, &st, &err) || st.problems)
			abort();
		ek_close(img);
		unlink(image);
	}
	close(fd);
	return 0;
}
