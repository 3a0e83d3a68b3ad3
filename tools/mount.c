/*
 * erofskit mount: an image as a FUSE filesystem (libfuse3 low-level API,
 * multi-threaded).  The image is read-only, so the kernel may cache
 * entries, attributes and pages for as long as it likes.
 */
/* 3.12 at least: below it, fuse_session_loop_mt() is the 3.2 entry point,
 * which reads a fuse_loop_cfg_create() object as the old two-field struct
 * (its version tag as clone_fd, 0 as max_idle_threads): the thread limit
 * was ignored and every request started a thread on a cloned /dev/fuse
 * descriptor, ~600 per 285 MiB read. */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli.h"
#include "erofskit/erofskit.h"
#include "mount_detach.h"
#include "mount_store.h"

static const char *const CMD = "mount";
#define FOREVER 86400.0 * 365   /* cache timeouts: nothing ever changes */

/*
 * glibc gives threads arenas of their own, up to 8 per processor, and
 * each keeps its own freed holes: the decoded clusters that the request
 * threads (16, or 4 per decoding worker) allocate and the cache frees,
 * of varying sizes, spread over them.  At the default cache of 256 MiB,
 * fio's random 4 KiB reads of a whole 285 MiB file through io=uring left
 * the server 346-384 MiB resident (zstd, 256 KiB clusters), 240 MiB of
 * it in arenas for a cluster cache of 146; with one arena per processor,
 * 296-335 MiB over four images and no slower (one arena in all was
 * slower at 4 KiB clusters).
 *
 * Decoded clusters of 128 KiB and more were each mapped and unmapped by
 * glibc (its threshold adapts only after such a block is freed), every
 * one a fresh set of pages to fault in: 150-250 mappings at a time in a
 * whole-file random run with io=pread.  Kept on the heap instead, reads
 * at 256 KiB clusters through io=pread went faster (alternating runs,
 * medians): deflate sequential 410 -> 533 MiB/s, deflate random 10-15%,
 * zstd random 12%, for 6-10 MiB more of the heap held.  The server is
 * ours to tune; the library leaves its callers' malloc alone.
 */
static void tune_malloc(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	mallopt(M_ARENA_MAX, cpus > 0 ? (int)cpus : 1);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);     /* glibc's own largest */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

struct mount_ctx {
	ek_image *img;
	ek_nid root;
	int64_t uid, gid;        /* -1: as stored */
	uint32_t blksz;
	struct page_store *store;  /* NULL: no page-cache prefill */
};

/* An open file: its inode and where a sequential reader would read next
 * (a read elsewhere is random, and worth a page-cache prefill). */
struct open_file {
	ek_inode *inode;
	_Atomic uint64_t next_off;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: erofskit mount [options] IMAGE DIR\n"
"\n"
"Mount IMAGE on DIR with FUSE.  Without -f the command returns once the\n"
"filesystem is mounted and serves it in the background; 'umount DIR' or\n"
"'fusermount3 -u DIR' ends it.\n"
"\n"
"options:\n"
"  -f                  stay in the foreground\n"
"  -d                  debug output (implies -f)\n"
"  -o OPT[,OPT...]     mount options:\n"
"       cache=SIZE         decompressed-cluster cache (default 256M, 0 = off)\n"
"       io=uring|pread     image reads: io_uring with O_DIRECT (default;\n"
"                          compressed blocks stay out of the page cache) or\n"
"                          buffered pread\n"
"       engine=NAME        a decoder (give one per algorithm):\n"
"                          deflate: libdeflate (default), isal, zlib\n"
"                          lzma: builtin (default), liblzma\n"
"       workers=N          decompression threads (default: one per CPU\n"
"                          this process may use; 1 = no background threads)\n"
"       device=FILE        the file of the image's next extra device (an\n"
"                          upstream --blobdev's blob), in its device\n"
"                          table's order; once per device, as the kernel's\n"
"                          device= is given\n"
"       offset=BYTES       the image starts BYTES into IMAGE (the kernel's\n"
"                          fsoffset=)\n"
"       uid=N,gid=N        report every file as owned by N\n"
"       allow_other        let other users access the mount (as root)\n"
CLI_REMOTE_ITEMS
"       other options are passed to FUSE (see mount.fuse3(8))\n"
"  -h, --help          this text\n"
"\n"
"IMAGE may be an http:// or https:// URL, or oci://REGISTRY/REPO:TAG (or\n"
"REPO@sha256:DIGEST) for an image erofskit push stored; it is read with\n"
"Range requests, its blocks kept in a cache that later runs share.\n"
"The last eleven options above are for such an IMAGE.\n"
"\n"
"examples:\n"
"  erofskit mount root.erofs /mnt\n"
"  erofskit mount -o cache=1G,allow_other root.erofs /mnt\n"
"  erofskit mount https://example.com/root.erofs /mnt\n");
}

/* FUSE node ids: 1 is the root; others are nid + 2 (never 0 or 1). */
static ek_nid to_nid(struct mount_ctx *m, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? m->root : (ek_nid)(ino - 2);
}

static fuse_ino_t to_ino(struct mount_ctx *m, ek_nid nid)
{
	return nid == m->root ? FUSE_ROOT_ID : (fuse_ino_t)(nid + 2);
}

/* Image problems become EIO for the reader; the rest keep their code. */
static int errno_of(int ret)
{
	if (ek_is_image_error(ret))
		return EIO;
	return ret < 0 ? -ret : EIO;
}

static void fill_stat(struct mount_ctx *m, const ek_stat *s, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = s->ino;
	st->st_mode = s->mode;
	st->st_nlink = s->nlink;
	st->st_uid = m->uid >= 0 ? (uid_t)m->uid : s->uid;
	st->st_gid = m->gid >= 0 ? (gid_t)m->gid : s->gid;
	st->st_size = (off_t)s->size;
	st->st_blocks = (blkcnt_t)s->blocks;
	st->st_blksize = (blksize_t)m->blksz;
	st->st_rdev = makedev(s->rdev_major, s->rdev_minor);
	st->st_mtim.tv_sec = s->mtime;
	st->st_mtim.tv_nsec = s->mtime_nsec;
	st->st_atim = st->st_mtim;
	st->st_ctim = st->st_mtim;
}

static int entry_of(struct mount_ctx *m, ek_nid nid, struct fuse_entry_param *e)
{
	ek_stat s;
	int ret = ek_stat_nid(m->img, nid, &s, NULL);

	if (ret)
		return ret;
	memset(e, 0, sizeof(*e));
	e->ino = to_ino(m, nid);
	e->generation = 1;
	e->attr_timeout = FOREVER;
	e->entry_timeout = FOREVER;
	fill_stat(m, &s, &e->attr);
	return 0;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->max_readahead = UINT_MAX;   /* libfuse lowers it to the kernel's */
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	conn->want &= ~(unsigned int)FUSE_CAP_AUTO_INVAL_DATA;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mount_ctx *m = fuse_req_userdata(req);
	struct fuse_entry_param e;
	ek_inode *dir;
	ek_nid nid;
	int ret = ek_inode_get(m->img, to_nid(m, parent), &dir, NULL);

	if (!ret) {
		ret = ek_lookup_child(dir, name, strlen(name), &nid, NULL);
		ek_inode_put(dir);
	}
	if (!ret)
		ret = entry_of(m, nid, &e);
	if (ret)
		fuse_reply_err(req, ret == -ENOENT ? ENOENT : errno_of(ret));
	else
		fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mount_ctx *m = fuse_req_userdata(req);
	struct stat st;
	ek_stat s;
	int ret = ek_stat_nid(m->img, to_nid(m, ino), &s, NULL);

	(void)fi;
	if (ret) {
		fuse_reply_err(req, errno_of(ret));
		return;
	}
	fill_stat(m, &s, &st);
	fuse_reply_attr(req, &st, FOREVER);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct mount_ctx *m = fuse_req_userdata(req);
	char target[4096];
	ek_inode *inode;
	ssize_t len = -EIO;
	int ret = ek_inode_get(m->img, to_nid(m, ino), &inode, NULL);

	if (!ret) {
		len = ek_readlink(inode, target, sizeof(target), NULL);
		ek_inode_put(inode);
	}
	if (ret || len < 0)
		fuse_reply_err(req, errno_of(ret ? ret : (int)len));
	else
		fuse_reply_readlink(req, target);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mount_ctx *m = fuse_req_userdata(req);
	struct open_file *of;
	int ret;

	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	of = calloc(1, sizeof(*of));
	if (!of) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = ek_inode_get(m->img, to_nid(m, ino), &of->inode, NULL);
	if (ret) {
		free(of);
		fuse_reply_err(req, errno_of(ret));
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)of;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

/*
 * Each request thread keeps its read buffer from one read to the next
 * (freed with the thread).  Under AddressSanitizer a block this large is
 * a fresh mapping every time: reading a fixture's 5 GiB file through the
 * sanitized build took 39 s, most of it faulting pages in, and 18 s
 * with the buffers kept.  glibc reuses its heap, so the plain build reads
 * as fast either way (2.3 s).
 */
static pthread_key_t read_buffer_key;

struct read_buffer {
	size_t capacity;
	char bytes[];
};

static char *read_buffer(size_t size)
{
	struct read_buffer *b = pthread_getspecific(read_buffer_key);

	if (b && b->capacity >= size)
		return b->bytes;
	free(b);
	b = malloc(sizeof(*b) + (size ? size : 1));
	if (b)
		b->capacity = size;
	pthread_setspecific(read_buffer_key, b);
	return b ? b->bytes : NULL;
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct mount_ctx *m = fuse_req_userdata(req);
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	char *buf = read_buffer(size);
	uint64_t expected;
	ssize_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = ek_read(of->inode, buf, size, (uint64_t)off, NULL);
	if (n < 0) {
		fuse_reply_err(req, errno_of((int)n));
		return;
	}
	/* Before the reply: once answered, the file may be released. */
	expected = atomic_exchange(&of->next_off, (uint64_t)off + (uint64_t)n);
	fuse_reply_buf(req, buf, (size_t)n);
	/* After it: the reader is not kept waiting for the offer. */
	if (expected != (uint64_t)off && n > 0)
		page_store_offer(m->store, ino, to_nid(m, ino), (uint64_t)off, (uint64_t)n);
}

/* SEEK_DATA and SEEK_HOLE (the kernel answers the others itself): a
 * sparse chunk-based file shows its holes, as through the kernel's mount,
 * so that cp, tar and the like skip them rather than read zeros. */
static void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	int64_t at;

	(void)ino;
	if (off < 0) {
		fuse_reply_err(req, ENXIO);
		return;
	}
	at = ek_seek(of->inode, (uint64_t)off, whence, NULL);
	if (at < 0)
		fuse_reply_err(req, errno_of((int)at));   /* ENXIO, EINVAL as they are */
	else
		fuse_reply_lseek(req, (off_t)at);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;

	(void)ino;
	ek_inode_put(of->inode);
	free(of);
	fuse_reply_err(req, 0);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mount_ctx *m = fuse_req_userdata(req);
	ek_inode *dir;
	int ret = ek_inode_get(m->img, to_nid(m, ino), &dir, NULL);

	if (ret) {
		fuse_reply_err(req, errno_of(ret));
		return;
	}
	if (!S_ISDIR(ek_inode_stat(dir)->mode)) {
		ek_inode_put(dir);
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)dir;
	fi->keep_cache = 1;
	fi->cache_readdir = 1;
	fuse_reply_open(req, fi);
}

struct dir_fill {
	fuse_req_t req;
	struct mount_ctx *m;
	char *buf;
	size_t size, used;
	bool plus;
	int error;
};

static int fill_one(void *ctx, const ek_dirent *d)
{
	struct dir_fill *f = ctx;
	char name[256];
	size_t need;

	memcpy(name, d->name, d->name_len);
	name[d->name_len] = '\0';
	if (f->plus) {
		struct fuse_entry_param e;
		bool dot = !strcmp(name, ".") || !strcmp(name, "..");

		memset(&e, 0, sizeof(e));
		if (dot) {
			/* Not a lookup: the kernel keeps no reference to it. */
			e.attr.st_ino = d->nid;
			e.attr.st_mode = S_IFDIR;
		} else {
			int ret = entry_of(f->m, d->nid, &e);

			if (ret) {
				f->error = errno_of(ret);
				return 1;
			}
		}
		need = fuse_add_direntry_plus(f->req, f->buf + f->used, f->size - f->used,
					      name, &e, (off_t)d->next_offset);
	} else {
		struct stat st;

		memset(&st, 0, sizeof(st));
		st.st_ino = d->nid;
		st.st_mode = (mode_t)ek_file_type_mode(d->type);
		need = fuse_add_direntry(f->req, f->buf + f->used, f->size - f->used, name,
					 &st, (off_t)d->next_offset);
	}
	if (need > f->size - f->used)
		return 1;   /* full: the kernel asks again from next_offset */
	f->used += need;
	return 0;
}

static void readdir_common(fuse_req_t req, size_t size, off_t off,
			   struct fuse_file_info *fi, bool plus)
{
	struct dir_fill f = {
		.req = req, .m = fuse_req_userdata(req), .size = size, .plus = plus,
	};
	int ret;

	f.buf = malloc(size ? size : 1);
	if (!f.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = ek_readdir((ek_inode *)(uintptr_t)fi->fh, (uint64_t)off, fill_one, &f, NULL);
	if (ret < 0 || (f.error && !f.used))
		fuse_reply_err(req, f.error ? f.error : errno_of(ret));
	else
		fuse_reply_buf(req, f.buf, f.used);
	free(f.buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)ino;
	readdir_common(req, size, off, fi, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	(void)ino;
	readdir_common(req, size, off, fi, true);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	ek_inode_put((ek_inode *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct mount_ctx *m = fuse_req_userdata(req);
	struct statvfs sv;
	ek_super_info sb;

	(void)ino;
	ek_get_super_info(m->img, &sb);
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = sb.block_size;
	sv.f_frsize = sb.block_size;
	sv.f_blocks = sb.blocks;
	sv.f_files = sb.inodes;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

/* getxattr (name) and listxattr (no name): size 0 asks for the length. */
static void reply_xattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct mount_ctx *m = fuse_req_userdata(req);
	ek_inode *inode;
	char *buf = NULL;
	ssize_t n;
	int ret = ek_inode_get(m->img, to_nid(m, ino), &inode, NULL);

	if (ret) {
		fuse_reply_err(req, errno_of(ret));
		return;
	}
	if (size && !(buf = malloc(size))) {
		ek_inode_put(inode);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = name ? ek_xattr_get(inode, name, buf, size, NULL)
		 : ek_xattr_list(inode, buf, size, NULL);
	ek_inode_put(inode);
	if (n < 0)
		fuse_reply_err(req, n == -ENODATA || n == -ERANGE ? (int)-n : errno_of((int)n));
	else if (!size)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	reply_xattr(req, ino, name, size);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	reply_xattr(req, ino, NULL, size);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.readlink = op_readlink,
	.open = op_open,
	.read = op_read,
	.lseek = op_lseek,
	.release = op_release,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.statfs = op_statfs,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
};

/* Split -o: our options into oo/m, the rest back for FUSE; *io_asked
 * records an explicit io=, whose fallbacks are then worth a notice. */
static int parse_options(const char *arg, ek_open_options *oo, struct mount_ctx *m,
			 bool *io_asked, char **fuse_opts)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	size_t used = strlen(*fuse_opts);
	uint64_t v;
	int64_t iv;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int remote = cli_remote_option(CMD, CLI_REMOTE_READ, tok, oo);

		if (remote < 0) {
			free(copy);
			return -1;
		}
		if (remote) {
			continue;
		} else if (!strncmp(tok, "cache=", 6)) {
			if (ek_parse_size(tok + 6, &v))
				goto bad;
			oo->cache_bytes = (size_t)v;
		} else if (!strncmp(tok, "io=", 3)) {
			if (!strcmp(tok + 3, "pread"))
				oo->io = EK_IO_PREAD;
			else if (!strcmp(tok + 3, "uring"))
				oo->io = EK_IO_URING;
			else
				goto bad;
			*io_asked = true;
		} else if (!strncmp(tok, "engine=", 7)) {
			ek_error err;

			if (ek_open_options_set_engine(oo, tok + 7, &err)) {
				cli_error(CMD, "mount option '%s': %s", tok, err.message);
				free(copy);
				return -1;
			}
		} else if (!strncmp(tok, "device=", 7) && tok[7]) {
			if (cli_add_device(CMD, tok + 7, oo)) {
				free(copy);
				return -1;
			}
		} else if (!strncmp(tok, "offset=", 7)) {
			if (cli_parse_offset(CMD, "-o offset=", tok + 7, &oo->offset)) {
				free(copy);
				return -1;
			}
		} else if (!strncmp(tok, "workers=", 8)) {
			if (!cli_parse_count(tok + 8, 1, UINT32_MAX, &oo->workers)) {
				cli_error(CMD, "option '%s': a worker count, 1 or more", tok);
				free(copy);
				return -1;
			}
		} else if (!strncmp(tok, "uid=", 4) || !strncmp(tok, "gid=", 4)) {
			if (!cli_parse_int(tok + 4, &iv) || iv < 0 || iv > UINT32_MAX)
				goto bad;
			if (tok[0] == 'u')
				m->uid = iv;
			else
				m->gid = iv;
		} else {
			char *grown = realloc(*fuse_opts, used + strlen(tok) + 2);

			if (!grown)
				goto bad;
			*fuse_opts = grown;
			used += (size_t)sprintf(grown + used, "%s%s", used ? "," : "", tok);
		}
	}
	free(copy);
	return 0;
bad:
	cli_error(CMD, "invalid mount option '%s'", tok);
	free(copy);
	return -1;
}

/*
 * The mounted session's life in the server: open the image (here, after
 * the fork: threads do not survive it), tell the waiting parent how that
 * went (verdict_fd, or -1 in the foreground), then serve until unmounted.
 */
static int serve(struct fuse_session *se, const char *image, const ek_open_options *oo,
		 struct mount_ctx *m, int verdict_fd)
{
	struct fuse_loop_config *loop;
	ek_super_info sb;
	ek_error err;
	int ret;

	if (ek_open(image, oo, &m->img, &err)) {
		cli_error(CMD, "%s", err.message);
		ret = cli_exit_code(err.code);
		if (verdict_fd >= 0)
			detach_done(verdict_fd, ret);
		return ret;
	}
	if (verdict_fd >= 0)
		detach_done(verdict_fd, EXIT_OK);
	ek_get_super_info(m->img, &sb);
	m->root = sb.root_nid;
	m->blksz = sb.block_size;
	m->store = page_store_start(se, m->img);
	loop = fuse_loop_cfg_create();
	if (loop && !pthread_key_create(&read_buffer_key, free)) {
		fuse_loop_cfg_set_max_threads(loop, ek_image_workers(m->img) * 4 > 16 ?
						    ek_image_workers(m->img) * 4 : 16);
		ret = fuse_session_loop_mt(se, loop) ? EXIT_USAGE : EXIT_OK;
		/* The threads' buffers went with them; this thread's goes here. */
		free(pthread_getspecific(read_buffer_key));
		pthread_key_delete(read_buffer_key);
	} else {
		cli_error(CMD, "out of memory");
		ret = EXIT_USAGE;
	}
	if (loop)
		fuse_loop_cfg_destroy(loop);
	page_store_stop(m->store);
	ek_close(m->img);
	m->img = NULL;
	return ret;
}

int cmd_mount(int argc, char **argv)
{
	struct mount_ctx m = { .uid = -1, .gid = -1 };
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se;
	ek_open_options oo;
	char *fuse_opts = calloc(1, 1), *image = NULL, *dir = NULL, *arg_image = NULL;
	bool foreground = false, debug = false, io_asked = false;
	int i, prefetch_all, verdict_fd = -1, ret = EXIT_USAGE;
	struct stat st;
	ek_error err;

	/* Before any thread: a fork keeps the arenas they made, and the
	 * server's threads would take them up again past the limit. */
	tune_malloc();
	ek_open_options_init(&oo);
	oo.cache_bytes = 256u << 20;
	oo.readahead = 1;
	/* Direct I/O by default: in bench/direct.sh's 27 cells (three
	 * algorithms, three cluster sizes, sequential, whole-file random and
	 * 14 MiB random reads) it was at least as fast as pread in 26, 25
	 * and 24 of them in three runs, the misses 0.92-0.99x and moving
	 * between cells, its ratio's geometric mean over the runs at least
	 * 1.00 in every cell; and it leaves the image out of the page cache
	 * (bench/reports/direct.md).  Where io_uring or O_DIRECT is refused,
	 * the image is read with pread or buffered, silently unless io= was
	 * asked for. */
	oo.io = EK_IO_URING;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			free(fuse_opts);
			return EXIT_OK;
		} else if (!strcmp(argv[i], "-f")) {
			foreground = true;
		} else if (!strcmp(argv[i], "-d")) {
			debug = foreground = true;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			if (parse_options(argv[++i], &oo, &m, &io_asked, &fuse_opts))
				goto out;
		} else if (!strncmp(argv[i], "-o", 2) && argv[i][2]) {
			if (parse_options(argv[i] + 2, &oo, &m, &io_asked, &fuse_opts))
				goto out;
		} else if (argv[i][0] == '-') {
			cli_error(CMD, "unknown option '%s'", argv[i]);
			cli_usage_error(CMD, usage);
			goto out;
		} else if (!arg_image) {
			arg_image = argv[i];
		} else if (!dir) {
			dir = argv[i];
		} else {
			cli_error(CMD, "unexpected argument '%s'", argv[i]);
			goto out;
		}
	}
	if (!arg_image || !dir) {
		cli_error(CMD, "expected IMAGE and DIR");
		cli_usage_error(CMD, usage);
		goto out;
	}
	/* Said by name before any work (FUSE would say it in words of its
	 * own, and then so would we). */
	if (stat(dir, &st) < 0) {
		cli_error(CMD, "%s: %s", dir, errno == ENOENT ? "no such directory" :
			  strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error(CMD, "%s: not a directory", dir);
		goto out;
	}
	/* The server changes to / when it detaches: keep an absolute path. */
	image = ek_is_url(arg_image) ? strdup(arg_image) : realpath(arg_image, NULL);
	if (!image) {
		cli_error(CMD, "%s: %s", arg_image, strerror(errno));
		goto out;
	}
	/* Open once here so that a bad image fails before anything is
	 * mounted; the server reopens it after the fork (threads do not
	 * survive it), and fetches the whole image if asked, not this look. */
	prefetch_all = oo.http.prefetch_all;
	oo.http.prefetch_all = 0;
	if (ek_open(image, &oo, &m.img, &err)) {
		cli_error(CMD, "%s", err.message);
		ret = cli_exit_code(err.code);
		goto out;
	}
	/* Said once, here, while standard error is still the user's. */
	cli_warn_missing_devices(CMD, m.img, arg_image, "-o device=FILE");
	if (io_asked && oo.io == EK_IO_URING && !ek_is_url(image) &&
	    strcmp(ek_image_io(m.img), "io_uring+O_DIRECT")) {
		bool no_uring = !strcmp(ek_image_io(m.img), "pread");

		cli_error(CMD, "%s: %s; reading it with %s (the kernel caches its blocks)", arg_image,
			  no_uring ? "io_uring is not available" : "its filesystem refuses O_DIRECT",
			  no_uring ? "pread" : "buffered io_uring");
	}
	ek_close(m.img);
	m.img = NULL;

	fuse_opt_add_arg(&args, "erofskit");
	fuse_opt_add_arg(&args, "-o");
	{
		char base[2 * PATH_MAX + 64], fsname[2 * PATH_MAX];
		size_t k, n = 0;

		/* FUSE's option list escapes its separator: a URL's query or a
		 * file name may hold commas. */
		for (k = 0; image[k] && n + 2 < sizeof(fsname); k++) {
			if (image[k] == ',' || image[k] == '\\')
				fsname[n++] = '\\';
			fsname[n++] = image[k];
		}
		fsname[n] = '\0';
		snprintf(base, sizeof(base), "ro,default_permissions,fsname=%s,subtype=erofskit%s%s",
			 fsname, *fuse_opts ? "," : "", fuse_opts);
		fuse_opt_add_arg(&args, base);
	}
	if (debug)
		fuse_opt_add_arg(&args, "-d");
	se = fuse_session_new(&args, &ops, sizeof(ops), &m);
	if (!se) {
		cli_error(CMD, "cannot create the FUSE session (bad options?)");
		goto out;
	}
	if (fuse_set_signal_handlers(se) || fuse_session_mount(se, dir)) {
		cli_error(CMD, "cannot mount on %s", dir);
	} else if (!foreground && (verdict_fd = detach_begin()) < 0) {
		cli_error(CMD, "cannot start the server: %s", strerror(errno));
		fuse_session_unmount(se);
	} else {
		oo.http.prefetch_all = prefetch_all;
		ret = serve(se, image, &oo, &m, verdict_fd);
		fuse_session_unmount(se);
	}
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
out:
	fuse_opt_free_args(&args);
	free(fuse_opts);
	free(image);
	return ret;
}
