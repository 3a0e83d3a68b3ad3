#!/usr/bin/env python3
"""The canonical manifest of a tree: what the tests compare.

    manifest.py DIR [-o FILE]       write DIR's manifest (stdout by default)
    manifest.py --compare A B       exit 0 when manifests A and B are equal,
                                    else print each difference and exit 1
    manifest.py DIR --expect A      both at once: DIR's manifest (to -o FILE
                                    if given) compared with manifest file A

One JSON object: "format", then "entries" (one line per path, sorted by the
UTF-8 bytes of the path; the root is "/"), then "hardlinks" (the groups of
non-directories that share an inode, each sorted).  Every entry has path,
type (dir reg lnk chr blk fifo sock), mode (octal string, set-id and sticky
bits included), uid, gid, nlink, mtime (seconds, may be negative) and
mtime_nsec; regular files add size and sha256, symlinks size and target,
devices rdev [major, minor]; an entry with extended attributes (POSIX ACLs
included, as system.posix_acl_*) adds xattrs, a list of [name, length,
sha256 of the value] sorted by name.  Directory sizes, atime, ctime and
inode numbers are left out: they belong to the filesystem, not the tree.

Sparse files are read one data extent at a time (SEEK_DATA/SEEK_HOLE), the
holes hashed as zeros without being read (and a large hole's digest
remembered in $MANIFEST_CACHE when it is set).  Run as root, so that trusted.*
xattrs are listed and unreadable files can be read.  Names must be UTF-8.
"""
import argparse
import errno
import hashlib
import json
import os
import stat
import sys

FORMAT = "erofskit-manifest-1"
CHUNK = 1 << 20
ZEROS = memoryview(bytes(8 << 20))

TYPES = (
    (stat.S_ISDIR, "dir"),
    (stat.S_ISREG, "reg"),
    (stat.S_ISLNK, "lnk"),
    (stat.S_ISCHR, "chr"),
    (stat.S_ISBLK, "blk"),
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISSOCK, "sock"),
)


def type_of(mode):
    for test, name in TYPES:
        if test(mode):
            return name
    raise ValueError("unknown file type %o" % mode)


def hash_zeros(h, n):
    while n > 0:
        k = min(n, len(ZEROS))
        h.update(ZEROS[:k])
        n -= k


def hash_range(h, fd, start, end):
    """Hash bytes [start, end) of fd; a file that ends early is an error."""
    off = start
    while off < end:
        buf = os.pread(fd, min(CHUNK, end - off), off)
        if not buf:
            raise OSError(errno.EIO, "file shorter than its size at %d" % off)
        h.update(buf)
        off += len(buf)


def extents(fd, size):
    """The data extents [start, end) of fd, by SEEK_DATA/SEEK_HOLE; all of
    it where the filesystem cannot tell."""
    out = []
    off = 0
    while off < size:
        try:
            data = os.lseek(fd, off, os.SEEK_DATA)
        except OSError as e:
            if e.errno == errno.ENXIO:        # only a hole is left
                break
            if e.errno == errno.EINVAL:       # no hole support
                return [(0, size)]
            raise
        if data >= size:
            break
        hole = min(os.lseek(fd, data, os.SEEK_HOLE), size)
        if hole <= data:     # a filesystem's bug, which would loop here
            raise OSError(errno.EIO, "SEEK_HOLE from data at %d gave %d" % (data, hole))
        out.append((data, hole))
        off = hole
    return out


# Hashing a 5 GiB hole as zeros takes some 3 s, and the suite walks the
# fixture tree's sparse file dozens of times.  A file's bytes are fixed by
# its size and its data extents' offsets and bytes (holes read as zeros),
# so the full sha256 of a file with that signature is remembered in
# $MANIFEST_CACHE (one file per signature), set by lib.sh for a test run.
CACHE = os.environ.get("MANIFEST_CACHE")
CACHE_HOLES = 64 << 20


def file_sha256(path, size):
    """sha256 of a regular file, reading only its data extents."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        ext = extents(fd, size)
        holes = size - sum(end - start for start, end in ext)
        if not CACHE or holes < CACHE_HOLES:
            return full_sha256(fd, size, ext)
        sig = hashlib.sha256(b"%d" % size)
        for start, end in ext:
            part = hashlib.sha256()
            hash_range(part, fd, start, end)
            sig.update(b" %d %d %s" % (start, end, part.hexdigest().encode()))
        memo = os.path.join(CACHE, sig.hexdigest())
        try:
            with open(memo) as f:
                return f.read()
        except FileNotFoundError:
            pass
        digest = full_sha256(fd, size, ext)
        os.makedirs(CACHE, exist_ok=True)
        tmp = "%s.%d" % (memo, os.getpid())
        with open(tmp, "w") as f:
            f.write(digest)
        os.replace(tmp, memo)
        return digest
    finally:
        os.close(fd)


def full_sha256(fd, size, ext):
    """sha256 of size bytes of fd: the extents read, zeros between them."""
    h = hashlib.sha256()
    off = 0
    for start, end in ext:
        hash_zeros(h, start - off)
        hash_range(h, fd, start, end)
        off = end
    hash_zeros(h, size - off)
    return h.hexdigest()


def xattrs_of(path):
    out = []
    for name in os.listxattr(path, follow_symlinks=False):
        value = os.getxattr(path, name, follow_symlinks=False)
        out.append([name, len(value), hashlib.sha256(value).hexdigest()])
    return sorted(out)


def utf8(name, where):
    try:
        return name.decode("utf-8")
    except UnicodeDecodeError:
        sys.exit("manifest.py: %r under %s is not UTF-8" % (name, where))


def entry(path, rel):
    st = os.lstat(path)
    kind = type_of(st.st_mode)
    sec, nsec = divmod(st.st_mtime_ns, 10**9)
    e = {"path": rel, "type": kind, "mode": "%04o" % stat.S_IMODE(st.st_mode),
         "uid": st.st_uid, "gid": st.st_gid, "nlink": st.st_nlink,
         "mtime": sec, "mtime_nsec": nsec}
    if kind == "reg":
        e["size"] = st.st_size
        e["sha256"] = file_sha256(path, st.st_size)
    elif kind == "lnk":
        e["size"] = st.st_size
        e["target"] = utf8(os.readlink(path), rel)
    elif kind in ("chr", "blk"):
        e["rdev"] = [os.major(st.st_rdev), os.minor(st.st_rdev)]
    x = xattrs_of(path)
    if x:
        e["xattrs"] = x
    return e, st


def manifest(root):
    """The manifest of the tree at root, as a dict."""
    root = os.fsencode(root)
    entries = []
    inodes = {}
    todo = [(root, "/")]
    while todo:
        path, rel = todo.pop()
        e, st = entry(path, rel)
        entries.append(e)
        if e["type"] == "dir":
            for name in os.listdir(path):
                child = rel.rstrip("/") + "/" + utf8(name, rel)
                todo.append((os.path.join(path, name), child))
        elif st.st_nlink > 1:
            inodes.setdefault((st.st_dev, st.st_ino), []).append(rel)
    key = lambda p: p.encode("utf-8")  # noqa: E731
    entries.sort(key=lambda e: key(e["path"]))
    groups = sorted((sorted(g, key=key) for g in inodes.values() if len(g) > 1),
                    key=lambda g: key(g[0]))
    return {"format": FORMAT, "entries": entries, "hardlinks": groups}


def dumps(m):
    """The file form: one entry a line, keys sorted, UTF-8 as it is."""
    line = lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False)  # noqa: E731
    return ('{"format": %s,\n"entries": [\n%s\n],\n"hardlinks": %s}\n'
            % (line(m["format"]), ",\n".join(line(e) for e in m["entries"]),
               line(m["hardlinks"])))


def differences(a, b):
    """Every difference between manifests a and b, as lines of text."""
    out = []
    if a.get("format") != b.get("format"):
        out.append("format: %r != %r" % (a.get("format"), b.get("format")))
    ea = {e["path"]: e for e in a["entries"]}
    eb = {e["path"]: e for e in b["entries"]}
    for p in sorted(set(ea) | set(eb), key=lambda p: p.encode("utf-8")):
        if p not in eb:
            out.append("only in A: %s" % p)
        elif p not in ea:
            out.append("only in B: %s" % p)
        else:
            for k in sorted(set(ea[p]) | set(eb[p])):
                va, vb = ea[p].get(k, "(none)"), eb[p].get(k, "(none)")
                if va != vb:
                    out.append("%s: %s: %s != %s" % (p, k, json.dumps(va, ensure_ascii=False),
                                                     json.dumps(vb, ensure_ascii=False)))
    ha = [list(g) for g in a.get("hardlinks", [])]
    hb = [list(g) for g in b.get("hardlinks", [])]
    for g in ha:
        if g not in hb:
            out.append("hard-link group only in A: %s" % " ".join(g))
    for g in hb:
        if g not in ha:
            out.append("hard-link group only in B: %s" % " ".join(g))
    return out


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description="Canonical manifest of a tree.")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"),
                    help="compare two manifest files")
    ap.add_argument("-o", metavar="FILE", help="write the manifest to FILE")
    ap.add_argument("--expect", metavar="A",
                    help="compare the tree's manifest with manifest file A")
    ap.add_argument("dir", nargs="?", help="the tree")
    a = ap.parse_args()
    if a.compare:
        if a.dir or a.o or a.expect:
            ap.error("--compare takes two manifest files and nothing else")
        diff = differences(load(a.compare[0]), load(a.compare[1]))
        for d in diff:
            print(d)
        return 1 if diff else 0
    if not a.dir:
        ap.error("name a directory, or --compare A B")
    if not os.path.isdir(a.dir):
        sys.exit("manifest.py: %s is not a directory" % a.dir)
    text = dumps(manifest(a.dir))
    if a.o:
        with open(a.o, "w", encoding="utf-8") as f:
            f.write(text)
    elif not a.expect:
        sys.stdout.buffer.write(text.encode("utf-8"))
    if a.expect:
        # Through the file form, so that a tree compares exactly as its
        # written manifest would (JSON has no tuples, say).
        diff = differences(load(a.expect), json.loads(text))
        for d in diff:
            print(d)
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
