/*
 * The block cache's files (blockcache.c) and their directory as a whole
 * (cachedir.c).  Per image KEY (the hex SHA-256 of its identity):
 * KEY.data, sparse, the image's bytes at their offsets; KEY.map, a
 * header then one entry per chunk.
 */
#ifndef EK_IO_CACHEDIR_H
#define EK_IO_CACHEDIR_H

#include <stdint.h>

#define CACHE_MAGIC "erofskit block cache 1\n"
#define CACHE_IDENTITY_MAX 3000u
#define CACHE_HEADER_SIZE 4096u
/* Every chunk present and the whole matched its digest; cleared when a
 * chunk is stored again. */
#define CACHE_WHOLE_CHECKED 1u

struct map_header {
	char magic[32];
	uint64_t image_size;
	uint32_t chunk_shift;
	uint32_t flags;              /* CACHE_WHOLE_CHECKED, atomically */
	uint64_t present;            /* chunks present, atomically */
	char identity[CACHE_IDENTITY_MAX];   /* URL '\n' validator '\n' size */
};

/*
 * Keep dir within budget bytes (what its data files hold on disk): the
 * files of other images nobody has open go, least recently used first
 * (a map's mtime is its last open); those of an older version of this
 * image's URL (another validator) go first, whatever the budget.  keep is
 * this image's key, identity its identity.  Best effort: what cannot be
 * read or removed is left.
 */
void cachedir_tidy(const char *dir, const char *keep, const char *identity, uint64_t budget);

#endif
