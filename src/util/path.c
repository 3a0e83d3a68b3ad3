/* Paths: their strings, and where a scratch file goes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

int path_split(const char *rel, char *parent, size_t size, const char **name)
{
	const char *slash = strrchr(rel, '/');
	size_t len = slash ? (size_t)(slash - rel) : 0;

	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(parent, rel, len);
	parent[len] = '\0';
	*name = slash ? slash + 1 : rel;
	return 0;
}

int path_scratch_file(const char *dir)
{
	const char *tmp = getenv("TMPDIR");
	int fd = dir ? open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;

	if (fd < 0)
		fd = open(tmp && *tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return fd;
}

/* The directory that holds file, into dir[size]. */
static void dir_of(const char *file, char *dir, size_t size)
{
	const char *slash = strrchr(file, '/');

	if (slash)
		snprintf(dir, size, "%.*s", (int)(slash - file + (slash == file)), file);
	else
		snprintf(dir, size, ".");
}

int path_scratch_beside(const char *file)
{
	char dir[4096];

	dir_of(file, dir, sizeof(dir));
	return path_scratch_file(dir);
}

int path_unnamed_beside(const char *file)
{
	char dir[4096];

	dir_of(file, dir, sizeof(dir));
	return open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}
