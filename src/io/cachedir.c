/* The block cache's directory as a whole: bounded, and rid of the files
 * of images replaced on their server. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/cachedir.h"

#define KEY_LEN 64u
#define ENTRIES_MAX 4096u

struct entry {
	char key[KEY_LEN + 1];
	struct timespec used;
	uint64_t bytes;            /* the data file's blocks on disk */
	bool stale;                /* an older version of our URL */
};

static bool is_key(const char *name)
{
	size_t i;

	for (i = 0; i < KEY_LEN; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return !strcmp(name + KEY_LEN, ".map");
}

/* The URL of an identity: its first line. */
static size_t url_len(const char *identity)
{
	return strcspn(identity, "\n");
}

/* Remove an image's files unless someone has them open. */
static bool remove_unused(int dir_fd, const char *key)
{
	char name[KEY_LEN + 8];
	bool gone = false;
	int fd;

	snprintf(name, sizeof(name), "%s.data", key);
	fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && !flock(fd, LOCK_EX | LOCK_NB)) {
		gone = !unlinkat(dir_fd, name, 0);
		snprintf(name, sizeof(name), "%s.map", key);
		(void)unlinkat(dir_fd, name, 0);
	}
	if (fd >= 0)
		close(fd);
	return gone;
}

/* name: a directory entry is_key() accepts. */
static void read_entry(int dir_fd, const char *name_of_map, const char *identity, struct entry *e)
{
	struct map_header h;
	char name[KEY_LEN + 8];
	struct stat st;
	int fd;

	memset(e, 0, sizeof(*e));
	memcpy(e->key, name_of_map, KEY_LEN);
	snprintf(name, sizeof(name), "%s.map", e->key);
	fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (!fstat(fd, &st))
		e->used = st.st_mtim;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    !memcmp(h.magic, CACHE_MAGIC, sizeof(CACHE_MAGIC))) {
		h.identity[sizeof(h.identity) - 1] = '\0';
		e->stale = url_len(h.identity) == url_len(identity) &&
			   !memcmp(h.identity, identity, url_len(identity)) &&
			   strcmp(h.identity, identity);
	}
	close(fd);
	snprintf(name, sizeof(name), "%s.data", e->key);
	if (!fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		e->bytes = (uint64_t)st.st_blocks * 512u;
}

static int older_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

void cachedir_tidy(const char *dir, const char *keep, const char *identity, uint64_t budget)
{
	struct entry *list = NULL;
	struct dirent *d;
	uint64_t total = 0;
	size_t n = 0, i;
	DIR *dp = opendir(dir);
	int dir_fd;

	if (!dp)
		return;
	dir_fd = dirfd(dp);
	list = calloc(ENTRIES_MAX, sizeof(*list));
	while (list && n < ENTRIES_MAX && (d = readdir(dp))) {
		if (!is_key(d->d_name))
			continue;
		read_entry(dir_fd, d->d_name, identity, &list[n]);
		total += list[n].bytes;
		n++;
	}
	/* The older versions of this image first, then by age. */
	for (i = 0; i < n; i++)
		if (list[i].stale && strcmp(list[i].key, keep) && remove_unused(dir_fd, list[i].key)) {
			total -= list[i].bytes;
			list[i].bytes = 0;
		}
	if (list)
		qsort(list, n, sizeof(*list), older_first);
	for (i = 0; i < n && total > budget; i++)
		if (list[i].bytes && strcmp(list[i].key, keep) && remove_unused(dir_fd, list[i].key))
			total -= list[i].bytes;
	free(list);
	closedir(dp);
}
