/* io_uring back end: until it lands, fall back to buffered pread. */
#include "io/io.h"

int ek_io_open_uring(const char *path, struct ek_io **out, ek_error *err)
{
	return ek_io_open_pread(path, out, err);
}
