/* dump --stats: what an image holds, counted over all of it. */
#ifndef EK_TOOLS_DUMPSTATS_H
#define EK_TOOLS_DUMPSTATS_H

#include <stdbool.h>

#include "erofskit/erofskit.h"

/* Walk the whole image and print its statistics (JSON with json) to
 * standard output: 0, or the walk's error (err names the inode). */
int dump_stats(ek_image *img, bool json, ek_error *err);

#endif
