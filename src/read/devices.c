/*
 * Extra devices (spec 8.3).  An image whose data lies on devices beside
 * it is read in one of the kernel's two ways:
 *
 *  - flat (no device files given, as a mount without device=): device k's
 *    block b is block uniaddr_k + b of the image file, which holds them
 *    all (an index-mode image with its tar appended, say).  A device
 *    whose uniaddr is 0 cannot be there: its blocks are nowhere.
 *  - routed (the open options name one file per device, in the table's
 *    order, as device= does): device k's block b is block b of its file,
 *    and primary addresses in [uniaddr_k, uniaddr_k + blocks_k) are
 *    redirected to it.  A device without such a range gets one past the
 *    image, so that one address space still serves every read (route.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/ondisk.h"
#include "read/blocks.h"
#include "read/devices.h"
#include "read/backend.h"
#include "util/error.h"

static int read_table(ek_image *img, ek_error *err)
{
	const struct fmt_super *sb = &img->sb;
	unsigned int i;

	img->devices = calloc(sb->extra_devices, sizeof(*img->devices));
	if (!img->devices)
		return err_fail(err, -ENOMEM, "out of memory");
	for (i = 0; i < sb->extra_devices; i++) {
		struct device_slot *d = &img->devices[i];
		uint8_t slot[EROFS_DEVICE_SLOT_SIZE];
		uint64_t off = ((uint64_t)sb->devt_slotoff + i) * EROFS_DEVICE_SLOT_SIZE;
		int ret = image_read(img, off, slot, sizeof(slot), err);

		if (ret) {
			err_prefix(err, "device table slot %u: ", i);
			return ret;
		}
		memcpy(d->tag, slot, 64);
		d->tag[64] = '\0';
		/* The high halves (48BIT) are not read: the kernel this
		 * reader follows (6.18) ignores them. */
		d->blocks = get_le32(slot + 64);
		d->uniaddr = get_le32(slot + 68);
		/* Flat: where the image file holds it, if it can. */
		d->base = d->uniaddr;
		d->span = d->blocks << img->blkszbits;
	}
	img->ndevices = sb->extra_devices;
	return 0;
}

static unsigned int count_given(const char *const *files)
{
	unsigned int n = 0;

	while (files[n] && n <= UINT16_MAX)
		n++;
	return n;
}

/* Open each device's file and make img->io the routed whole. */
static int route(ek_image *img, ek_error *err)
{
	const char *const *files = img->opts.devices;
	unsigned int n = count_given(files), i;
	uint64_t top = 0, blksz = img->blksz;
	struct io_route *routes;
	struct io *routed;
	int ret = 0;

	if (n != img->ndevices)
		return err_fail(err, -EINVAL, "the image has %u extra device%s, %u file%s given",
				img->ndevices, img->ndevices == 1 ? "" : "s", n,
				n == 1 ? " was" : "s were");
	routes = calloc(n, sizeof(*routes));
	if (!routes)
		return err_fail(err, -ENOMEM, "out of memory");
	/* Past the image and every device's unified range: room for the
	 * devices that have none. */
	top = (img->size + blksz - 1) / blksz;
	for (i = 0; i < n; i++) {
		const struct device_slot *d = &img->devices[i];

		if (d->uniaddr && d->blocks && d->uniaddr + d->blocks > top)
			top = d->uniaddr + d->blocks;
	}
	for (i = 0; i < n && !ret; i++) {
		struct device_slot *d = &img->devices[i];
		uint64_t borrow = 0;

		ret = backend_open(files[i], &img->opts, &borrow, &routes[i].io, err);
		if (ret) {
			err_prefix(err, "extra device %u: ", i + 1);
			break;
		}
		if (d->blocks && routes[i].io->size >> img->blkszbits < d->blocks) {
			ret = err_fail(err, -EINVAL,
				       "extra device %u: %s holds %llu bytes; the image's device table gives it %llu blocks of %u",
				       i + 1, files[i], (unsigned long long)routes[i].io->size,
				       (unsigned long long)d->blocks, img->blksz);
			break;
		}
		if (!routes[i].io->size) {
			ret = err_fail(err, -EINVAL, "extra device %u: %s is empty", i + 1, files[i]);
			break;
		}
		d->own_file = true;
		d->span = d->blocks ? d->blocks << img->blkszbits : routes[i].io->size;
		if (d->uniaddr && d->blocks) {
			d->base = d->uniaddr;
		} else {
			d->base = top;
			top += (d->span + blksz - 1) / blksz;
		}
		routes[i].start = d->base << img->blkszbits;
		routes[i].len = d->span;
	}
	if (!ret)
		ret = io_open_routed(img->io, routes, n, &routed, err);
	if (ret) {
		for (i = 0; i < n; i++)
			io_close(routes[i].io);
		free(routes);
		return ret;
	}
	free(routes);
	img->io = routed;
	img->size = routed->size;
	return 0;
}

int devices_load(ek_image *img, ek_error *err)
{
	const struct fmt_super *sb = &img->sb;
	bool table = (sb->feature_incompat & EROFS_INCOMPAT_DEVICE_TABLE) && sb->extra_devices;
	int ret;

	/* The bit doubles as COMPR_HEAD2; zero extra devices is valid. */
	if (!table) {
		unsigned int n = img->opts.devices ? count_given(img->opts.devices) : 0;

		return n ? err_fail(err, -EINVAL, "the image has no extra devices, %u file%s given",
				    n, n == 1 ? " was" : "s were") : 0;
	}
	ret = read_table(img, err);
	if (!ret && img->opts.devices && img->opts.devices[0])
		ret = route(img, err);
	return ret;
}

int ek_get_device_info(const ek_image *img, unsigned int number, ek_device_info *out)
{
	const struct device_slot *d;

	if (number < 1 || number > img->ndevices)
		return -ENOENT;
	d = &img->devices[number - 1];
	memset(out, 0, sizeof(*out));
	memcpy(out->tag, d->tag, sizeof(out->tag));
	out->blocks = d->blocks;
	out->uniaddr = d->uniaddr;
	out->own_file = d->own_file;
	out->physical = d->base ? d->base << img->blkszbits : UINT64_MAX;
	out->size = d->span;
	out->readable = d->own_file ||
			(d->base && out->physical <= img->file_size &&
			 d->span <= img->file_size - out->physical);
	return 0;
}
