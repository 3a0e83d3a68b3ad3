/* Images over the network (remote.c): http(s) URLs and oci:// references,
 * each read through a cache of its blocks. */
#ifndef EK_READ_REMOTE_H
#define EK_READ_REMOTE_H

#include "erofskit/erofskit.h"
#include "io/io.h"

int remote_open(const char *name, const ek_http_options *o, struct io **out, ek_error *err);

#endif
