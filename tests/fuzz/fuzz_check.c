/* Fuzz target: the fsck path (the checker's walk, single-threaded and
 * with workers) over bytes taken as an image.  Both runs must report the
 * same: one worker and two find the same problems. */
#include <stddef.h>
#include <stdint.h>

#include "transcript.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	transcript_one_and_two(data, size, NULL, NULL);
	return 0;
}
