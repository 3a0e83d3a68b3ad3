/* What a file given as mkfs's source directory holds, by its magic bytes. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sniff.h"

#define TAR_ADVICE "build from it with --tar"
#define MAYBE_TAR TAR_ADVICE " if it is a tar"
#define HEAD_BYTES 1028   /* as far as the last magic below reaches */
#define MOUNT_ADVICE "mount it (or unpack it) and build from that directory"

/* One row per kind: its magic and where it lies in the first HEAD_BYTES
 * (the first match wins: a compressed stream is told before a tar). */
static const struct kind {
	uint32_t offset;
	uint8_t len;
	const char *magic;
	struct sniffed what;
} kinds[] = {
	{ 0, 2, "\x1f\x8b", { "gzip-compressed data", MAYBE_TAR, false } },
	{ 0, 4, "\x28\xb5\x2f\xfd", { "zstd-compressed data", MAYBE_TAR, false } },
	{ 0, 6, "\xfd" "7zXZ\0", { "xz-compressed data", MAYBE_TAR, false } },
	{ 0, 3, "BZh", { "bzip2-compressed data", MAYBE_TAR, false } },
	{ 0, 4, "\x04\x22\x4d\x18", { "lz4-compressed data", MAYBE_TAR, false } },
	{ 0, 4, "hsqs", { "a squashfs image", MOUNT_ADVICE, false } },
	{ 257, 5, "ustar", { "a tar archive", TAR_ADVICE, false } },
	/* The superblock's magic, 0xE0F5E1E2 little-endian, at byte 1024:
	 * a source of its own to mkfs, named by the drop-in's rebuild mode. */
	{ 1024, 4, "\xe2\xe1\xf5\xe0", { "an EROFS image",
		"build from it as it is", true } },
};


bool sniff_source(const char *path, struct sniffed *out)
{
	uint8_t head[HEAD_BYTES];
	struct stat st;
	ssize_t got = -1;
	size_t i;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	/* Only files and block devices: a fifo or a terminal would be read
	 * from (O_NONBLOCK keeps the open itself from waiting on a fifo). */
	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
		got = pread(fd, head, sizeof(head), 0);
	close(fd);
	for (i = 0; got > 0 && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct kind *k = &kinds[i];

		if ((size_t)got >= k->offset + k->len &&
		    !memcmp(head + k->offset, k->magic, k->len)) {
			*out = k->what;
			return true;
		}
	}
	return false;
}
