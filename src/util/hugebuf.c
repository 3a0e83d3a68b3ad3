#include "util/hugebuf.h"

#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE (2u << 20)

void *hugebuf_alloc(size_t size)
{
	size_t whole = (size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	void *buf;

	if (size < HUGE_PAGE || whole < size)
		return malloc(size ? size : 1);
	buf = aligned_alloc(HUGE_PAGE, whole);
	/* Only advice: without huge pages the buffer works all the same. */
	if (buf)
		(void)madvise(buf, whole, MADV_HUGEPAGE);
	return buf;
}
