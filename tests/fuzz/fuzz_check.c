/* Fuzz target: the fsck path (the checker's walk, single-threaded and
 * with workers) over bytes taken as an image. */
#include <stddef.h>
#include <stdint.h>

#include "erofskit/check.h"
#include "walk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ek_check_options co;
	ek_check_stats st;
	ek_image *img;
	unsigned int w;

	if (ek_open_memory(data, size, NULL, &img, NULL))
		return 0;
	for (w = 1; w <= 2; w++) {
		ek_check_options_init(&co);
		co.workers = w;
		ek_check(img, &co, &st, NULL);
	}
	ek_close(img);
	return 0;
}
