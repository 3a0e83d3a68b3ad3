/* Private state of the read library, shared by the files of src/read:
 * the open image and the inode handle; each file's functions are in its
 * own header. */
#ifndef EK_READ_INTERNAL_H
#define EK_READ_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "erofskit/erofskit.h"
#include "format/inode.h"
#include "format/super.h"
#include "util/ctxpool.h"
#include "format/zindex.h"
#include "io/io.h"
#include "util/error.h"

struct engine;
struct cache;
struct readahead;

/* Compression configuration records (spec 7.2), defaults filled in. */
struct compr_config {
	uint16_t lz4_max_distance;
	uint16_t lz4_max_pclusterblks;
	uint32_t lzma_dict_size;
	uint8_t deflate_windowbits;
	uint8_t zstd_windowlog;
};

/* An extra device (spec 8.3, devices.c): where img->io reads its blocks. */
struct device_slot {
	char tag[65];                  /* from its slot, for messages */
	uint64_t blocks;               /* its slot's; 0: not given */
	uint64_t uniaddr;              /* its slot's first unified block */
	/* Its block 0 in img->io's address space; 0: nowhere (its own file
	 * was not given and the image file does not hold it). */
	uint64_t base;
	uint64_t span;                 /* bytes readable from base; 0: any */
	bool own_file;                 /* given at open: routed */
};

struct long_prefix {
	uint8_t base_index;
	uint16_t infix_len;
	uint8_t *infix;
};

struct ek_image {
	struct io *io;
	uint64_t size;                 /* bytes of io: the image and its devices */
	uint64_t file_size;            /* bytes of the image file alone */
	struct fmt_super sb;
	uint32_t blksz;
	unsigned int blkszbits;
	ek_open_options opts;
	unsigned int workers;          /* opts.workers resolved */

	uint16_t algorithms;           /* bitmap of usable algorithm ids */
	struct compr_config zcfg;
	struct engine *engine;      /* decompression */

	unsigned int ndevices;
	struct device_slot *devices;

	unsigned int nprefixes;
	struct long_prefix *prefixes;

	/* METABOX: the metabox inode's whole data, decoded once at open. */
	uint8_t *metabox;
	uint64_t metabox_size;

	/* FRAGMENTS: the packed inode, loaded at open (fragment.c). */
	ek_inode *packed;

	struct ctxpool zbufs;          /* scratch buffers for decompression */
	struct ctxpool batches;        /* zcache.c's batches of extents */
	struct bad_extents *bad;           /* extents that failed to decode */
	struct cache *metacache;    /* 4 KiB blocks of metadata */
	struct cache *cache;        /* decompressed clusters, may be NULL */
	struct readahead *readahead;/* background decompression, may be NULL */
};

/* Compressed inode mapping state (see zmap.c). */
struct zmap_inode {
	uint16_t advise;
	uint8_t algorithm[2];          /* HEAD1, HEAD2 algorithm ids */
	uint8_t lclusterbits;
	bool whole_fragment;           /* entire file lives in the packed inode */
	bool tail_inline;              /* INLINE_PCLUSTER */
	bool tail_fragment;            /* FRAGMENT_PCLUSTER */
	bool big_pcluster[2];
	uint64_t fragment_offset;      /* in the packed inode's data */
	uint16_t idata_size;           /* inline tail pcluster bytes */
	uint64_t header_off;           /* byte offset of the map header */
	uint64_t index_off;            /* first index entry / pack */
	uint64_t nlclusters;
	/* compact layout regions (spec 6.7) */
	uint64_t compact_4b_initial;   /* A */
	uint64_t compact_2b;           /* B */
	/* encoded extents (48-bit) */
	bool extents;
	unsigned int extent_recsz;
	uint64_t extent_count;
	uint64_t extent_p0;            /* recsz 4: first physical byte */
	uint64_t *extent_ckpt;         /* recsz 4: physical start every 64 */
	/* tail extent, found on first use */
	bool tail_known;
	uint64_t tail_head_lcn;
	uint64_t tail_inline_off;      /* byte offset of the inline pcluster */
};

struct ek_inode {
	ek_image *img;
	atomic_uint refs;
	_Atomic uint64_t ra_next;      /* where a sequential read goes on */
	_Atomic uint64_t ra_until;     /* readahead issued up to here */
	ek_nid nid;
	bool in_metabox;               /* record lives in the metabox data */
	uint64_t iloc;                 /* offset of the core in its space */
	struct fmt_inode raw;
	ek_stat st;
	uint64_t xattr_off;            /* iloc + core_size */
	uint64_t data_off;             /* iloc + core_size + xattr_size */

	/* CHUNK_BASED */
	unsigned int chunkbits;
	unsigned int chunk_unit;       /* 4 (block map) or 8 (indexes) */
	uint64_t chunk_table_off;

	struct zmap_inode z;
	/* Where its decoded extents are kept: the image's cache, the packed
	 * inode's own (fragment.c), or NULL (uncached: fsck, extraction). */
	struct cache *cache;
};

/* Another reference to an inode handle (released by ek_inode_put). */
ek_inode *inode_ref(ek_inode *inode);

/* Load an inode without resolving anything that needs other inodes. */
int inode_load(ek_image *img, ek_nid nid, ek_inode **out, ek_error *err);

/* Long xattr prefixes (xattr.c), loaded at open. */
int xattr_load_prefixes(ek_image *img, ek_error *err);

static inline bool layout_is_compressed(unsigned int layout)
{
	return layout == EROFS_LAYOUT_COMPRESSED_FULL ||
	       layout == EROFS_LAYOUT_COMPRESSED_COMPACT;
}

#endif
