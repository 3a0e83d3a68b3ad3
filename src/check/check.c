/*
 * ek_check(): walk and check everything (in parallel unless one worker is
 * asked for), then, when extracting, make the hard links and apply the
 * directories' metadata deepest first; finally report the problems in a
 * stable order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check/checker.h"
#include "util/error.h"
#include "util/pool.h"

void ek_check_options_init(ek_check_options *o)
{
	memset(o, 0, sizeof(*o));
	o->preserve_owner = -1;
}

int ek_check(ek_image *img, const ek_check_options *opts,
	     ek_check_stats *stats, ek_error *err)
{
	struct checker c;
	ek_check_options defaults;
	ek_check_stats local;
	struct timespec t0, t1;
	unsigned int i, nbufs = 0;
	int ret = 0;

	memset(&c, 0, sizeof(c));
	c.img = img;
	if (!opts) {
		ek_check_options_init(&defaults);
		opts = &defaults;
	}
	c.o = opts;
	{
		ek_super_info sb;

		ek_get_super_info(img, &sb);
		c.block_size = sb.block_size;
	}
	c.st = stats ? stats : &local;
	memset(c.st, 0, sizeof(*c.st));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_init(&c.lock, NULL);
	c.x.rootfd = -1;
	ret = pool_resolve_workers(opts->workers, &c.workers, err);
	if (ret)
		goto out;
	nbufs = c.workers;
	c.bufs = calloc(nbufs, sizeof(*c.bufs));
	if (!c.bufs) {
		ret = err_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (opts->extract_dir) {
		ret = extract_init(&c.x, opts->extract_dir, err);
		if (ret)
			goto out;
		c.extracting = true;
		c.x.overwrite = opts->overwrite;
		c.x.owner = opts->preserve_owner < 0 ? geteuid() == 0
						     : opts->preserve_owner > 0;
		c.x.xattrs = !opts->no_xattrs;
	}
	check_plan_descriptors(&c);
	if (c.workers > 1 && pool_create(c.workers, &c.pool)) {
		ret = err_fail(err, -EAGAIN, "cannot start %u threads", c.workers);
		goto out;
	}
	/* Every worker is busy until the end: two of them stacked on one
	 * CPU while another idles (measured: up to 16 ms at a time) is
	 * time lost outright. */
	if (c.pool)
		pool_pin(c.pool);
	ret = check_walk(&c);
	if (ret) {
		ret = err_fail(err, ret, "out of memory");
		goto out;
	}
	if (c.pool)
		pool_wait_idle(c.pool);
	else
		check_drain(&c);
	if (c.extracting && !atomic_load(&c.stop)) {
		check_make_links(&c);
		check_finish_dirs(&c);
	}
	check_report_dupdirs(&c);
	check_report_problems(&c);
	if (atomic_load(&c.stop))
		ret = err_fail(err, c.fatal.code ? c.fatal.code : -EIO, "%s", c.fatal.message);
out:
	pool_destroy(c.pool);
	for (i = 0; c.bufs && i < nbufs; i++)
		free(c.bufs[i].data);
	free(c.bufs);
	check_free_deferred(&c);
	extract_fini(&c.x);
	nidset_free(&c.seen);
	pthread_mutex_destroy(&c.lock);
	c.st->inodes = atomic_load(&c.inodes);
	c.st->directories = atomic_load(&c.directories);
	c.st->regular_files = atomic_load(&c.regular_files);
	c.st->bytes = atomic_load(&c.bytes_done);
	c.st->io_errors = atomic_load(&c.io_errors);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c.st->seconds = (double)(t1.tv_sec - t0.tv_sec) +
			(double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return ret;
}
