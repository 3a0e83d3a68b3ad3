#!/usr/bin/env python3
"""Compare two directory trees exactly, with names handled as raw bytes.

Usage:
    python3 treecmp.py [--quiet] A B

manifest.py needs UTF-8 names; this works on any bytes a name may hold
(non-UTF-8 bytes, newlines, tabs, backslashes).  For every path below A and
B (the roots included) it compares: the type, permission bits with
setuid/setgid/sticky, uid, gid, nlink, mtime in nanoseconds, the size of
files and symlinks, the content of files, symlink targets, device numbers,
and every xattr (name and value bytes; lgetxattr, so a symlink's own
xattrs).  It also compares the hard-link groups (non-directories sharing
an inode).  Directory sizes, atime, ctime and inode numbers are not
compared: they depend on the filesystem.

Prints each difference (paths as Python bytes literals) and exits 1 when
there are any, 0 when the trees are equal; 2 on usage errors.  Run as
root so that trusted.* xattrs are visible and mode-0000 files readable.
"""

import hashlib
import os
import stat
import sys

CHUNK = 1 << 20

TYPES = ((stat.S_ISREG, "reg"), (stat.S_ISDIR, "dir"), (stat.S_ISLNK, "lnk"),
         (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "sock"),
         (stat.S_ISCHR, "chr"), (stat.S_ISBLK, "blk"))


def ftype(mode):
    for test, name in TYPES:
        if test(mode):
            return name
    return "unknown"


def content_hash(path):
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        while True:
            b = os.read(fd, CHUNK)
            if not b:
                break
            h.update(b)
    finally:
        os.close(fd)
    return h.hexdigest()


def xattrs(path):
    out = {}
    for name in os.listxattr(path, follow_symlinks=False):
        out[name] = os.getxattr(path, name, follow_symlinks=False)
    return out


def describe(path, st):
    t = ftype(st.st_mode)
    e = {
        "type": t,
        "mode": "%04o" % stat.S_IMODE(st.st_mode),
        "uid": st.st_uid,
        "gid": st.st_gid,
        "nlink": st.st_nlink,
        "mtime_ns": st.st_mtime_ns,
        "xattrs": xattrs(path),
    }
    if t == "reg":
        e["size"] = st.st_size
        e["content"] = content_hash(path)
    elif t == "lnk":
        e["size"] = st.st_size
        e["target"] = os.readlink(path)
    elif t in ("chr", "blk"):
        e["rdev"] = (os.major(st.st_rdev), os.minor(st.st_rdev))
    return e


def scan(root):
    """{relative bytes path: description}, and the hard-link groups."""
    root = os.fsencode(root)
    entries, inodes = {}, {}
    stack = [b""]
    entries[b"/"] = describe(root, os.lstat(root))
    while stack:
        rel = stack.pop()
        d = root + rel
        for name in os.listdir(d):
            r = rel + b"/" + name
            p = root + r
            st = os.lstat(p)
            entries[r] = describe(p, st)
            if stat.S_ISDIR(st.st_mode):
                stack.append(r)
            else:
                inodes.setdefault((st.st_dev, st.st_ino), []).append(r)
    groups = sorted(sorted(g) for g in inodes.values() if len(g) > 1)
    return entries, groups


def short(v):
    r = repr(v)
    return r if len(r) <= 120 else r[:100] + "...(%d chars)" % len(r)


def compare(a, b):
    ea, ga = scan(a)
    eb, gb = scan(b)
    diffs = []
    for p in sorted(set(ea) | set(eb)):
        if p not in eb:
            diffs.append("only in A: %r (%s)" % (p, ea[p]["type"]))
            continue
        if p not in ea:
            diffs.append("only in B: %r (%s)" % (p, eb[p]["type"]))
            continue
        x, y = ea[p], eb[p]
        for k in sorted(set(x) | set(y)):
            if k == "xattrs":
                xa, xb = x[k], y[k]
                for n in sorted(set(xa) | set(xb)):
                    if n not in xb:
                        diffs.append("%r: xattr %r only in A" % (p, n))
                    elif n not in xa:
                        diffs.append("%r: xattr %r only in B" % (p, n))
                    elif xa[n] != xb[n]:
                        diffs.append("%r: xattr %r: %s != %s"
                                     % (p, n, short(xa[n]), short(xb[n])))
            elif x.get(k) != y.get(k):
                diffs.append("%r: %s: %s != %s" % (p, k, short(x.get(k)), short(y.get(k))))
    if ga != gb:
        diffs.append("hard-link groups differ: %s != %s" % (short(ga), short(gb)))
    return len(ea), diffs


def main(argv):
    quiet = False
    if argv and argv[0] == "--quiet":
        quiet, argv = True, argv[1:]
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    n, diffs = compare(argv[0], argv[1])
    for d in diffs[:50]:
        print(d)
    if len(diffs) > 50:
        print("... and %d more differences" % (len(diffs) - 50))
    if not quiet:
        print("%d entries compared, %d differences" % (n, len(diffs)))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
