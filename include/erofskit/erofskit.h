/*
 * erofskit: read EROFS images without the kernel.
 *
 * One ek_image is safe to share between threads: every read function may be
 * called concurrently on the same image.  An ek_inode handle is immutable
 * after ek_inode_get() and may be shared too.
 *
 * Errors: functions return 0 (or a byte count) on success and a negative
 * errno value on failure.  -EUCLEAN means "the image is corrupt".  When the
 * caller passes an ek_error, it receives the code and a message that names
 * the inode and what is wrong.  ek_error may be NULL.
 */
#ifndef EROFSKIT_EROFSKIT_H
#define EROFSKIT_EROFSKIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's interface: the functions marked EK_API are all that its
 * shared form exports; everything else is built with hidden visibility. */
#if defined(__GNUC__) || defined(__clang__)
#define EK_API __attribute__((visibility("default")))
#else
#define EK_API
#endif

#define EK_ERROR_MESSAGE_MAX 512

typedef struct ek_error {
	int code;                           /* negative errno, 0 = none */
	char message[EK_ERROR_MESSAGE_MAX]; /* human readable, NUL terminated */
} ek_error;

/* Library version, e.g. "0.1.0". */
EK_API const char *ek_version(void);

/* ------------------------------------------------------------ opening */

typedef struct ek_image ek_image;
typedef uint64_t ek_nid;

enum ek_io_backend {
	EK_IO_PREAD = 0, /* buffered pread(2) */
	EK_IO_URING = 1, /* io_uring with O_DIRECT, falls back to buffered */
};

/* Images at http:// and https:// URLs (ek_open takes one for a path):
 * read with Range requests, connections kept alive, failures tried again
 * with backoff.  Zero fields take the defaults. */
typedef struct ek_http_options {
	int insecure;                /* do not verify the server's certificate */
	const char *cacert;          /* CA certificates (PEM file), NULL = system */
	const char *const *headers;  /* "Name: value" strings, NULL-terminated */
	const char *token_file;      /* sends "Authorization: Bearer <file>" */
	unsigned int timeout_ms;     /* connect, and stall, timeout (30 s) */
	unsigned int retries;        /* tries after a failure (5); or: */
#define EK_HTTP_NO_RETRIES UINT32_MAX
	/* The image's bytes are kept in a persistent cache in this
	 * directory, shared by every process reading the same image
	 * (keyed by URL and ETag): NULL = $XDG_CACHE_HOME/erofskit (or
	 * ~/.cache/erofskit), "none" = a private file gone at close. */
	const char *cache_dir;
	uint64_t cache_max;          /* bytes of cache_dir (2 GiB); LRU out */
	int prefetch_all;            /* fetch the whole image in the background */
	/* oci:// references: a file holding "user:password" for the
	 * registry's Basic or token authentication (NULL: the environment's
	 * EK_REGISTRY_AUTH_ENV, "user:password" itself, when set; else
	 * anonymous), and plain HTTP instead of HTTPS. */
	const char *credentials_file;
#define EK_REGISTRY_AUTH_ENV "EROFSKIT_REGISTRY_AUTH"
	int plain_http;
	/* oci:// images ek_build_oci pulls: how many layers come down at
	 * once, each over a connection of its own (0: 3, as Docker's and
	 * containerd's default; 1: one after another; at most
	 * EK_HTTP_DOWNLOADS_MAX). */
	unsigned int downloads;
#define EK_HTTP_DOWNLOADS_MAX 16
} ek_http_options;

typedef struct ek_open_options {
	/* For files; a URL is read over HTTP.  ek_open_options_init() sets
	 * EK_IO_PREAD: fsck and extraction read each block once, in large
	 * runs.  erofskit mount sets EK_IO_URING (README: Which I/O). */
	enum ek_io_backend io;
	/* deflate decoder: "libdeflate", "isal", "zlib" or NULL
	 * (default: $EROFSKIT_ENGINE, else libdeflate, the fastest) */
	const char *deflate_engine;
	/* lzma decoder: "builtin" (erofskit's own) or "liblzma", or NULL
	 * (default: $EROFSKIT_LZMA_ENGINE, else builtin, the faster) */
	const char *lzma_engine;
	/* decompressed-cluster cache budget in bytes; 0 = no cache.  With
	 * EK_IO_URING reading O_DIRECT, up to half of it (no more than the
	 * image) holds the image's compressed blocks instead, as the page
	 * cache would for buffered reads. */
	size_t cache_bytes;
	/* threads that decompress, as everywhere in the library: 0 = one
	 * per CPU this process may use (the default), 1 = the calling thread
	 * alone.  With a cache, N > 1 starts N background threads that
	 * decode batches (callers decode a share of their own reads too)
	 * and, with readahead, one that reads ahead. */
	unsigned int workers;
	/* detect sequential readers and decompress ahead (needs a cache and
	 * more than one worker) */
	int readahead;
	ek_http_options http;
	/* The files of the image's extra devices (spec 8.3: an upstream
	 * mkfs.erofs --blobdev's blob, say), one per device in the order of
	 * its device table, NULL-terminated; read with the image's io and
	 * http options, as the kernel's device= mount options are.  NULL:
	 * the image file holds them at their unified addresses, as a mount
	 * without device= reads them. */
	const char *const *devices;
	/* where the image starts in its file (mkfs.erofs --offset, the
	 * kernel's fsoffset=): bytes before it are not the image's; extra
	 * devices are read from their start.  0: the file's first byte */
	uint64_t offset;
} ek_open_options;

/* Fill *o with the defaults. */
EK_API void ek_open_options_init(ek_open_options *o);
/* Use the decoder NAME for the algorithm it decodes (each name belongs to
 * one: libdeflate, isal, zlib for deflate; builtin, liblzma for lzma), as
 * the tools' --engine does.  -EINVAL, naming them all, for any other. */
EK_API int ek_open_options_set_engine(ek_open_options *o, const char *name, ek_error *err);

/* Open an image file, or an http:// or https:// URL.  opts may be NULL
 * for the defaults. */
EK_API int ek_open(const char *path, const ek_open_options *opts, ek_image **out,
		   ek_error *err);
/* Whether ek_open reads name over the network: an http:// or https://
 * URL, or an oci://REGISTRY/REPO:TAG (or @sha256:DIGEST) reference to an
 * image stored in an OCI registry as a layer of media type
 * application/vnd.erofs (what ek_push makes). */
EK_API int ek_is_url(const char *name);
/* Upload the image file as an OCI artifact tagged ref
 * (oci://REGISTRY/REPO:TAG); the manifest's digest ("sha256:...") is
 * stored in digest_out. */
EK_API int ek_push(const char *image, const char *ref, const ek_http_options *o,
		   char *digest_out, size_t digest_size, ek_error *err);
/* For an image read from an oci:// reference: fetch what is missing and
 * check the whole blob against its digest (-EUCLEAN when it differs).
 * -ENODATA for an image with no digest to check (a file, an http URL). */
EK_API int ek_verify_source(ek_image *img, ek_error *err);
/* Open an image held in memory (the buffer must outlive the image). */
EK_API int ek_open_memory(const void *data, size_t size, const ek_open_options *opts,
			  ek_image **out, ek_error *err);
EK_API void ek_close(ek_image *img);

/* ------------------------------------------------------------ superblock */

typedef struct ek_super_info {
	uint32_t block_size;
	uint32_t feature_compat;
	uint32_t feature_incompat;
	uint32_t checksum;
	int checksum_present;     /* compat SB_CHKSUM */
	ek_nid root_nid;
	uint64_t inodes;
	int64_t epoch;            /* base time of compact inodes */
	uint32_t fixed_nsec;
	uint64_t blocks;
	uint64_t meta_blkaddr;
	uint64_t xattr_blkaddr;
	uint8_t uuid[16];
	char volume_name[17];
	uint16_t compr_algs;      /* bitmap of algorithm ids available */
	int compressed;           /* declares compression (0padding/configs) */
	uint16_t lz4_max_distance;
	uint16_t extra_devices;
	uint8_t xattr_prefix_count;
	ek_nid packed_nid;        /* 0 = no packed inode */
	ek_nid metabox_nid;       /* 0 = no metabox */
	uint64_t image_size;      /* bytes of the image file */
} ek_super_info;

EK_API void ek_get_super_info(const ek_image *img, ek_super_info *out);

/* An extra device of the image (spec 8.3), from its device table slot. */
typedef struct ek_device_info {
	char tag[65];             /* its slot's tag, NUL-terminated */
	uint64_t blocks;          /* its size in blocks; 0: the slot does not say */
	uint64_t uniaddr;         /* its first block in the unified address space */
	int own_file;             /* read from its own file (ek_open_options.devices) */
	/* Where its block 0 lies in the physical offsets ek_map reports (the
	 * image file, then each device given a file of its own); UINT64_MAX
	 * when nowhere: not given a file, and at unified block 0, where the
	 * image file cannot hold it. */
	uint64_t physical;
	uint64_t size;            /* bytes from there: its blocks' or, not given,
	                             its file's; 0: not known (the slot's 0) */
	int readable;             /* it lies where it is read: in its own file,
	                             or wholly in the image file */
} ek_device_info;

/* Device number (1 to ek_super_info.extra_devices) into *out; -ENOENT
 * for any other number. */
EK_API int ek_get_device_info(const ek_image *img, unsigned int number, ek_device_info *out);
/* Long xattr name prefix `index` (0 to ek_super_info.xattr_prefix_count
 * - 1) whole, its built-in prefix and infix ("trusted.overlay."),
 * NUL-terminated into buf: its length, or -ENOENT for any other index,
 * -EUCLEAN when its built-in prefix is none the format knows, -ERANGE
 * when buf is too small (300 bytes always do). */
EK_API int ek_get_xattr_prefix(const ek_image *img, unsigned int index, char *buf,
			       size_t size);
/* The threads that decompress for img: its options' workers, resolved. */
EK_API unsigned int ek_image_workers(const ek_image *img);
/* How img is read: "pread", "io_uring+O_DIRECT", "io_uring" (EK_IO_URING
 * where the file refuses O_DIRECT: buffered), "http" or "memory". */
EK_API const char *ek_image_io(const ek_image *img);
EK_API ek_nid ek_root_nid(const ek_image *img);

/* Names of the features set in the superblock, comma separated. */
EK_API void ek_feature_names(const ek_super_info *sb, char *buf, size_t size);
/* Name of an on-disk layout (ek_inode_detail.layout): "flat inline", ... */
EK_API const char *ek_layout_name(unsigned int layout);

/* ------------------------------------------------------------ inodes */

typedef struct ek_inode ek_inode;

typedef struct ek_stat {
	ek_nid nid;
	uint64_t ino;       /* what the kernel reports as st_ino */
	uint32_t mode;      /* type and permission bits, as st_mode */
	uint32_t uid, gid;
	uint32_t nlink;
	uint64_t size;
	int64_t mtime;      /* seconds since the epoch, may be negative */
	uint32_t mtime_nsec;
	uint32_t rdev_major, rdev_minor;
	uint64_t blocks;    /* 512-byte units, as st_blocks */
} ek_stat;

/* Load and validate one inode.  The handle must be released with
 * ek_inode_put(). */
EK_API int ek_inode_get(ek_image *img, ek_nid nid, ek_inode **out, ek_error *err);
EK_API void ek_inode_put(ek_inode *inode);
EK_API const ek_stat *ek_inode_stat(const ek_inode *inode);
EK_API ek_image *ek_inode_image(const ek_inode *inode);

/* Detail of an inode's on-disk form, for inspection tools. */
typedef struct ek_inode_detail {
	int extended;            /* 64-byte core */
	unsigned int layout;     /* 0 plain, 1 compressed full, 2 inline,
	                            3 compressed compact, 4 chunk based */
	uint64_t inode_offset;   /* byte offset of the core in the image */
	unsigned int xattr_size; /* bytes of the inline xattr body */
	uint32_t raw_u;          /* the i_u union */
	uint32_t on_disk_ino;    /* informational i_ino */
	uint64_t inline_offset;  /* byte offset of inline data, 0 if none */
	uint32_t inline_size;
	/* a directory that stores no "." (DOT_OMITTED, Linux 6.15):
	 * ek_readdir lists one made up, last, as the kernel does */
	int dot_omitted;
} ek_inode_detail;

EK_API void ek_inode_get_detail(const ek_inode *inode, ek_inode_detail *out);

/* Resolve an absolute path ("/", "/etc/passwd"; "." and ".." are handled
 * as names stored in the directories, a DOT_OMITTED one's "." as itself;
 * symlinks are not followed). */
EK_API int ek_lookup(ek_image *img, const char *path, ek_nid *out, ek_error *err);
/* Look up one name in a directory. -ENOENT if absent. */
EK_API int ek_lookup_child(ek_inode *dir, const char *name, size_t name_len,
			   ek_nid *out, ek_error *err);
/* Convenience: stat by nid. */
EK_API int ek_stat_nid(ek_image *img, ek_nid nid, ek_stat *out, ek_error *err);

/* ------------------------------------------------------------ directories */

enum ek_file_type {
	EK_FT_UNKNOWN = 0, EK_FT_REG = 1, EK_FT_DIR = 2, EK_FT_CHR = 3,
	EK_FT_BLK = 4, EK_FT_FIFO = 5, EK_FT_SOCK = 6, EK_FT_LNK = 7,
};

/* The type of a mode (st_mode), the mode's type bits of a type (0 for
 * EK_FT_UNKNOWN), and its name: "regular", "directory", "symlink",
 * "chardev", "blockdev", "fifo", "socket" or "unknown". */
EK_API unsigned int ek_file_type_of_mode(uint32_t mode);
EK_API uint32_t ek_file_type_mode(unsigned int type);
EK_API const char *ek_file_type_name(unsigned int type);

typedef struct ek_dirent {
	ek_nid nid;
	unsigned int type;      /* enum ek_file_type */
	const char *name;       /* not NUL terminated */
	size_t name_len;
	uint64_t next_offset;   /* pass to ek_readdir to continue after this */
} ek_dirent;

/* Called for each entry; return non-zero to stop (ek_readdir returns it). */
typedef int (*ek_readdir_fn)(void *ctx, const ek_dirent *d);

/* Iterate a directory's entries (including "." and ".."), in on-disk
 * order, starting at offset (0 = beginning).  Every block is validated
 * before any of its entries is reported. */
EK_API int ek_readdir(ek_inode *dir, uint64_t offset, ek_readdir_fn fn, void *ctx,
		      ek_error *err);

/* ------------------------------------------------------------ data */

/* Read up to len bytes at offset; returns bytes read (short only at EOF). */
EK_API ssize_t ek_read(ek_inode *inode, void *buf, size_t len, uint64_t offset,
		       ek_error *err);

/* Symlink target into buf (NUL terminated); returns its length. */
EK_API ssize_t ek_readlink(ek_inode *inode, char *buf, size_t size, ek_error *err);

/* One mapped extent of a file, for inspection. */
enum ek_extent_kind {
	EK_EXTENT_HOLE = 0,       /* reads as zeros */
	EK_EXTENT_PLAIN = 1,      /* stored uncompressed at physical */
	EK_EXTENT_COMPRESSED = 2, /* compressed pcluster at physical */
	EK_EXTENT_FRAGMENT = 3,   /* inside the packed inode's data */
};

typedef struct ek_extent {
	uint64_t logical;     /* first file byte of the extent */
	uint64_t length;      /* decompressed bytes */
	uint64_t physical;    /* image byte offset; packed inode offset for
	                         fragments; metadata offset if in_metadata */
	uint64_t physical_length;
	unsigned int kind;    /* enum ek_extent_kind */
	unsigned int algorithm; /* for compressed extents: 0 lz4, 1 lzma,
	                           2 deflate, 3 zstd */
	int partial;          /* only a prefix of the decoded data is used */
	int interlaced;       /* uncompressed, stored rotated in its block */
	int in_metadata;      /* stored inline after the inode (tail packing) */
} ek_extent;

/* Map the extent containing file offset `offset` (< i_size): on success
 * out->logical <= offset < out->logical + out->length, so a walk from
 * out->logical + out->length always moves on (a map that would not is
 * reported as corruption).  A run of null chunks (a chunk-based file's
 * holes) maps as one hole, of at most 4096 chunks, from offset's chunk. */
EK_API int ek_map(ek_inode *inode, uint64_t offset, ek_extent *out, ek_error *err);
/* "hole", "plain", "compressed" or "fragment". */
EK_API const char *ek_extent_kind_name(unsigned int kind);

/* lseek(2)'s SEEK_DATA and SEEK_HOLE (whence) from `offset`: the first
 * offset at or after it that is data, or a hole (the end of the file is
 * one).  Holes are the extents ek_map calls EK_EXTENT_HOLE (null chunks,
 * say).  Returns the offset, or -ENXIO when `offset` is at or past the
 * end or, for SEEK_DATA, only holes follow it. */
EK_API int64_t ek_seek(ek_inode *inode, uint64_t offset, int whence, ek_error *err);

/* The span [*from, *to) of file data that the library decodes into its
 * cache along with a random read at `offset` (read-around of small
 * compressed extents).  Returns 0 when there is none: the extent is big
 * (decoded whole anyway) or not compressed, or the image has no cache. */
EK_API int ek_read_around(ek_inode *inode, uint64_t offset, uint64_t *from,
			  uint64_t *to);

/* Algorithm name for an id ("lz4", "lzma", "deflate", "zstd"). */
EK_API const char *ek_algorithm_name(unsigned int id);

/* ------------------------------------------------------------ xattrs */

/* Called for each xattr with its full name ("user.foo"). */
typedef int (*ek_xattr_fn)(void *ctx, const char *name, size_t name_len,
			   const void *value, size_t value_len);

/* Iterate every xattr (inline first, then shared), validating each. */
EK_API int ek_xattr_iterate(ek_inode *inode, ek_xattr_fn fn, void *ctx,
			    ek_error *err);
/* listxattr(2) form: NUL-separated names into buf; size 0 asks the length. */
EK_API ssize_t ek_xattr_list(ek_inode *inode, char *buf, size_t size, ek_error *err);
/* getxattr(2) form: -ENODATA if absent, -ERANGE if buf too small;
 * size 0 asks the length. */
EK_API ssize_t ek_xattr_get(ek_inode *inode, const char *name, void *buf,
			    size_t size, ek_error *err);

/* ------------------------------------------------------------ sizes */

/* A byte count as a user writes it: a number (decimal, or 0x... hex)
 * with an optional K, M or G (powers of two), "KiB" and "B" allowed:
 * "65536", "64K", "64KiB", "1M".  0, or -EINVAL for anything else or
 * more than 64 bits.  Every size in an option string (ek_parse_extended_options,
 * ek_parse_compressor's dictsize=) is read this way. */
EK_API int ek_parse_size(const char *text, uint64_t *out);

/* ------------------------------------------------------------ errors */

/* Describe a negative error code ("image is corrupt" for -EUCLEAN). */
EK_API const char *ek_strerror(int code);
/* Whether a code puts the fault on the image: corrupt (-EUCLEAN) or using
 * a feature this library does not read (-EOPNOTSUPP).  The tools exit 1
 * for these and 2 for every other failure. */
EK_API int ek_is_image_error(int code);

#ifdef __cplusplus
}
#endif
#endif
