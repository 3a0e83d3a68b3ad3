/* Check runs with one worker and with two must report the same. */
#ifndef EK_FUZZ_TRANSCRIPT_H
#define EK_FUZZ_TRANSCRIPT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Open bytes as an image (nothing to do if they are not one) and check it
 * with one worker and then two, extracting into extract_dir unless it is
 * NULL and calling after() (if any) after each run.  Aborts, printing
 * both, unless the runs reported the same: the same return, counts and
 * problems.  Runs that met extraction failures are not compared (where
 * the first one stops the walk depends on timing).
 */
void transcript_one_and_two(const uint8_t *data, size_t size,
			    const char *extract_dir, void (*after)(void));

#endif
