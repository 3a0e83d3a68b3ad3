/* What a file given where a directory was expected holds, told by its
 * first bytes (sniff.c), so that mkfs can say what to do instead of only
 * "not a directory". */
#ifndef EK_TOOLS_SNIFF_H
#define EK_TOOLS_SNIFF_H

#include <stdbool.h>

struct sniffed {
	const char *what;       /* "an EROFS image", "a tar archive", ... */
	const char *advice;     /* what to do with it instead */
	bool erofs;             /* an EROFS image (upstream's rebuild source) */
};

/* What path holds, when it is a file (or block device) of a kind mkfs
 * users mistake for a directory; false when it is none of them or cannot
 * be read. */
bool sniff_source(const char *path, struct sniffed *out);

#endif
