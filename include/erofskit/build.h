/*
 * erofskit image builder: a directory tree in, an EROFS image out.
 *
 * The image is written to a temporary file beside the target and renamed
 * over it only when everything succeeded; on any error the target is left
 * untouched and the error names the source file and what went wrong.
 */
#ifndef EROFSKIT_BUILD_H
#define EROFSKIT_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ek_compressor {
	EK_COMPRESS_NONE = -1,
	EK_COMPRESS_LZ4 = 0,
	EK_COMPRESS_LZ4HC = 1,
	EK_COMPRESS_DEFLATE = 2,
	EK_COMPRESS_ZSTD = 3,
	EK_COMPRESS_LZMA = 4,
};

/* Progress, from the building thread as file data goes into the image
 * (while a registry's layers come down, see fetch_done, also from the
 * threads fetching them; one call at a time):
 * regular files and their bytes, done and in all (0: not known yet, as
 * from an archive, read once).  From archives also the bytes of the
 * archives read, as stored (compressed or not), of input_total; 0 when
 * their size is not known (a pipe).  Flattening several layers reads
 * each twice, and input_total counts both. */
typedef struct ek_build_progress {
	uint64_t files_done, files_total;
	uint64_t bytes_done, bytes_total;
	uint64_t input_done, input_total;
	/* From a registry: the layers' bytes fetched so far, of all of
	 * them, while any is still coming (0 and 0 otherwise).  The build
	 * reads the layers as they come down, and the callback may then be
	 * called from the thread fetching them too: never two calls at
	 * once. */
	uint64_t fetch_done, fetch_total;
} ek_build_progress;
typedef void (*ek_progress_fn)(void *ctx, const ek_build_progress *p);

/* A layout option left to the library: it picks what its measurements
 * favour for the compressor (see ek_build_options_init's comment). */
#define EK_DEFAULT (-1)

/* Which file data goes into the packed inode, compressed together with
 * its neighbours (mkfs.erofs -Efragments / -Eall-fragments). */
enum ek_fragments {
	EK_FRAGMENTS_OFF = 0,
	EK_FRAGMENTS_TAILS = 1,     /* each file's last, partly filled
	                               cluster, and files smaller than one */
	EK_FRAGMENTS_ALL = 2,       /* every file whole */
};

/* Fragments stored once when identical (-Efragdedupe=). */
enum ek_fragdedupe {
	EK_FRAGDEDUPE_OFF = 0,
	EK_FRAGDEDUPE_INODE = 1,    /* whole-file fragments */
	EK_FRAGDEDUPE_FULL = 2,     /* tails too */
};

/* Which inodes get 64-byte (extended) cores instead of 32-byte compact
 * ones. */
enum ek_inode_form {
	EK_INODES_FIT = 0,          /* compact where the core holds the
	                               inode's owner, link count, size and
	                               mtime; extended where not */
	EK_INODES_COMPACT = 1,      /* every inode compact (mkfs.erofs
	                               -Eforce-inode-compact): mtimes as with
	                               ignore_mtime; an owner, link count or
	                               size a compact core cannot hold fails
	                               the build (-EOVERFLOW, naming it) */
	EK_INODES_EXTENDED = 2,     /* every inode extended
	                               (-Eforce-inode-extended) */
};

/* The most algorithms an image is built with: compressor and up to
 * EK_CODECS_MAX - 1 extra_codecs. */
#define EK_CODECS_MAX 8

/* One more algorithm and its settings (mkfs.erofs -z A:B: B's). */
typedef struct ek_build_codec {
	enum ek_compressor compressor;
	int level;                  /* -1: the algorithm's default */
	uint32_t dict_size;         /* lzma/deflate dictionary; 0: default */
} ek_build_codec;

typedef struct ek_build_options {
	uint32_t block_size;        /* 512..4096, power of two; default 4096 */

	/* timestamps */
	bool timestamp_set;         /* -T: build time (and every mtime) */
	int64_t timestamp;
	bool timestamp_build_only;  /* --mkfs-time: -T sets only the build time */
	bool clamp_mtime;           /* SOURCE_DATE_EPOCH: clamp newer mtimes */

	/* identity */
	bool uuid_set;
	uint8_t uuid[16];
	bool uuid_random;           /* -U random */
	char label[16];             /* volume name, at most 15 bytes */

	/* ownership */
	bool all_root;
	int64_t force_uid;          /* -1: keep */
	int64_t force_gid;          /* -1: keep */
	/* added to every owner and group, after the three above
	 * (mkfs.erofs --uid-offset/--gid-offset: an image for a user
	 * namespace, whose root is 100000 outside, say); 0..4294967295.  An
	 * id the offset takes beyond 4294967295 fails the build, naming the
	 * file (-EOVERFLOW) */
	int64_t uid_offset;
	int64_t gid_offset;
	/* each name of a hard-linked file an inode of its own (mkfs.erofs
	 * --hard-dereference), its data stored again unless dedupe finds
	 * it: for readers that want no links.  A directory source only
	 * (-EINVAL for an archive's). */
	bool hard_dereference;

	/* xattrs */
	bool no_xattrs;
	/* long xattr name prefixes (mkfs.erofs --xattr-prefix; Linux 6.4
	 * and later): each a built-in prefix ("user.", "trusted.",
	 * "security.") and more ("trusted.overlay."), stored once; an xattr
	 * whose name starts with one stores only the rest (under the longest
	 * that matches).  The table lies in the packed inode's data when the
	 * image has one (fragments), else after the superblock.  Up to 128,
	 * NULL-terminated, borrowed for the call; NULL: none */
	const char *const *xattr_prefixes;
	bool no_xattr_filter;
	/* the root directory's inline xattr area (its 12-byte header
	 * counted) at least this many bytes, zeros past its xattrs, which
	 * readers skip (mkfs.erofs --root-xattr-isize): room for xattrs set
	 * in place later; 0: what its xattrs take */
	uint32_t root_xattr_isize;
	/* an xattr (name and value) carried by this many inodes or more is
	 * stored once in the shared area, the others inline; 0: 2 (mkfs.erofs
	 * -x N is N + 1; 1 shares every xattr).  A directory source only: an
	 * archive's xattrs are inline (-EINVAL for any other value). */
	uint32_t xattr_share;
	/* SELinux labels (mkfs.erofs --file-contexts): every inode's
	 * security.selinux is what libselinux looks up for its path in the
	 * image ("/usr/bin/sh"; a hard-linked file's first path found, an
	 * archive's entry's name once extracted) and type in this
	 * file_contexts file, none where no rule matches; the source's own
	 * labels are left out.  NULL: the source's labels, as its other
	 * xattrs.  Not without xattrs (-EINVAL). */
	const char *file_contexts;
	/* Android's canned fs_config (mkfs.erofs --fs-config-file): every
	 * inode's owner, permission bits and file capabilities (as
	 * security.capability, in place of the source's) are its line's,
	 * found by its path on the device without the leading '/'
	 * ("system/bin/sh" under mount_point "system"; the root is ""); a
	 * path the file does not list fails the build (-ENOENT).  all_root,
	 * force_uid/gid and the offsets apply after it.  NULL: the source's. */
	const char *fs_config;
	/* the image's mount point on the device ("system", "/vendor"), put
	 * in front of the paths fs_config and file_contexts rules are looked
	 * up by ("/system/bin/sh"; the root itself is "/system" to
	 * file_contexts).  NULL or "/": none. */
	const char *mount_point;

	/* compression */
	enum ek_compressor compressor;
	int level;                  /* -1: the algorithm's default */
	uint32_t pcluster_size;     /* bytes; 0: one block */
	/* the most file data one compressed extent holds (mkfs.erofs
	 * --max-extent-bytes): smaller extents cost less to decode for a
	 * read at random, and compress less; at least a block; 0: 8 MiB, as
	 * any larger value (the kernel takes 12 at most) */
	uint32_t max_extent_bytes;
	uint32_t dict_size;         /* lzma/deflate dictionary; 0: default */
	/* more algorithms, for compress_hints rules to pick a file's (as
	 * mkfs.erofs -z A:B:C): rule algorithm k takes extra_codecs[k - 1],
	 * 0 the compressor above, which compresses every other file, the
	 * packed inode and the metabox.  Each one's encoder is made where a
	 * file needs it; an algorithm no file uses still gets its superblock
	 * record, as mkfs.erofs writes one for each it is given. */
	ek_build_codec extra_codecs[EK_CODECS_MAX - 1];
	unsigned int extra_codec_count;
	unsigned int workers;       /* threads; 0: one per CPU this process
	                               may use, 1: the calling thread alone */

	/* Space-saving layouts of compressed files, EK_DEFAULT or a choice
	 * (they need a compressor; fragments and tail packing exclude each
	 * other, fragments win when both are asked for). */
	int ztailpacking;           /* a file's last cluster inline, after
	                               its inode (0/1) */
	int fragments;              /* enum ek_fragments */
	uint32_t fragment_cluster;  /* the packed inode's cluster; 0: as
	                               pcluster_size */
	int fragdedupe;             /* enum ek_fragdedupe */
	int dedupe;                 /* identical clusters, files and chunks
	                               (chunk_size) stored once (0/1) */

	/* uncompressed files: whole blocks only, no tail after the inode
	 * (-Enoinline_data; what runtimes that read the data by block ask) */
	bool no_inline_data;

	/* inode cores: enum ek_inode_form; and (mkfs.erofs --ignore-mtime)
	 * whether an inode that is compact but for its mtime is made compact,
	 * its mtime giving way to the superblock's epoch: on a 48-bit image
	 * only its nanoseconds do, unless its seconds are out of reach too.
	 * Smaller metadata, for trees whose times do not matter. */
	int inode_form;
	bool ignore_mtime;

	/* no superblock checksum (mkfs.erofs -Enosbcrc), for readers that
	 * do not know the feature */
	bool no_sb_checksum;
	/* the image starts this many bytes into its file, zeros before it
	 * (mkfs.erofs --offset), to be read with ek_open_options.offset or
	 * the kernel's fsoffset= (Linux 6.16 and later), which mounts
	 * multiples of 4096 only (-EINVAL for any other); 0: at the start */
	uint64_t image_offset;

	/* sparse files become chunk-based (holes cost no space); default on */
	bool no_sparse_chunks;
	/* mkfs.erofs --chunksize: every uncompressed regular file with a
	 * data block is chunk-based, in chunks of this many bytes (a power
	 * of two from the block size to 2 GiB): chunks of zeros cost no
	 * space, and with dedupe (on by default here) a chunk equal to one
	 * stored before, in any file, is stored once.  A file with neither
	 * (with chunks of up to 1 MiB) stays flat, its tail beside its inode
	 * where it fits, as do files small enough to sit there whole.  Not
	 * with tar_index.  0: off */
	uint32_t chunk_size;
	/* chunk-based files index their chunks with 8-byte chunk indexes
	 * (mkfs.erofs -Eforce-chunk-indexes) instead of a 4-byte block map
	 * (-Eforce-inode-blockmap, the default), for readers that want them */
	bool chunk_indexes;
	/* mkfs.erofs --blobdev: chunk-based files' data goes to this file,
	 * the image's one extra device, instead of the image (their chunk
	 * indexes, 8 bytes whatever chunk_indexes says, name it).  Its
	 * device table slot gives its blocks and, as its unified address,
	 * the image's end: the image and the blob concatenated read as one
	 * image, as the kernel mounts them without device=.  Written whole
	 * or not at all, before the image.  Needs chunk_size; not with
	 * tar_index.  NULL: off */
	const char *blob_path;
	/* every compressed file's lcluster index in the full form, 8 bytes
	 * an lcluster, never the compact one nor encoded extents, as
	 * mkfs.erofs -Elegacy-compress writes them (erofs-utils 1.5 changes
	 * nothing else: its images keep the 0padding feature) */
	bool full_indexes;
	/* the 48bit feature (mkfs.erofs -E48bit), for Linux 6.15 and later
	 * only (older kernels refuse the image): compact inodes carry their
	 * own mtime, in seconds after the epoch, so files whose times differ
	 * take 32 bytes instead of 64 */
	bool format_48bit;
	/* directories store no "." entry (mkfs.erofs -Edot-omitted): Linux
	 * 6.15 and later make it up; turns format_48bit on, so that older
	 * kernels refuse the image at mount rather than at a directory */
	bool dot_omitted;
	/* metadata compression (mkfs.erofs -m SIZE): every inode record,
	 * with its xattrs, index and inline data, goes into the data of one
	 * more inode, the metabox, compressed in clusters of this many bytes
	 * with the data's algorithm; for Linux 6.17 and later only, and it
	 * turns format_48bit on.  0: off */
	uint32_t metabox_cluster;
	/* tar input: ".wh.NAME" entries become overlayfs whiteouts (0:0
	 * character devices) and ".wh..wh..opq" makes its directory opaque
	 * (trusted.overlay.opaque=y), as container layers mean them */
	bool aufs;
	/* tar input (not flattened): the overlayfs metadata goes (mkfs.erofs
	 * --ovlfs-strip=1): whiteouts (0:0 character devices, and .wh.NAME
	 * with aufs) take their name away without standing in its place,
	 * opaque markers are dropped, and so are the trusted.overlay.opaque
	 * and trusted.overlay.origin xattrs.  A directory or an OCI source
	 * refuses it (-EINVAL). */
	bool ovlfs_strip;
	/* tar input, index mode (mkfs.erofs --tar=i): the image holds the
	 * metadata only, its files' data points into the tar, which is to be
	 * appended to the image as it is (an uncompressed tar, or tar_copy's;
	 * 512-byte blocks; no compression) */
	bool tar_index;
	/* tar input (one tar): also write the tar, decompressed, to the file
	 * at this path (mkfs.erofs --ungzip=FILE, --unxz=FILE), made only if
	 * the build succeeds; with tar_index the image indexes that tar, so
	 * the archive may be compressed (gzip, zstd or xz: those erofskit
	 * decompresses itself; another is refused, -EINVAL).  NULL: no copy */
	const char *tar_copy;

	/* directory sources: entries left out, with all under them (as
	 * mkfs.erofs's --exclude-path and --exclude-regex).  Each sees the
	 * entry's path under the source without a leading '/', as
	 * "usr/share/doc": exclude_paths are compared with it whole,
	 * exclude_regexes (POSIX extended) searched in it.  NULL-terminated
	 * lists, borrowed for the call, or NULL.  An archive source refuses
	 * them (-EINVAL). */
	const char *const *exclude_paths;
	const char *const *exclude_regexes;
	/* Per-file compressed cluster sizes, from the file at this path
	 * (mkfs.erofs --compress-hints): rules "SIZE [ALGORITHM] REGEX", one
	 * a line ('#' starts a comment line).  A compressed regular file
	 * takes the first rule whose REGEX (POSIX extended) is found in its
	 * path, seen as exclude_regexes see it (an archive's entry: its name
	 * cleaned of "./" and repeated '/'), and its clusters hold at most
	 * SIZE bytes (whole blocks, as pcluster_size) instead of
	 * pcluster_size, compressed with ALGORITHM: 0 (the default) the
	 * compressor, k extra_codecs[k - 1].  NULL: none. */
	const char *compress_hints;
	/* ek_build_oci and ek_build_oci_layers from a registry (an
	 * oci://REGISTRY/REPO reference): how to reach it (TLS, credentials,
	 * plain_http, timeouts), borrowed for the call; NULL: the defaults.
	 * The cache fields do not apply. */
	const ek_http_options *http;
	/* ek_build_oci and ek_build_oci_layers: the entry of an image index
	 * to take, "OS/ARCH" or "OS/ARCH/VARIANT" as indexes name them
	 * ("linux/arm64", "linux/arm/v7"; a variant only when given);
	 * NULL: linux and this machine's architecture */
	const char *platform;
	/* ek_build_oci: only one of the image's layers, built as
	 * ek_build_oci_layers builds each (its whiteouts kept, for overlayfs
	 * to stack): the oci_layer-th from the bottom (1 the first), or the
	 * one whose blob is oci_layer_digest ("sha256:HEX").  A registry's
	 * other layers are not fetched.  0 and NULL: every layer, flattened. */
	size_t oci_layer;
	const char *oci_layer_digest;
	/* Stop the build when *cancel becomes non-zero (a signal handler
	 * may set it): it fails with -ECANCELED at its next write, entry or
	 * download step, as any failure does, leaving no image, temporary
	 * file or scratch layout.  NULL: never. */
	const volatile int *cancel;

	ek_progress_fn progress;
	void *progress_ctx;
	/* Called once the image is whole and flushed, before it takes its
	 * name: path names it until then (ek_open reads it there, at
	 * image_offset).  Non-zero, with err filled, fails the build as any
	 * failure does: the image goes, and a file at its path stays as it
	 * was.  mkfs --block-list-file writes its list here, so that the
	 * image and its list appear together or not at all.  NULL: none. */
	int (*before_commit)(void *ctx, const char *path, ek_error *err);
	void *before_commit_ctx;
} ek_build_options;

typedef struct ek_build_stats {
	uint64_t files;             /* inodes written */
	uint64_t regular_files;
	uint64_t directories;
	uint64_t input_bytes;       /* regular file and symlink bytes read */
	uint64_t image_bytes;
	uint64_t compressed_files;
	uint64_t fragment_files;    /* files whose data is all a fragment */
	uint64_t fragment_tails;    /* files whose last extent is one */
	uint64_t packed_bytes;      /* the packed inode's data, before
	                               compression */
	uint64_t inline_tails;      /* tails stored after their inode */
	uint64_t dedupe_hits;       /* clusters, fragments and chunks stored
	                               once for several users */
	double seconds;
	uint64_t chunked_files;     /* files stored chunk-based */
	uint64_t zero_chunks;       /* chunks of a chunk-based file left as
	                               holes (all zeros, or never written) */
	uint64_t blob_bytes;        /* written to blob_path */
} ek_build_stats;

EK_API void ek_build_options_init(ek_build_options *o);

/* Build `image_path` from the directory `source_dir`, or from the tree of
 * the EROFS image `source_dir` names (a file or block device holding the
 * superblock's magic), read with this library's reader: an image
 * recompressed or moved to other block or cluster sizes, without a
 * mount.  A damaged source image fails the build (-EUCLEAN). */
EK_API int ek_build(const char *image_path, const char *source_dir,
		    const ek_build_options *opts, ek_build_stats *stats,
		    ek_error *err);

/*
 * Build `image_path` from a tar archive: `tar_path`, or standard input when
 * it is NULL or "-".  Every tar dialect libarchive reads (ustar, pax with
 * xattrs, GNU long names and sparse files, v7), compressed or not (gzip,
 * zstd, xz, bzip2, lz4 ... detected by content), read as a stream: each
 * file's data is written as it arrives, so an archive larger than memory
 * or than twice the free space works.  Paths resolve inside the image
 * only: absolute names, "..", and entries under a non-directory are
 * refused (-EUCLEAN, naming the entry and its position); a later entry of
 * a path replaces an earlier one, as tar -x does.  Options as ek_build's;
 * xattrs are never shared (each inode's are stored with it), and the
 * epoch is -T's or the first entry's mtime.
 */
EK_API int ek_build_tar(const char *image_path, const char *tar_path,
			const ek_build_options *opts, ek_build_stats *stats,
			ek_error *err);

/*
 * Build `image_path` from an OCI image layout (the OCI image-layout
 * specification): `layout` is "DIR" or "DIR:TAG", TAG the manifest's
 * org.opencontainers.image.ref.name; without one the layout must hold one
 * image (an image index picks this machine's platform).  Or `layout` is an
 * image in a registry, oci://REGISTRY/REPO[:TAG|@sha256:DIGEST] (TAG
 * "latest" when neither is given; opts->http says how to reach it): its
 * manifest (OCI or Docker media types; an index picks the platform), its
 * config and its layers are fetched into a scratch layout under $TMPDIR
 * (default /var/tmp), removed after, and read from there.  Its layers
 * (tar, tar+gzip, tar+zstd) are applied in order into one tree, their
 * whiteouts deleting what the layers below hold, as a container runtime
 * unpacks them; owners stay the layers' numbers.  Every blob is checked
 * against its descriptor's sha256 digest and size (-EUCLEAN naming the
 * blob, no image left).  Options as ek_build_tar's.
 */
EK_API int ek_build_oci(const char *image_path, const char *layout,
			const ek_build_options *opts, ek_build_stats *stats,
			ek_error *err);

/* After each image ek_build_oci_layers writes (index from 0 of count). */
typedef void (*ek_layer_done_fn)(void *ctx, size_t index, size_t count,
				 const char *image_path, const ek_build_stats *stats);

/*
 * One image per layer of an OCI image (a layout, or an image in a
 * registry, as ek_build_oci takes them), for overlayfs to stack (the first
 * at the bottom): out_dir/NNN-HEX.erofs, NNN counting from 001, HEX the
 * layer blob's sha256.  Each is built as ek_build_tar builds with
 * opts->aufs set: whiteouts stay, as overlayfs whiteouts and opaque
 * directories.  out_dir is made when missing.  On failure the images
 * already written are removed.
 */
EK_API int ek_build_oci_layers(const char *out_dir, const char *layout,
			       const ek_build_options *opts, ek_layer_done_fn done,
			       void *ctx, ek_error *err);

/* Parse a compressor spec as mkfs.erofs takes it: "lz4", "lz4hc,9",
 * "deflate,level=9", "zstd,level=15", "lzma,level=109,dictsize=65536";
 * and a list of them split by ':' ("lz4hc,12:lzma,6"), the first the
 * compressor, the others extra_codecs in order. */
EK_API int ek_parse_compressor(const char *spec, ek_build_options *o, ek_error *err);

/* Parse mkfs.erofs's extended options, a comma list: "ztailpacking",
 * "fragments[=SIZE]", "all-fragments[=SIZE]", "dedupe",
 * "fragdedupe=inode|full|off", "noinline_data", and "^NAME" to turn one
 * off.  An option erofskit does not implement is refused by name. */
EK_API int ek_parse_extended_options(const char *list, ek_build_options *o,
				     ek_error *err);

#ifdef __cplusplus
}
#endif
#endif
