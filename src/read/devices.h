/* Extra devices (spec 8.3): the device table, and where each device's
 * blocks are read from. */
#ifndef EK_READ_DEVICES_H
#define EK_READ_DEVICES_H

#include "read/internal.h"

/* Read the device table and, when the open options name the devices'
 * files, open them and route img->io through them (img->size grows to
 * cover them). */
int devices_load(ek_image *img, ek_error *err);

#endif
