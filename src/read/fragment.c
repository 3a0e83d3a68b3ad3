/*
 * The packed inode: fragments (file tails, whole small files) of many files
 * live in its data.  It is decoded once and shared by every reader when it
 * is of a reasonable size; bigger ones are read through on demand.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "read/fragment.h"
#include "read/internal.h"
#include "read/plain.h"
#include "read/zdata.h"
#include "util/error.h"

#define FRAGMENT_CACHE_MAX (256ull << 20)

struct fragment_cache {
	pthread_mutex_t lock;
	bool loaded;
	uint8_t *data;
};

int fragment_cache_create(ek_image *img, ek_error *err)
{
	struct fragment_cache *fc = calloc(1, sizeof(*fc));

	if (!fc)
		return err_fail(err, -ENOMEM, "out of memory");
	pthread_mutex_init(&fc->lock, NULL);
	img->fragments = fc;
	return 0;
}

void fragment_cache_free(struct fragment_cache *fc)
{
	if (fc) {
		pthread_mutex_destroy(&fc->lock);
		free(fc->data);
		free(fc);
	}
}

/* The packed inode's own bytes.  They are its own pclusters' (or plain
 * blocks'): a fragment extent inside it would have it read itself. */
static int packed_read(ek_image *img, uint8_t *buf, size_t len, uint64_t off,
		       ek_error *err)
{
	ek_inode *p = img->packed;
	size_t done;
	int ret;

	if (!layout_is_compressed(p->raw.layout))
		return plain_read(p, buf, len, off, err);
	ret = zdata_read(p, buf, len, off, &done, err);
	if (!ret && done < len)
		ret = err_fail(err, -EUCLEAN, "packed inode %llu has a fragment of its own at %llu",
			       (unsigned long long)p->nid, (unsigned long long)(off + done));
	return ret;
}

/* Decode the whole packed inode once; NULL data means "read through". */
static int load_once(ek_image *img, const uint8_t **data, ek_error *err)
{
	struct fragment_cache *fc = img->fragments;
	uint64_t size = img->packed->st.size;
	int ret = 0;

	pthread_mutex_lock(&fc->lock);
	if (!fc->loaded && size <= FRAGMENT_CACHE_MAX) {
		uint8_t *d = malloc(size ? size : 1);

		if (d) {
			ret = packed_read(img, d, (size_t)size, 0, err);
			if (ret)
				free(d);
			else
				fc->data = d;
		}
		/* A failure is reported to this caller and retried by the next:
		 * the damage may be in a part another file does not need. */
		fc->loaded = !ret;
	}
	*data = fc->data;
	pthread_mutex_unlock(&fc->lock);
	return ret;
}

int fragment_read(ek_image *img, uint64_t off, void *buf, size_t len,
		  ek_error *err)
{
	const uint8_t *data = NULL;
	uint64_t size;
	int ret;

	if (!img->packed)
		return err_fail(err, -EUCLEAN, "fragment without a packed inode");
	if (!S_ISREG(img->packed->st.mode))
		return err_fail(err, -EUCLEAN, "packed inode %llu is not a regular file",
			       (unsigned long long)img->packed->nid);
	size = img->packed->st.size;
	if (off > size || len > size - off)
		return err_fail(err, -EUCLEAN,
			       "fragment at %llu (+%zu) lies past the end of the %llu-byte packed inode",
			       (unsigned long long)off, len, (unsigned long long)size);
	ret = load_once(img, &data, err);
	if (ret)
		return ret;
	if (data) {
		memcpy(buf, data + off, len);
		return 0;
	}
	return packed_read(img, buf, len, off, err);
}
