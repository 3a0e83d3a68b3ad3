/* Progress of a build, in bytes of file data, reported to the caller. */
#include "write/internal.h"

void build_progress(struct build *b, uint64_t bytes)
{
	b->bytes_done += bytes;
	if (b->o.progress)
		b->o.progress(b->o.progress_ctx, b->bytes_done, b->bytes_total);
}
