/* Path strings. */
#include <stdlib.h>
#include <string.h>

#include "util/path.h"

char *path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), n = strlen(name);
	char *p = malloc(a + n + 2);

	if (p) {
		memcpy(p, dir, a);
		p[a] = '/';
		memcpy(p + a + 1, name, n + 1);
	}
	return p;
}
