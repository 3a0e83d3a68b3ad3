/* Inline tails of uncompressed files, kept for the metadata (tails.c). */
#ifndef EK_WRITE_TAILS_H
#define EK_WRITE_TAILS_H

#include <stdbool.h>
#include <stdint.h>

struct build;
struct tnode;

/* Whether a tail of this many bytes (none: no) fits beside n's inode. */
bool tail_fits_inline(const struct build *b, const struct tnode *n, uint64_t tail);
/* n's inline tail (n->inline_size bytes) from its source fd at off: into
 * memory, or past the budget into the tails file. */
int tail_read(struct build *b, struct tnode *n, int fd, uint64_t off);
/* n's inline tail into out, wherever it waits. */
int tail_copy(struct build *b, const struct tnode *n, uint8_t *out);
void tails_close(struct build *b);

#endif
