#!/usr/bin/env python3
"""Patch bytes of an image file: the tests' tool for damaging images.

    imgpatch.py IMAGE OFFSET HEXBYTES        write bytes at OFFSET
    imgpatch.py IMAGE OFFSET --random N SEED N pseudo-random bytes
    imgpatch.py IMAGE OFFSET --zero N        N zero bytes
    imgpatch.py IMAGE --truncate SIZE        cut the file
"""
import random
import sys

path = sys.argv[1]
if sys.argv[2] == "--truncate":
    with open(path, "r+b") as f:
        f.truncate(int(sys.argv[3], 0))
    sys.exit(0)
off = int(sys.argv[2], 0)
if sys.argv[3] == "--random":
    r = random.Random(int(sys.argv[5]))
    data = bytes(r.randrange(256) for _ in range(int(sys.argv[4], 0)))
elif sys.argv[3] == "--zero":
    data = bytes(int(sys.argv[4], 0))
else:
    data = bytes.fromhex(sys.argv[3])
with open(path, "r+b") as f:
    f.seek(off)
    f.write(data)
