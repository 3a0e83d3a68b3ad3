/*
 * Page-cache prefill for the FUSE mount.
 *
 * A small random read of a compressed file costs a FUSE round trip and,
 * on a cache miss, the decompression of a whole cluster of which the
 * reader gets one page.  The kernel's own EROFS keeps the rest of the
 * cluster; over FUSE the only way to do that is to push the pages with
 * FUSE_NOTIFY_STORE.  A single background thread does it so that request
 * threads never wait on page locks (a store blocks on pages that other
 * requests have locked; only the request threads can release them).
 */
#ifndef EROFSKIT_TOOLS_MOUNT_STORE_H
#define EROFSKIT_TOOLS_MOUNT_STORE_H

#define FUSE_USE_VERSION 312
#include <fuse3/fuse_lowlevel.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

struct page_store;

/* NULL when the thread cannot be started: the mount works without it. */
struct page_store *page_store_start(struct fuse_session *se, ek_image *img);

/* A random read of [off, off+len) of inode `nid` (FUSE node `ino`) was just
 * answered: offer the rest of its extent, or for small extents the rest of
 * the window the library decodes around it (ek_read_around()).  Never
 * blocks; a full queue drops the offer (it is only a hint). */
void page_store_offer(struct page_store *ps, fuse_ino_t ino, ek_nid nid,
		      uint64_t off, uint64_t len);

void page_store_stop(struct page_store *ps);

#endif
