#!/usr/bin/env python3
"""Random reads of random lengths, from THREADS threads for SECONDS,
across all files of MOUNT, each compared with the same bytes of SOURCE.
Prints the number of reads; exits 1 at the first difference or error."""
import os
import random
import sys
import threading
import time

mount, source, seconds, threads = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
files = []
for d, _, names in os.walk(source):
    for n in names:
        p = os.path.join(d, n)
        if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) > 0:
            files.append(os.path.relpath(p, source))
files.sort()
deadline = time.time() + seconds
errors = []
counts = [0] * threads

def worker(k):
    r = random.Random(k)
    while time.time() < deadline and not errors:
        rel = r.choice(files)
        size = os.path.getsize(os.path.join(source, rel))
        off = r.randrange(size)
        length = r.choice((1, 100, 4096, 65536, 300000, 1 << 20))
        try:
            with open(os.path.join(mount, rel), "rb") as f:
                got = os.pread(f.fileno(), length, off)
            with open(os.path.join(source, rel), "rb") as f:
                want = os.pread(f.fileno(), length, off)
        except OSError as e:
            errors.append("%s at %d: %s" % (rel, off, e))
            return
        if got != want:
            errors.append("%s at %d (+%d): bytes differ" % (rel, off, length))
            return
        counts[k] += 1

ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sum(counts))
if errors:
    print(errors[0], file=sys.stderr)
    sys.exit(1)
