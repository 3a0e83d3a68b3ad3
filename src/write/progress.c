/* Progress of a build, in files and bytes of file data, reported to the
 * caller. */
#include <sys/stat.h>

#include "write/internal.h"
#include "write/source.h"

static void report(struct build *b)
{
	ek_build_progress p = {
		.files_done = b->files_done, .files_total = b->stats->regular_files,
		.bytes_done = b->bytes_done, .bytes_total = b->bytes_total,
		.input_done = b->input_done, .input_total = b->input_total,
	};

	if (b->o.progress)
		b->o.progress(b->o.progress_ctx, &p);
}

void build_progress(struct build *b, uint64_t bytes)
{
	b->bytes_done += bytes;
	report(b);
}

void build_file_done(struct build *b, const struct tnode *n)
{
	if (n->spooled)
		source_release(b, n);
	if (S_ISREG(n->mode)) {
		b->files_done++;
		report(b);
	}
}
