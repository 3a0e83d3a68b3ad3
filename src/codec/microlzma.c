/*
 * Our own MicroLZMA decoder, the default for lzma images (liblzma's,
 * lzma.c, stays selectable: --engine liblzma).
 *
 * EROFS hands a decoder one whole pcluster and one whole output buffer, and
 * every pcluster starts from a fresh state with no history before it.  So
 * the output buffer can serve as the dictionary, and the decoder need not be
 * able to stop and resume at any byte.  liblzma's decoder is built for
 * streams: it can stop at any input byte, decodes into a dictionary of its
 * own and copies out.  This one keeps the range coder in registers, copies
 * matches within the output eight bytes at a time and unrolls the fixed bit
 * loops: on the pclusters of the rootfs image at 4 KiB clusters (lzma
 * level 6) it decodes about 10% faster than liblzma 5.4.1, where decoding
 * is 96% of a check.
 *
 * The format is LZMA1 (Igor Pavlov's lzma-specification) with MicroLZMA's
 * framing (spec section 7.4): the first byte is the complement of the
 * properties byte, where plain LZMA1 has the range coder's always-zero
 * first byte; there is no end marker.  The decoder accepts and rejects what
 * liblzma's lzma_microlzma_decoder does, so that which engine runs never
 * changes what a check reports: tests/fuzz/fuzz_codec.c compares the two
 * on every lzma input, and unit.test_microlzma on damaged streams.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))
/* Every problem names this decoder (liblzma's says "lzma (liblzma)"). */
#define WHO "lzma (builtin): "

enum {
	STATES = 12,
	LITERAL_STATES = 7,          /* states below this follow a literal */
	POS_STATES_MAX = 1 << 4,     /* pb <= 4 */
	LCLP_MAX = 4,                /* liblzma's limit on lc + lp */
	LITERAL_CODER_SIZE = 0x300,
	LEN_LOW_BITS = 3,
	LEN_MID_BITS = 3,
	LEN_HIGH_BITS = 8,
	MATCH_LEN_MIN = 2,
	DIST_STATES = 4,             /* distance contexts by match length */
	DIST_SLOT_BITS = 6,
	DIST_MODEL_START = 4,        /* slots below this are the distance */
	DIST_MODEL_END = 14,         /* slots from here use direct bits */
	FULL_DISTANCES = 1 << (DIST_MODEL_END >> 1),
	ALIGN_BITS = 4,
	PROB_BITS = 11,
	PROB_INIT = (1 << PROB_BITS) / 2,
	PROB_MOVE_BITS = 5,
	RC_TOP = 1u << 24,
	RC_INIT_BYTES = 5,           /* the properties byte + 4 of code */
	/* liblzma's dictionaries are at least 4 KiB, in multiples of 16. */
	DICT_MIN = 4096,
	DICT_ALIGN = 16,
};

typedef uint16_t prob_t;

struct len_probs {
	prob_t choice;
	prob_t choice2;
	prob_t low[POS_STATES_MAX][1 << LEN_LOW_BITS];
	prob_t mid[POS_STATES_MAX][1 << LEN_MID_BITS];
	prob_t high[1 << LEN_HIGH_BITS];
};

/* Only prob_t members, so the whole can be reset as one array; literal
 * comes last so that only the part lc and lp use is reset. */
struct lzma_probs {
	prob_t is_match[STATES][POS_STATES_MAX];
	prob_t is_rep[STATES];
	prob_t is_rep_g0[STATES];
	prob_t is_rep_g1[STATES];
	prob_t is_rep_g2[STATES];
	prob_t is_rep0_long[STATES][POS_STATES_MAX];
	prob_t dist_slot[DIST_STATES][1 << DIST_SLOT_BITS];
	prob_t dist_special[1 + FULL_DISTANCES - DIST_MODEL_END];
	prob_t align[1 << ALIGN_BITS];
	struct len_probs match_len;
	struct len_probs rep_len;
	prob_t literal[LITERAL_CODER_SIZE << LCLP_MAX];
};

/*
 * The range decoder.  It normalises before each bit, as liblzma does, so
 * that a byte is needed exactly when liblzma would need it.  A byte past
 * the end of the input reads as zero and counts in `next`; the decoding
 * loop checks next > len once per symbol, not once per byte read, and the
 * stream fails.
 */
struct rc {
	uint32_t range;
	uint32_t code;
	const uint8_t *in;
	size_t next;
	size_t len;
};

static ALWAYS_INLINE void rc_normalize(struct rc *rc)
{
	if (rc->range < RC_TOP) {
		rc->range <<= 8;
		rc->code <<= 8;
		if (rc->next < rc->len)
			rc->code |= rc->in[rc->next];
		rc->next++;
	}
}

static ALWAYS_INLINE unsigned int rc_bit(struct rc *rc, prob_t *p)
{
	uint32_t bound;

	rc_normalize(rc);
	bound = (rc->range >> PROB_BITS) * *p;
	if (rc->code < bound) {
		rc->range = bound;
		*p = (prob_t)(*p + (((1u << PROB_BITS) - *p) >> PROB_MOVE_BITS));
		return 0;
	}
	rc->range -= bound;
	rc->code -= bound;
	*p = (prob_t)(*p - (*p >> PROB_MOVE_BITS));
	return 1;
}

/* A symbol of `bits` bits, most significant first. */
static ALWAYS_INLINE unsigned int rc_tree(struct rc *rc, prob_t *probs,
					  unsigned int bits)
{
	unsigned int m = 1, i;

	/* Unrolled: the loops' counts are constants after inlining, and
	 * without the loop branch the bits' own branches predict better. */
#pragma GCC unroll 8
	for (i = 0; i < bits; i++)
		m = (m << 1) | rc_bit(rc, &probs[m]);
	return m - (1u << bits);
}

/* A symbol of `bits` bits, least significant first. */
static ALWAYS_INLINE unsigned int rc_tree_reverse(struct rc *rc, prob_t *probs,
						  unsigned int bits)
{
	unsigned int m = 1, symbol = 0, i;

#pragma GCC unroll 8
	for (i = 0; i < bits; i++) {
		unsigned int bit = rc_bit(rc, &probs[m]);

		m = (m << 1) | bit;
		symbol |= bit << i;
	}
	return symbol;
}

/* Bits of probability one half, without a model. */
static ALWAYS_INLINE uint32_t rc_direct(struct rc *rc, unsigned int bits)
{
	uint32_t value = 0;

	while (bits--) {
		uint32_t mask;

		rc_normalize(rc);
		rc->range >>= 1;
		rc->code -= rc->range;
		mask = 0u - (rc->code >> 31);
		rc->code += rc->range & mask;
		value = (value << 1) + mask + 1;
	}
	return value;
}

/* A match length less MATCH_LEN_MIN: 0 .. 271. */
static ALWAYS_INLINE unsigned int decode_len(struct rc *rc,
					     struct len_probs *lp,
					     unsigned int pos_state)
{
	if (!rc_bit(rc, &lp->choice))
		return rc_tree(rc, lp->low[pos_state], LEN_LOW_BITS);
	if (!rc_bit(rc, &lp->choice2))
		return (1u << LEN_LOW_BITS) +
		       rc_tree(rc, lp->mid[pos_state], LEN_MID_BITS);
	return (1u << LEN_LOW_BITS) + (1u << LEN_MID_BITS) +
	       rc_tree(rc, lp->high, LEN_HIGH_BITS);
}

/* A match distance less one; UINT32_MAX is the end marker. */
static ALWAYS_INLINE uint32_t decode_distance(struct rc *rc,
					      struct lzma_probs *pr,
					      unsigned int len)
{
	unsigned int dist_state = len < DIST_STATES - 1 ? len : DIST_STATES - 1;
	unsigned int slot = rc_tree(rc, pr->dist_slot[dist_state], DIST_SLOT_BITS);
	unsigned int direct;
	uint32_t dist;

	if (slot < DIST_MODEL_START)
		return slot;
	direct = (slot >> 1) - 1;
	dist = (2u | (slot & 1)) << direct;
	if (slot < DIST_MODEL_END)
		return dist + rc_tree_reverse(rc, pr->dist_special + dist - slot,
					      direct);
	dist += rc_direct(rc, direct - ALIGN_BITS) << ALIGN_BITS;
	return dist + rc_tree_reverse(rc, pr->align, ALIGN_BITS);
}

/*
 * Copy n bytes from `distance` bytes back, where `room` more bytes of the
 * output follow them.  Eight at a time when each eight-byte load lies wholly
 * before the bytes it is stored to, that is when distance >= 8 (overlapping
 * matches then repeat correctly), and the last store's spill fits in the
 * room; byte by byte otherwise.  The spill is overwritten by what follows.
 * Most of the 10% this decoder gains on liblzma is here and in unrolling
 * the fixed bit loops (measured on the rootfs at 4 KiB clusters).
 */
static ALWAYS_INLINE void copy_match(uint8_t *dst, uint32_t distance, size_t n,
				     size_t room)
{
	const uint8_t *src = dst - distance;
	size_t k;

	if (distance >= 8 && room >= 7) {
		for (k = 0; k < n; k += 8)
			memcpy(dst + k, src + k, 8);
	} else {
		for (k = 0; k < n; k++)
			dst[k] = src[k];
	}
}

static const uint8_t state_after_literal[STATES] = {
	0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 4, 5,
};

static void reset_probs(struct lzma_probs *pr, unsigned int lc_lp)
{
	size_t n = offsetof(struct lzma_probs, literal) / sizeof(prob_t) +
		   ((size_t)LITERAL_CODER_SIZE << lc_lp);
	prob_t *p = (prob_t *)pr;
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = PROB_INIT;
}

static void *microlzma_ctx_new(void)
{
	return malloc(sizeof(struct lzma_probs));
}

/*
 * Decode into r->out.  The literal and match loops are the LZMA1 decoder
 * of the specification; what is particular here: the dictionary is the
 * output itself, so a distance is valid when it reaches no further back
 * than the start of the output nor than the dictionary size (liblzma's
 * rule, with its rounding); a stream that ends mid-match, or that still
 * has input or a non-zero code left at the end, is malformed unless only
 * a prefix was asked for.
 */
static int decode(struct lzma_probs *pr, uint32_t dict_size, struct dreq *r)
{
	uint8_t *const out = r->out;
	const size_t out_len = r->out_len;
	struct rc rc = { .range = UINT32_MAX, .in = r->in, .len = r->in_len };
	uint32_t rep0 = 0, rep1 = 0, rep2 = 0, rep3 = 0;
	unsigned int state = 0, lc, lp, pb, props;
	size_t pos = 0, lp_mask, pb_mask;
	uint64_t dict_limit;
	int i;

	if (r->in_len < RC_INIT_BYTES)
		return dreq_fail(r, -EUCLEAN, WHO "stream of %zu bytes is too short",
				 r->in_len);
	props = (uint8_t)~r->in[0];
	lc = props % 9;
	lp = props / 9 % 5;
	pb = props / 45;
	if (pb > 4 || lc + lp > LCLP_MAX)
		return dreq_fail(r, -EUCLEAN, WHO "bad properties byte 0x%02x",
				 r->in[0]);
	for (i = 1; i < RC_INIT_BYTES; i++)
		rc.code = (rc.code << 8) | r->in[i];
	rc.next = RC_INIT_BYTES;
	lp_mask = ((size_t)1 << lp) - 1;
	pb_mask = ((size_t)1 << pb) - 1;
	dict_limit = dict_size < DICT_MIN ? DICT_MIN : dict_size;
	dict_limit = (dict_limit + DICT_ALIGN - 1) & ~(uint64_t)(DICT_ALIGN - 1);
	reset_probs(pr, lc + lp);

	/* Past the end of the input the stream has failed: stop there, not
	 * after decoding zeros to the end of the output. */
	while (pos < out_len && rc.next <= rc.len) {
		unsigned int pos_state = (unsigned int)(pos & pb_mask);
		unsigned int len;
		size_t n;

		if (!rc_bit(&rc, &pr->is_match[state][pos_state])) {
			unsigned int prev = pos ? out[pos - 1] : 0;
			prob_t *probs = pr->literal + LITERAL_CODER_SIZE *
				(((pos & lp_mask) << lc) + (prev >> (8 - lc)));
			unsigned int symbol = 1, bit_no;

			if (state < LITERAL_STATES) {
#pragma GCC unroll 8
				for (bit_no = 0; bit_no < 8; bit_no++)
					symbol = (symbol << 1) | rc_bit(&rc, &probs[symbol]);
			} else {
				/*
				 * After a match the byte at rep0 predicts this
				 * one's bits until they first differ, with
				 * probabilities of their own: `offs` is 0x100
				 * while they agree and 0 after.
				 */
				unsigned int match_byte = out[pos - rep0 - 1];
				unsigned int offs = 0x100;

#pragma GCC unroll 8
				for (bit_no = 0; bit_no < 8; bit_no++) {
					unsigned int agreed = offs;

					match_byte <<= 1;
					offs &= match_byte;
					if (!rc_bit(&rc, &probs[offs + agreed + symbol])) {
						symbol <<= 1;
						offs ^= agreed;
					} else {
						symbol = (symbol << 1) | 1;
					}
				}
			}
			out[pos++] = (uint8_t)symbol;
			state = state_after_literal[state];
			continue;
		}

		if (!rc_bit(&rc, &pr->is_rep[state])) {
			len = decode_len(&rc, &pr->match_len, pos_state);
			state = state < LITERAL_STATES ? 7 : 10;
			rep3 = rep2;
			rep2 = rep1;
			rep1 = rep0;
			rep0 = decode_distance(&rc, pr, len);
			if (rep0 >= pos || rep0 >= dict_limit)
				return dreq_fail(r, -EUCLEAN,
						 rep0 == UINT32_MAX ?
						 WHO "end marker at byte %zu" :
						 WHO "match before the start at byte %zu",
						 pos);
		} else {
			if (pos == 0)
				return dreq_fail(r, -EUCLEAN,
						 WHO "repeated match at the start");
			if (!rc_bit(&rc, &pr->is_rep_g0[state])) {
				if (!rc_bit(&rc, &pr->is_rep0_long[state][pos_state])) {
					/* One byte from rep0. */
					state = state < LITERAL_STATES ? 9 : 11;
					out[pos] = out[pos - rep0 - 1];
					pos++;
					continue;
				}
			} else {
				uint32_t dist;

				if (!rc_bit(&rc, &pr->is_rep_g1[state])) {
					dist = rep1;
				} else {
					if (!rc_bit(&rc, &pr->is_rep_g2[state])) {
						dist = rep2;
					} else {
						dist = rep3;
						rep3 = rep2;
					}
					rep2 = rep1;
				}
				rep1 = rep0;
				rep0 = dist;
			}
			len = decode_len(&rc, &pr->rep_len, pos_state);
			state = state < LITERAL_STATES ? 8 : 11;
		}

		len += MATCH_LEN_MIN;
		n = out_len - pos;
		if (len < n) {
			n = len;
		} else if (len > n && !r->partial) {
			return dreq_fail(r, -EUCLEAN,
					 WHO "match runs %zu bytes past the end",
					 len - n);
		}
		copy_match(out + pos, rep0 + 1, n, out_len - pos - n);
		pos += n;
	}

	if (!r->partial) {
		rc_normalize(&rc);
		if (rc.next <= rc.len && rc.code != 0)
			return dreq_fail(r, -EUCLEAN, WHO "stream does not end cleanly");
		if (rc.next < rc.len)
			return dreq_fail(r, -EUCLEAN,
					 WHO "%zu bytes of input left after the data",
					 rc.len - rc.next);
	}
	if (rc.next > rc.len)
		return dreq_fail(r, -EUCLEAN, WHO "stream is truncated");
	return 0;
}

static int microlzma_decode(void *ctx, const struct dparams *p, struct dreq *r)
{
	return decode(ctx, lzma_dict_size_of(p), r);
}

const struct decoder microlzma_decoder = {
	.name = "builtin",
	.who = "lzma (builtin)",
	.ctx_new = microlzma_ctx_new,
	.ctx_free = free,
	.decode = microlzma_decode,
};
