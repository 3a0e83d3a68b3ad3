/*
 * The minimal image of spec section 11, written out byte by byte from the
 * tables there (not with the library's encoders), so that tests compare the
 * library against the document rather than against itself.
 *
 *   spec_image_build(img, false): 4096 bytes, file FLAT_INLINE (11.2-11.5)
 *   spec_image_build(img, true):  8192 bytes, file FLAT_PLAIN in block 1
 *                                 (the 11.6 variant)
 *
 * The checksum field is left zero; callers compute and store it.
 */
#ifndef EK_TEST_SPEC_IMAGE_H
#define EK_TEST_SPEC_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SPEC_IMAGE_SIZE         4096u
#define SPEC_IMAGE_VARIANT_SIZE 8192u
#define SPEC_IMAGE_CRC          0x513B7BD1u
#define SPEC_IMAGE_VARIANT_CRC  0x9D8888E5u
#define SPEC_ROOT_NID           36u
#define SPEC_FILE_NID           39u
#define SPEC_EPOCH              1700000000

static inline int spec_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Store the hex bytes of `hex` ("E2 E1 F5 E0", spaces ignored) at off;
 * returns the number of bytes written. */
static inline size_t spec_put_hex(uint8_t *img, size_t off, const char *hex)
{
	size_t n = 0;

	while (*hex) {
		int hi, lo;

		if (*hex == ' ') {
			hex++;
			continue;
		}
		hi = spec_hexval(hex[0]);
		lo = spec_hexval(hex[1]);
		if (hi < 0 || lo < 0)
			return n;   /* malformed table: leaves a visible gap */
		img[off + n++] = (uint8_t)(hi << 4 | lo);
		hex += 2;
	}
	return n;
}

static inline void spec_image_build(uint8_t *img, bool variant)
{
	size_t size = variant ? SPEC_IMAGE_VARIANT_SIZE : SPEC_IMAGE_SIZE;

	memset(img, 0, size);
	/* 11.2 superblock */
	spec_put_hex(img, 0x400, "E2 E1 F5 E0");              /* magic */
	spec_put_hex(img, 0x408, "01 00 00 00");              /* SB_CHKSUM */
	spec_put_hex(img, 0x40C, "0C");                       /* blkszbits */
	spec_put_hex(img, 0x40D, "00");                       /* sb_extslots */
	spec_put_hex(img, 0x40E, "24 00");                    /* root nid 36 */
	spec_put_hex(img, 0x410, "02 00 00 00 00 00 00 00");  /* inos */
	spec_put_hex(img, 0x418, "00 F1 53 65 00 00 00 00");  /* epoch */
	spec_put_hex(img, 0x420, "00 00 00 00");              /* fixed_nsec */
	spec_put_hex(img, 0x424, variant ? "02 00 00 00" : "01 00 00 00");
	spec_put_hex(img, 0x430, "00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F");
	spec_put_hex(img, 0x440, "6D 69 6E 69 00");           /* "mini" */
	spec_put_hex(img, 0x450, "00 00 00 00");              /* incompat */

	/* 11.3 root directory inode and its inline entries */
	spec_put_hex(img, 0x480, "04 00 00 00 ED 41 02 00 30 00 00 00 00 00 00 00");
	spec_put_hex(img, 0x490, "FF FF FF FF 01 00 00 00 00 00 00 00 00 00 00 00");
	spec_put_hex(img, 0x4A0, "24 00 00 00 00 00 00 00 24 00 02 00");
	spec_put_hex(img, 0x4AC, "24 00 00 00 00 00 00 00 25 00 02 00");
	spec_put_hex(img, 0x4B8, "27 00 00 00 00 00 00 00 27 00 01 00");
	spec_put_hex(img, 0x4C4, "2E 2E 2E 68 65 6C 6C 6F 2E 74 78 74");

	/* 11.4 file inode (11.6: FLAT_PLAIN with data in block 1) */
	if (variant) {
		spec_put_hex(img, 0x4E0, "00 00 00 00 A4 81 01 00 0E 00 00 00 00 00 00 00");
		spec_put_hex(img, 0x4F0, "01 00 00 00 02 00 00 00");
		spec_put_hex(img, 0x1000, "48 65 6C 6C 6F 2C 20 45 52 4F 46 53 21 0A");
	} else {
		spec_put_hex(img, 0x4E0, "04 00 00 00 A4 81 01 00 0E 00 00 00 00 00 00 00");
		spec_put_hex(img, 0x4F0, "FF FF FF FF 02 00 00 00");
		spec_put_hex(img, 0x500, "48 65 6C 6C 6F 2C 20 45 52 4F 46 53 21 0A");
	}
}

#endif
