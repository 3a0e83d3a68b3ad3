/* Which I/O back end reads a name (backend.h). */
#include "read/remote.h"
#include "read/backend.h"

int backend_open(const char *name, const ek_open_options *o, uint64_t *borrow,
		struct io **out, ek_error *err)
{
	bool url = ek_is_url(name);

	if (!url && o && o->io == EK_IO_URING)
		return io_open_uring(name, borrow, out, err);
	*borrow = 0;
	return url ? remote_open(name, o ? &o->http : NULL, out, err)
		   : io_open_pread(name, out, err);
}
