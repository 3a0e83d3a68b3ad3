/*
 * A caller's request to stop (ek_build_options.cancel): an int that a
 * signal handler or another thread sets, read here wherever long work can
 * stop cleanly.  A relaxed atomic load: no data race with the setter, and
 * nothing else is ordered by it.
 */
#ifndef EK_UTIL_CANCEL_H
#define EK_UTIL_CANCEL_H

#include <stdbool.h>

#define CANCEL_MESSAGE "interrupted"

static inline bool cancel_requested(const volatile int *flag)
{
	return flag && __atomic_load_n(flag, __ATOMIC_RELAXED) != 0;
}

#endif
