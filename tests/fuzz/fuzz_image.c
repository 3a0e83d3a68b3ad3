/* Fuzz target: bytes as an image, every part of it walked, with each
 * deflate engine and with the decompressed-cluster cache on and off, and
 * with its extra devices (if any) given files of their own. */
#include <stddef.h>
#include <stdint.h>

#include "walk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const engines[] = { "libdeflate", "isal", "zlib" };
	unsigned int i;

	for (i = 0; i < 3; i++)
		fuzz_open_and_walk(data, size, engines[i], i == 1 ? (8u << 20) : 0);
	fuzz_open_with_devices(data, size);
	return 0;
}
