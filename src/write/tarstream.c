/* An archive's bytes on their way to libarchive; see tarstream.h. */
#include <errno.h>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "util/error.h"
#include "util/fdio.h"
#include "write/chunk_ahead.h"
#include "write/tarstream.h"
#include "write/writer.h"

#define IN_CAP (256u << 10)
#define OUT_CAP (256u << 10)
/* Skimming, a read takes this much: a header and the small files around
 * it, while a larger file's data is skipped by seeking over it.  On the
 * root filesystem's tar, index mode took 5% longer with 16 KiB, longer
 * still with 4 and 8 KiB, and no less with 128 KiB: fewer, larger reads
 * cost less than copying less. */
#define SKIM_CAP (64u << 10)

/* What an xz stream may make the decoder take, its dictionary mostly:
 * xz -9's is 64 MiB; this bounds what a stream made by hand can ask for
 * (a stream's header names its dictionary's size, whatever its data). */
#define XZ_MEMLIMIT (1u << 30)

/* A compression tarstream decodes itself: one row each, in decoders[]. */
struct decoder {
	const char *name;
	bool (*starts)(const uint8_t *p, size_t n);     /* its magic */
	bool (*init)(struct tarstream *s);              /* false: out of memory */
	/* Decompress into out[]: how much, 0 at the end, -1 on an error. */
	la_ssize_t (*some)(struct archive *a, struct tarstream *s);
	void (*end)(struct tarstream *s);               /* after any init */
};

struct tarstream {
	int fd;
	const struct tarstream_feed *feed;   /* NULL: fd is whole */
	uint64_t offset;              /* fed: where the next read starts */
	ek_error feed_err;            /* fed: why the file's writer failed */
	const char *name;
	const struct decoder *dec;    /* NULL: stored plain (or left to libarchive) */
	uint8_t *in;                  /* bytes as stored: in[pos, len) not yet used */
	size_t pos, len;
	uint8_t *buf;                 /* what read() fills */
	size_t read_cap;              /* how much one read() asks for */
	bool seeks;                   /* skimming a regular file: data is skipped */
	uint64_t file_left;           /* that file's bytes past what was read or skipped */
	bool in_ended;                /* the file has no more */
	bool tar_ended;               /* the compressed stream has no more */
	uint8_t *out;                 /* decompressed: out_buf, or a chunk ahead's */
	uint8_t *out_buf;
	struct chunk_ahead *ahead;    /* decoding on a thread of its own, or NULL */
	bool told_failed;             /* a read returned the failure (ahead) */
	struct inflate_state *gz;
	ZSTD_DStream *zs;
	size_t zs_left;               /* zstd: 0 at the end of a frame */
	lzma_stream xz;
	bool xz_started;
	bool pending;                 /* the decoder filled out[]: it may hold more */
	bool failed;                  /* a read or decoding error (why) */
	char why[256];
	bool checking;
	struct tarstream_expect x;
	struct digest_state *blob;    /* over the bytes as stored */
	struct digest_state *tar;     /* over the decompressed bytes */
	struct writer *copy;          /* NULL, or where the tar goes too */
	uint64_t copied;
	/* Bytes of the file read or skipped: the reader ahead adds, the
	 * builder reads them for progress. */
	_Atomic uint64_t stored_bytes;
};

static la_ssize_t fail_read(struct archive *a, struct tarstream *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Also what tarstream_finish() says when the archive did not.  The
 * message may be why itself, told again: formatted apart first (printing
 * a buffer into itself is undefined, and glibc made it empty). */
static la_ssize_t fail_read(struct archive *a, struct tarstream *s, const char *fmt, ...)
{
	char msg[sizeof(s->why)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(s->why, msg, sizeof(msg));
	s->failed = true;
	if (a)
		libarchive.set_error(a, EILSEQ, "%s", s->why);
	return -1;
}

/* More of a file still being written: what is there past offset, once
 * there is some; 0 at its end. */
static ssize_t read_fed(struct tarstream *s)
{
	uint64_t avail;
	bool whole;
	ssize_t got;

	for (;;) {
		if (s->feed->wait(s->feed->ctx, s->offset, &avail, &whole, &s->feed_err)) {
			errno = EIO;
			snprintf(s->why, sizeof(s->why), "%.200s", s->feed_err.message);
			return -1;
		}
		if (avail <= s->offset && whole)
			return 0;
		if (avail <= s->offset)     /* started again: its bytes come back */
			continue;
		uint64_t want = avail - s->offset < s->read_cap ? avail - s->offset : s->read_cap;

		got = pread(s->fd, s->in, (size_t)want, (off_t)s->offset);
		if (got != 0)
			break;
		/* Cut short since the wait: the writer starts it again. */
		usleep(1000);
	}
	if (got > 0)
		s->offset += (uint64_t)got;
	return got;
}

/* More of the file into in[] (which the caller has used up). */
static int refill(struct tarstream *s)
{
	ssize_t got;

	s->pos = s->len = 0;
	if (s->in_ended)
		return 0;
	do
		got = s->feed ? read_fed(s) : read(s->fd, s->in, s->read_cap);
	while (got < 0 && errno == EINTR);
	if (got < 0) {
		if (!s->feed_err.code)
			snprintf(s->why, sizeof(s->why), "%s", strerror(errno));
		s->failed = true;
		return -1;
	}
	if (got == 0)
		s->in_ended = true;
	if (s->blob)
		digest_add(s->blob, s->in, (size_t)got);
	if (s->seeks)
		s->file_left -= (uint64_t)got < s->file_left ? (uint64_t)got : s->file_left;
	s->stored_bytes += (uint64_t)got;
	s->len = (size_t)got;
	return 0;
}

static bool starts_gzip(const uint8_t *p, size_t n)
{
	return n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8;
}

static bool starts_zstd(const uint8_t *p, size_t n)
{
	return n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd;
}

static bool starts_xz(const uint8_t *p, size_t n)
{
	return n >= 6 && !memcmp(p, "\xfd" "7zXZ\0", 6);
}

/* A gzip member has ended: another may follow (gzip -c a b, pigz), or
 * the stream ends (what follows, if anything, is not gzip: as gzip
 * itself, it is left alone). */
static int next_member(struct tarstream *s)
{
	if (s->pos == s->len && refill(s))
		return -1;
	if (!starts_gzip(s->in + s->pos, s->len - s->pos)) {
		s->tar_ended = true;
		return 0;
	}
	isal_inflate_reset(s->gz);
	s->gz->crc_flag = ISAL_GZIP;
	return 0;
}

enum feed { FEED_READY, FEED_ENDED, FEED_FAILED };

/* Input for a decoder's next call: what in[] still holds, or what the
 * decoder holds back (it filled out[] last time), else more of the file;
 * FEED_ENDED when the file has no more. */
static enum feed feed(struct tarstream *s)
{
	if (s->pos < s->len || s->pending)
		return FEED_READY;
	if (refill(s))
		return FEED_FAILED;
	return s->len ? FEED_READY : FEED_ENDED;
}

/* Decompress into out[]: how much, 0 at the end, -1 on an error. */
static la_ssize_t inflate_some(struct archive *a, struct tarstream *s)
{
	while (!s->tar_ended) {
		enum feed ready = feed(s);
		int ret;

		if (ready == FEED_FAILED)
			return fail_read(a, s, "%s", s->why);
		if (ready == FEED_ENDED)
			return fail_read(a, s, "the gzip stream is cut short");
		s->gz->next_in = s->in + s->pos;
		s->gz->avail_in = (uint32_t)(s->len - s->pos);
		s->gz->next_out = s->out;
		s->gz->avail_out = OUT_CAP;
		ret = isal_inflate(s->gz);
		s->pos = s->len - s->gz->avail_in;
		s->pending = !s->gz->avail_out;
		if (ret != ISAL_DECOMP_OK)
			return fail_read(a, s, "gzip: %s (ISA-L %d)",
					 ret == ISAL_INCORRECT_CHECKSUM ? "a checksum does not match" :
					 "not a valid stream", ret);
		if (s->gz->block_state == ISAL_BLOCK_FINISH && next_member(s))
			return fail_read(a, s, "%s", s->why);
		if (s->gz->avail_out < OUT_CAP)
			return (la_ssize_t)(OUT_CAP - s->gz->avail_out);
	}
	return 0;
}

static la_ssize_t unzstd_some(struct archive *a, struct tarstream *s)
{
	while (!s->tar_ended) {
		ZSTD_inBuffer in;
		ZSTD_outBuffer out = { s->out, OUT_CAP, 0 };
		enum feed ready = feed(s);

		if (ready == FEED_FAILED)
			return fail_read(a, s, "%s", s->why);
		if (ready == FEED_ENDED) {
			if (s->zs_left)
				return fail_read(a, s, "the zstd stream is cut short");
			s->tar_ended = true;
			break;
		}
		in = (ZSTD_inBuffer){ s->in + s->pos, s->len - s->pos, 0 };
		s->zs_left = ZSTD_decompressStream(s->zs, &out, &in);
		s->pos += in.pos;
		s->pending = out.pos == out.size;
		if (ZSTD_isError(s->zs_left))
			return fail_read(a, s, "zstd: %s", ZSTD_getErrorName(s->zs_left));
		if (out.pos)
			return (la_ssize_t)out.pos;
	}
	return 0;
}

/* xz, its streams one after another (xz -c a b), to the end of the file. */
static la_ssize_t unxz_some(struct archive *a, struct tarstream *s)
{
	while (!s->tar_ended) {
		enum feed ready = feed(s);
		lzma_ret ret;

		if (ready == FEED_FAILED)
			return fail_read(a, s, "%s", s->why);
		s->xz.next_in = s->in + s->pos;
		s->xz.avail_in = s->len - s->pos;
		s->xz.next_out = s->out;
		s->xz.avail_out = OUT_CAP;
		/* Concatenated streams end only where the file does. */
		ret = lzma_code(&s->xz, ready == FEED_ENDED ? LZMA_FINISH : LZMA_RUN);
		s->pos = s->len - s->xz.avail_in;
		s->pending = !s->xz.avail_out;
		if (ret == LZMA_STREAM_END)
			s->tar_ended = true;
		else if (ret == LZMA_MEMLIMIT_ERROR)
			return fail_read(a, s, "xz: decoding it takes more than %u MiB",
					 XZ_MEMLIMIT >> 20);
		else if (ret != LZMA_OK)
			return fail_read(a, s, "xz: %s", ret == LZMA_BUF_ERROR ?
					 "the stream is cut short" : "not a valid stream");
		if (s->xz.avail_out < OUT_CAP)
			return (la_ssize_t)(OUT_CAP - s->xz.avail_out);
	}
	return 0;
}

static bool gzip_init(struct tarstream *s)
{
	s->gz = malloc(sizeof(*s->gz));
	if (!s->gz)
		return false;
	isal_inflate_init(s->gz);
	s->gz->crc_flag = ISAL_GZIP;
	return true;
}

static void gzip_end(struct tarstream *s)
{
	free(s->gz);
}

static bool zstd_init(struct tarstream *s)
{
	s->zs = ZSTD_createDStream();
	return s->zs != NULL;
}

static void zstd_end(struct tarstream *s)
{
	ZSTD_freeDStream(s->zs);
}

static bool xz_init(struct tarstream *s)
{
	s->xz_started = lzma_stream_decoder(&s->xz, XZ_MEMLIMIT, LZMA_CONCATENATED) == LZMA_OK;
	return s->xz_started;
}

static void xz_end(struct tarstream *s)
{
	if (s->xz_started)
		lzma_end(&s->xz);
}

static const struct decoder decoders[] = {
	{ "gzip", starts_gzip, gzip_init, inflate_some, gzip_end },
	{ "zstd", starts_zstd, zstd_init, unzstd_some, zstd_end },
	{ "xz", starts_xz, xz_init, unxz_some, xz_end },
};

/* What is handed over goes to the copy too. */
static la_ssize_t copy_out(struct archive *a, struct tarstream *s, const void *p, la_ssize_t n)
{
	ek_error e = { 0 };

	if (n <= 0 || !s->copy)
		return n;
	if (writer_pwrite(s->copy, s->copied, p, (size_t)n, &e))
		return fail_read(a, s, "%s", e.message);
	s->copied += (uint64_t)n;
	return n;
}

/* The decoder's next piece, into out[], counted in the tar's digest and
 * copied as it is handed over. */
static la_ssize_t decode_next(struct archive *a, struct tarstream *s)
{
	la_ssize_t n;

	if (s->failed)
		return fail_read(a, s, "%s", s->why);
	n = s->dec->some(a, s);
	if (n > 0 && s->tar)
		digest_add(s->tar, s->out, (size_t)n);
	return copy_out(a, s, s->out, n);
}

/* The decoding thread's: one piece into buf (OUT_CAP bytes). */
static ssize_t fill_ahead(void *ctx, void *buf, size_t size)
{
	struct tarstream *s = ctx;

	(void)size;
	s->out = buf;
	return decode_next(NULL, s);
}

la_ssize_t tarstream_read(struct archive *a, void *ctx, const void **out)
{
	struct tarstream *s = ctx;
	la_ssize_t n;

	if (s->ahead) {
		/* (why: written before the chunk that tells of it.) */
		n = chunk_ahead_next(s->ahead, out);
		if (n < 0) {
			s->told_failed = true;
			if (a)
				libarchive.set_error(a, EILSEQ, "%s", s->why);
		}
		return n;
	}
	if (s->dec) {
		n = decode_next(a, s);
		*out = s->out;
		return n;
	}
	if (s->failed)
		return fail_read(a, s, "%s", s->why);
	if (s->pos == s->len && refill(s))
		return fail_read(a, s, "%s", s->why);
	n = (la_ssize_t)(s->len - s->pos);
	*out = s->in + s->pos;
	s->pos = s->len;
	return copy_out(a, s, *out, n);
}

static bool is_regular(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether no read of the stream can wait on a writer: a regular file,
 * or a feed whose file is whole already (a registry's layer read again,
 * for the second pass over several). */
static bool never_waits(struct tarstream *s)
{
	uint64_t avail;
	bool whole = false;
	ek_error ignored;

	if (!s->feed)
		return is_regular(s->fd);
	return !s->feed->wait(s->feed->ctx, 0, &avail, &whole, &ignored) && whole;
}

void tarstream_decode_ahead(struct tarstream *s)
{
	if (s->dec && !s->ahead && never_waits(s) &&
	    chunk_ahead_start(fill_ahead, s, OUT_CAP, &s->ahead))
		s->ahead = NULL;    /* then decoded where it is read */
}

/* The decoding thread stopped: the stream is the caller's alone again. */
static void stop_ahead(struct tarstream *s)
{
	chunk_ahead_stop(s->ahead);
	s->ahead = NULL;
	s->out = s->out_buf;
}

la_int64_t tarstream_skip(struct archive *a, void *ctx, la_int64_t request)
{
	struct tarstream *s = ctx;
	uint64_t skipped = s->file_left;

	(void)a;
	/* 0: libarchive reads through instead.  What a decoder hands over
	 * is not where the file is (index mode refuses a compressed tar,
	 * but the reader ahead may skip before the refusal).  Never past
	 * the file's end: libarchive then reads, gets nothing and reports
	 * the archive cut short. */
	if (!s->seeks || s->dec || request <= 0)
		return 0;
	if ((uint64_t)request < skipped)
		skipped = (uint64_t)request;
	if (!skipped || lseek(s->fd, (off_t)skipped, SEEK_CUR) < 0)
		return 0;
	s->file_left -= skipped;
	s->stored_bytes += skipped;
	return (la_int64_t)skipped;
}

void tarstream_copy_to(struct tarstream *s, struct writer *w)
{
	s->copy = w;
}

uint64_t tarstream_copied(const struct tarstream *s)
{
	return s->copied;
}

uint64_t tarstream_consumed(const struct tarstream *s)
{
	return atomic_load_explicit(&s->stored_bytes, memory_order_relaxed);
}

const char *tarstream_compression(const struct tarstream *s)
{
	return s->dec ? s->dec->name : NULL;
}

/*
 * Skimming (headers only) a regular file, the data libarchive skips is
 * sought over, never read, and a read takes only a header's worth and
 * the small files around it.  Mapping the file instead costs a page
 * fault for each header touched: on a virtual machine where those are
 * dear, a bare libarchive loop over the root filesystem's tar took 52 ms
 * mapped, 27 ms read and sought (cat: 26 ms).  From the descriptor's
 * offset (standard input may be part-read).
 */
static void skim_by_seeking(struct tarstream *s)
{
	int64_t left = fd_remaining(s->fd);

	if (left <= 0)
		return;
	s->seeks = true;
	s->read_cap = SKIM_CAP;
	s->file_left = (uint64_t)left;
}

/* A read of the file failed: why, with the feed's code when its writer
 * failed (a registry's answer, a cancel). */
static int read_failed(struct tarstream *s, ek_error *err)
{
	if (s->feed_err.code)
		return err_fail(err, s->feed_err.code, "%s: %s", s->name, s->feed_err.message);
	return err_fail(err, -EIO, "%s: reading it: %s", s->name, s->why);
}

static int start(struct tarstream *s, const char *path, const struct tarstream_expect *x,
		 bool skim, ek_error *err)
{
	size_t i;

	if (s->feed) {
		s->fd = s->feed->open(s->feed->ctx, err);
		if (s->fd < 0) {
			err_prefix(err, "%s: ", s->name);
			return s->fd;
		}
	} else {
		s->fd = path ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	}
	/* A blob its manifest names and the layout lacks is a broken layout. */
	if (s->fd < 0)
		return err_fail(err, errno == ENOENT && x ? -EUCLEAN : -errno,
				"%s: cannot open it: %s", s->name, strerror(errno));
	s->read_cap = IN_CAP;
	/* A blob's digest covers every byte: nothing is skipped; nor is a
	 * file whose end is still to come. */
	if (skim && !x && !s->feed)
		skim_by_seeking(s);
	if (!(s->in = s->buf = malloc(s->read_cap)))
		return err_fail(err, -ENOMEM, "out of memory");
	if (x) {
		s->checking = true;
		s->x = *x;
		s->blob = digest_begin();
		if (!s->blob)
			return err_fail(err, -ENOMEM, "out of memory");
	}
	if (refill(s))
		return read_failed(s, err);
	for (i = 0; i < sizeof(decoders) / sizeof(decoders[0]) && !s->dec; i++)
		if (decoders[i].starts(s->in, s->len))
			s->dec = &decoders[i];
	if (s->dec && (!(s->out = s->out_buf = malloc(OUT_CAP)) || !s->dec->init(s)))
		return err_fail(err, -ENOMEM, "out of memory");
	/* A compressed blob's tar has a digest of its own (a plain tar's is
	 * the blob's). */
	if (s->checking && s->x.check_diff_id && s->dec &&
	    !(s->tar = digest_begin()))
		return err_fail(err, -ENOMEM, "out of memory");
	return 0;
}

int tarstream_open(const char *path, const struct tarstream_feed *feed, const char *name,
		   const struct tarstream_expect *x, bool skim, struct tarstream **out,
		   ek_error *err)
{
	struct tarstream *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s)
		return err_fail(err, -ENOMEM, "out of memory");
	s->name = name;
	s->fd = -1;
	s->feed = feed;
	s->xz = (lzma_stream)LZMA_STREAM_INIT;
	ret = start(s, path, x, skim, err);
	if (ret)
		tarstream_close(s);
	else
		*out = s;
	return ret;
}

/* "NAME: its content's digest is sha256:HEX, not the one its descriptor
 * names" */
static int compare(const struct tarstream *s, const uint8_t *got, const uint8_t *want,
		   const char *what, const char *named_by, ek_error *err)
{
	char hex[2 * DIGEST_SIZE + 1];

	if (!memcmp(got, want, DIGEST_SIZE))
		return 0;
	digest_to_hex(got, hex);
	return err_fail(err, -EUCLEAN, "%s: %s digest is sha256:%s, not the one %s", s->name,
			what, hex, named_by);
}

int tarstream_finish(struct tarstream *s, bool archive_failed, ek_error *err)
{
	uint8_t blob[DIGEST_SIZE], tar[DIGEST_SIZE];
	const void *unused;
	bool tar_whole, trailer_bad = false;

	/* A failure the reads have told (the thread may have met one since,
	 * in what the archive did not need: the trailer, below). */
	tar_whole = !archive_failed && !(s->ahead ? s->told_failed : s->failed);
	/* What the thread decoded is counted and copied already; the rest
	 * is decoded here. */
	stop_ahead(s);
	if (s->feed_err.code)       /* what the archive met follows from it */
		return read_failed(s, err);
	/* The rest of the compressed stream: the tar's padding, and the
	 * trailer whose checksum covers all of it (a stream cut there or
	 * damaged is bad input even though the tar ended before); a tar
	 * that did not decode has nothing more to tell. */
	while (tar_whole && (s->dec || s->copy) && !s->tar_ended) {
		la_ssize_t n = tarstream_read(NULL, s, &unused);

		if (n < 0) {
			tar_whole = false;
			trailer_bad = true;
		} else if (!n) {
			break;          /* a plain file's end */
		}
	}
	/* The rest of the file (also what a writer to a pipe may still
	 * send), which a blob's digest covers; a skimmed file's is sought
	 * over. */
	if (s->seeks && lseek(s->fd, 0, SEEK_END) >= 0)
		s->in_ended = true;
	while (!s->in_ended)
		if (refill(s))
			return read_failed(s, err);
	if (s->checking) {
		digest_end(s->blob, blob);
		s->blob = NULL;
		if (s->stored_bytes != s->x.size)
			return err_fail(err, -EUCLEAN, "%s: %llu bytes, where its descriptor says %llu",
					s->name, (unsigned long long)s->stored_bytes,
					(unsigned long long)s->x.size);
		if (compare(s, blob, s->x.digest, "its content's", "its descriptor names", err))
			return -EUCLEAN;
	}
	if (trailer_bad)
		return err_fail(err, -EUCLEAN, "%s: after the end of the archive: %s", s->name,
				s->why);
	if (!s->checking || !s->x.check_diff_id || !tar_whole)
		return 0;
	if (s->tar) {
		digest_end(s->tar, tar);
		s->tar = NULL;
	} else {
		memcpy(tar, blob, DIGEST_SIZE);
	}
	return compare(s, tar, s->x.diff_id, "its tar's", "the image config names (diff_id)",
		       err) ? -EUCLEAN : 0;
}

void tarstream_close(struct tarstream *s)
{
	uint8_t ignored[DIGEST_SIZE];

	if (!s)
		return;
	stop_ahead(s);
	if (s->fd >= 0)
		close(s->fd);
	if (s->blob)
		digest_end(s->blob, ignored);
	if (s->tar)
		digest_end(s->tar, ignored);
	if (s->dec)
		s->dec->end(s);
	free(s->out_buf);
	free(s->buf);
	free(s);
}
