/*
 * In-process reads through liberofskit, for bench/fio.sh:
 *
 *   erofskit-bench-read IMAGE PATH seq|rand|small|codec [ENGINE]
 *
 *   seq    the whole file in 128 KiB reads, in order (cache + readahead)
 *   rand   4 KiB reads at random 4 KiB offsets covering the file size
 *   small  like rand, 14 MiB of reads (fio --io_size=14m)
 *   codec  no I/O, no cache: decode every compressed extent once, in one
 *          thread, from memory (the single-core speed of the decoder)
 *
 * Prints MiB/s of file data delivered.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/engine.h"
#include "erofskit/erofskit.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int codec_speed(const char *image, ek_inode *inode, const ek_open_options *o)
{
	const ek_stat *st = ek_inode_stat(inode);
	struct engine *engine;
	const char *names[EROFS_ALG_MAX] = {
		[EROFS_ALG_DEFLATE] = o->deflate_engine,
		[EROFS_ALG_LZMA] = o->lzma_engine,
	};
	struct decoder_choice which;
	uint64_t off = 0, bytes = 0;
	double t0, t = 0;
	FILE *f = fopen(image, "rb");
	uint8_t *in = malloc(1 << 20), *out = malloc(12 << 20);
	ek_error err;

	if (!f || !in || !out || decoder_choose(names, &which, &err) ||
	    engine_software_create(&which, &engine, &err)) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	engine->params.lzma_dict_size = 8u << 20;
	engine->params.zstd_window_log_max = 20;
	while (off < st->size) {
		struct dreq r = { 0 };
		ek_extent e;
		size_t skip = 0;

		if (ek_map(inode, off, &e, &err)) {
			fprintf(stderr, "%s\n", err.message);
			return 1;
		}
		off = e.logical + e.length;
		if (e.kind != EK_EXTENT_COMPRESSED || e.in_metadata)
			continue;
		if (fseeko(f, (off_t)e.physical, SEEK_SET) ||
		    fread(in, 1, (size_t)e.physical_length, f) != e.physical_length)
			return 1;
		while (skip < e.physical_length && !in[skip])
			skip++;
		r.algorithm = e.algorithm;
		r.in = in + skip;
		r.in_len = (size_t)e.physical_length - skip;
		r.out = out;
		r.out_len = (size_t)e.length;
		t0 = now();
		if (engine_decompress(engine, &r)) {
			fprintf(stderr, "decode failed: %s\n", r.why);
			return 1;
		}
		t += now() - t0;
		bytes += e.length;
	}
	printf("%.1f\n", (double)bytes / 1048576.0 / t);
	engine_destroy(engine);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	ek_open_options o;
	ek_image *img;
	ek_inode *inode;
	ek_error err;
	ek_nid nid;
	const ek_stat *st;
	uint64_t total, done = 0;
	size_t bs;
	char *buf;
	double t0;

	if (argc < 4) {
		fprintf(stderr, "usage: %s IMAGE PATH seq|rand|small|codec [DECODER]\n", argv[0]);
		return 2;
	}
	ek_open_options_init(&o);
	if (argc > 4 && ek_open_options_set_engine(&o, argv[4], &err)) {
		fprintf(stderr, "%s\n", err.message);
		return 2;
	}
	if (strcmp(argv[3], "codec")) {
		o.cache_bytes = 256u << 20;
		o.readahead = 1;
	}
	if (ek_open(argv[1], &o, &img, &err) || ek_lookup(img, argv[2], &nid, &err) ||
	    ek_inode_get(img, nid, &inode, &err)) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	st = ek_inode_stat(inode);
	if (!strcmp(argv[3], "codec"))
		return codec_speed(argv[1], inode, &o);
	bs = !strcmp(argv[3], "seq") ? 128u << 10 : 4096;
	total = !strcmp(argv[3], "small") ? 14u << 20 : st->size;
	buf = malloc(bs);
	if (!buf)
		return 1;
	t0 = now();
	while (done < total) {
		uint64_t off = done;
		ssize_t n;

		if (bs == 4096)
			off = next_random() % (st->size / 4096) * 4096;
		n = ek_read(inode, buf, bs, off, &err);
		if (n < 0) {
			fprintf(stderr, "%s\n", err.message);
			return 1;
		}
		done += bs;
	}
	printf("%.1f\n", (double)done / 1048576.0 / (now() - t0));
	free(buf);
	ek_inode_put(inode);
	ek_close(img);
	return 0;
}
