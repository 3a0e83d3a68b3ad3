#!/usr/bin/env python3
"""Build a corpus of crafted, damaged EROFS images.

    make-corpus.py [--case GLOB]... [--outside DIR] [--keep-work] OUTDIR

Base images are built with the erofskit binary ($EROFSKIT) from small trees
generated here, or taken from the upstream-made fixtures in
$EROFSKIT_FIXTURES/images when a feature exists only there (full
indexes, fragments, interlaced pclusters, encoded extents, long xattr
prefixes).  Structures are located with `erofskit dump --json` on the intact
base image and decoded here where dump does not reach (directory blocks,
compact index items, the packed inode).  Each case copies a base image and
damages one structure; the result is OUTDIR/NAME.img.  The same binary and
fixtures give the same corpus, byte for byte.  Nothing is written outside
OUTDIR (its subdirectory "work" holds the trees and base images while it
runs).

OUTDIR/index.json lists every case:

    name      the case (and image) name
    group     the structure damaged (directory, compressed, ...)
    what      what was done to the image
    expect    "corrupt": fsck must exit 1; "valid": the crafted form is one
              the kernel accepts: fsck must exit 0 and the kernel reads it
    damaged   the damaged path, or "image" when the image cannot be opened
    fsck      a regular expression (POSIX ERE, as grep -E) that fsck's
              standard error must match
    opens     whether the image still opens (erofskit mount can serve it)
    mount     how the damage shows through erofskit mount:
              {"path", "op", "errno"[, "names"][, "also_read"]}; op is
                read      open and read to the end
                pread     4 KiB O_DIRECT reads at every block (damage only
                          a read starting inside a cluster looks at)
                list      readdir
                lookup    lstat of each of "names" in path, before any
                          readdir: at least one fails
                stat, readlink
                xattrs    listxattr and getxattr of every name (and with
                          also_read, read the file too)
                none      the damage cannot be seen through the VFS
                mount     the image does not open: erofskit mount refuses it
              errno lists the acceptable error names
    intact    [[path, sha256], ...] regular files that must still read back
              and extract whole, and that fsck must not name
    kernel    (valid cases) files the kernel must read back: [[path, sha256]]
    extract_exit  (optional) the exit statuses fsck --extract may give, when
              not the same as fsck's (a valid image the target directory's
              filesystem cannot hold)

OUTDIR/index.txt is the same, one line per case, for people.

--outside DIR makes the hostile-extraction cases (group "hostile") point
their symlinks at DIR and DIR/canary; without it they point at
/tmp/erofskit-outside.  Two of them carry names that climb to, or are, the
absolute path /tmp/erofskit-corpus-escape: a correct extractor never
creates it.
"""
import argparse
import fnmatch
import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import sys

EROFSKIT = os.environ.get("EROFSKIT")
FIXTURES_DIR = os.environ.get("EROFSKIT_FIXTURES")
ESCAPE = "tmp/erofskit-corpus-escape"          # planted path, relative to /
EPOCH = 1700000000

S_IFREG = 0o100000
FT_REG, FT_DIR, FT_LNK = 1, 2, 7

# ----------------------------------------------------------------- bytes


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC_TABLE = _crc32c_table()


def crc32c(data, crc=0xFFFFFFFF):
    """CRC-32C as EROFS uses it: init ~0, no final xor."""
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def sha256(data):
    return hashlib.sha256(data).hexdigest()


class Image:
    """An image in memory with the few decoders the damage needs."""

    SB = 1024

    def __init__(self, path):
        with open(path, "rb") as f:
            self.b = bytearray(f.read())

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.b)

    # raw access
    def get(self, off, fmt):
        return struct.unpack_from("<" + fmt, self.b, off)[0]

    def put(self, off, fmt, value):
        struct.pack_into("<" + fmt, self.b, off, value)

    def write(self, off, data):
        if off + len(data) > len(self.b):
            raise ValueError("write past the end of the image")
        self.b[off:off + len(data)] = data

    # superblock
    @property
    def blkbits(self):
        return self.b[self.SB + 12]

    @property
    def blksz(self):
        return 1 << self.blkbits

    @property
    def meta_blkaddr(self):
        return self.get(self.SB + 40, "I")

    @property
    def root_nid(self):
        return self.get(self.SB + 14, "H")

    @property
    def incompat(self):
        return self.get(self.SB + 80, "I")

    @property
    def sb_size(self):
        return 128 + 16 * self.b[self.SB + 13]

    def fix_crc(self):
        """Recompute the superblock checksum (when the image has one)."""
        if not self.get(self.SB + 8, "I") & 1:
            return
        bs = self.blksz
        span = bs - 1024 if bs > 1024 else bs
        blk = bytearray(self.b[self.SB:self.SB + span])
        blk[4:8] = b"\0\0\0\0"
        self.put(self.SB + 4, "I", crc32c(blk))

    def append_blocks(self, n):
        """Grow the image by n zero blocks; returns the first new offset."""
        off = len(self.b)
        if off % self.blksz:
            raise ValueError("image size is not a block multiple")
        self.b += bytes(n * self.blksz)
        self.put(self.SB + 36, "I", len(self.b) // self.blksz)
        return off

    def nid_at(self, off):
        base = self.meta_blkaddr * self.blksz
        assert off >= base and (off - base) % 32 == 0
        return (off - base) // 32

    # inodes
    def inode(self, nid):
        off = self.meta_blkaddr * self.blksz + nid * 32
        fmt = self.get(off, "H")
        ext = fmt & 1
        ino = {"nid": nid, "off": off, "format": fmt, "extended": bool(ext),
               "layout": (fmt >> 1) & 7, "icount": self.get(off + 2, "H"),
               "mode": self.get(off + 4, "H"), "core": 64 if ext else 32}
        if ext:
            ino["size"] = self.get(off + 8, "Q")
        else:
            ino["size"] = self.get(off + 8, "I")
        ino["u"] = self.get(off + 16, "I")
        ic = ino["icount"]
        ino["xattr_size"] = 0 if ic == 0 else 12 + 4 * (ic - 1)
        ino["xattr_off"] = off + ino["core"]
        ino["data_off"] = ino["xattr_off"] + ino["xattr_size"]
        return ino

    def set_size(self, ino, size):
        if ino["extended"]:
            self.put(ino["off"] + 8, "Q", size)
        else:
            self.put(ino["off"] + 8, "I", size)

    # directories (flat layouts)
    def dir_blocks(self, ino):
        """[(image offset, valid bytes)] of a flat directory's blocks."""
        bs, size = self.blksz, ino["size"]
        nblk = (size + bs - 1) // bs
        out = []
        for i in range(nblk):
            valid = min(bs, size - i * bs)
            if ino["layout"] == 2 and i == nblk - 1:
                out.append((ino["data_off"], valid))
            elif ino["layout"] in (0, 2):
                out.append(((ino["u"] + i) * bs, valid))
            else:
                raise ValueError("directory layout %d not handled" % ino["layout"])
        return out

    def dir_entries(self, off, valid):
        blk = bytes(self.b[off:off + valid])
        n = struct.unpack_from("<H", blk, 8)[0] // 12
        ents = []
        for i in range(n):
            nid, nameoff, ftype = struct.unpack_from("<QHB", blk, 12 * i)
            if i + 1 < n:
                end = struct.unpack_from("<H", blk, 12 * (i + 1) + 8)[0]
            else:
                end = blk.find(b"\0", nameoff)
                end = valid if end < 0 else end
            ents.append([nid, ftype, blk[nameoff:end]])
        return ents

    def dir_write(self, off, valid, ents):
        """Encode entries into a directory block of `valid` bytes."""
        names = b"".join(e[2] for e in ents)
        need = 12 * len(ents) + len(names)
        if need > valid:
            raise ValueError("entries need %d bytes, the block has %d" % (need, valid))
        blk = bytearray(valid)
        nameoff = 12 * len(ents)
        for i, (nid, ftype, name) in enumerate(ents):
            struct.pack_into("<QHBB", blk, 12 * i, nid, nameoff, ftype, 0)
            blk[nameoff:nameoff + len(name)] = name
            nameoff += len(name)
        self.write(off, bytes(blk))

    # compressed files
    def zinfo(self, ino):
        h = (ino["data_off"] + 7) // 8 * 8
        z = {"header": h, "advise": self.get(h + 4, "H"),
             "alg": self.b[h + 6], "clusterbits": self.b[h + 7],
             "full": ino["layout"] == 1}
        z["lcbits"] = self.blkbits + (z["clusterbits"] & 15)
        z["nlc"] = (ino["size"] + (1 << z["lcbits"]) - 1) >> z["lcbits"]
        z["blocks"] = (ino["size"] + self.blksz - 1) // self.blksz
        z["index"] = h + 16 if z["full"] else h + 8
        return z

    def compact_pos(self, z, n):
        """(position, unit) of lcluster n in a compact index (spec 6.7)."""
        ebase = z["index"]
        a = ((32 - ebase % 32) // 4) % 8
        b = 0
        if z["advise"] & 1 and a < z["blocks"]:
            b = (z["blocks"] - a) // 16 * 16
        if n < a:
            return ebase + 4 * n, 4
        if n < a + b:
            return ebase + 4 * a + 2 * (n - a), 2
        return ebase + 4 * a + 2 * b + 4 * (n - a - b), 4

    def lcluster(self, z, n):
        """Decode lcluster n: dict with type, lo and where it lives."""
        lobits = max(z["lcbits"], 12)
        if z["full"]:
            off = z["index"] + 8 * n
            adv, cofs, blk = struct.unpack_from("<HHI", self.b, off)
            return {"type": adv & 3, "lo": cofs, "blkaddr": blk, "entry": off,
                    "d0": blk & 0xFFFF, "d1": blk >> 16}
        pos, unit = self.compact_pos(z, n)
        packsize = 8 if unit == 4 else 32
        start = pos // packsize * packsize
        i = (pos - start) // unit
        bits = 16 if unit == 4 else 14
        v = int.from_bytes(self.b[start:start + packsize - 4], "little") >> (i * bits)
        return {"type": (v >> lobits) & 3, "lo": v & ((1 << lobits) - 1),
                "pack": start, "packsize": packsize, "item": i, "unit": unit,
                "base": self.get(start + packsize - 4, "I"), "lobits": lobits}

    def set_lcluster(self, z, n, typ, lo):
        lc = self.lcluster(z, n)
        if z["full"]:
            self.put(lc["entry"], "H", typ)
            self.put(lc["entry"] + 2, "H", lo)
            return
        bits = 16 if lc["unit"] == 4 else 14
        start, size = lc["pack"], lc["packsize"] - 4
        v = int.from_bytes(self.b[start:start + size], "little")
        mask = ((1 << bits) - 1) << (lc["item"] * bits)
        item = ((lo | (typ << lc["lobits"])) << (lc["item"] * bits)) & mask
        v = (v & ~mask) | item
        self.write(start, v.to_bytes(size, "little"))

    def set_pack_base(self, z, n, base):
        lc = self.lcluster(z, n)
        self.put(lc["pack"] + lc["packsize"] - 4, "I", base)


# ------------------------------------------------------------ erofskit


def run(*args, **kw):
    return subprocess.run(args, check=True, stdout=subprocess.PIPE, **kw).stdout


def dump(img, path):
    """`erofskit dump --json --path` of an intact image (trusted there)."""
    return json.loads(run(EROFSKIT, "dump", "--json", "--path", path, img))


# ----------------------------------------------------------- the trees


def text(r, words, n):
    out = []
    size = 0
    while size < n:
        w = r.choice(words)
        out.append(w)
        size += len(w) + 1
    return (" ".join(out)).encode()[:n]


def make_tree(root):
    """The tree every built base image holds.  Deterministic."""
    r = random.Random(20240601)
    words = ["".join(r.choice("abcdefghijklmnop") for _ in range(r.randint(2, 9)))
             for _ in range(400)]

    def put(rel, data, mode=0o644):
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        os.chmod(p, mode)

    os.makedirs(root)
    put("a.txt", b"hello world\n")
    put("bystander.txt", text(r, words, 40000))
    put("victim.txt", text(r, words, 200000))
    dup = text(r, words, 100000)
    put("dup1.txt", dup)
    put("dup2.txt", dup)
    for n in ("alpha", "bravo", "charl"):
        put("dir/" + n, (n + "\n").encode() * 3)
    put("dir/sub/leaf.txt", b"leaf\n")
    put("dir/sub/deeper/z.txt", b"zzz\n")
    # Room for longer names: a 200-byte name, and a two-block directory.
    put("hostile/" + "L" * 200, b"long name\n")
    put("hostile/keep.txt", b"keep\n")
    put("hostile/zz-dir/inner.txt", b"inner\n")
    for i, n in enumerate(TWOBLK):
        put("twoblk/" + n, b"%d\n" % i)
    os.makedirs(os.path.join(root, "links"))
    os.symlink("../a.txt", os.path.join(root, "links/short"))
    os.symlink("x" * 3000, os.path.join(root, "links/long"))
    os.symlink("y/" * 2000, os.path.join(root, "links/p4000"))
    put("xattrs/inl", b"inl\n")
    os.setxattr(os.path.join(root, "xattrs/inl"), "user.one", b"1" * 10)
    os.setxattr(os.path.join(root, "xattrs/inl"), "user.two", b"2" * 100)
    for i in range(3):
        put("xattrs/s%d" % i, b"s\n")
        os.setxattr(os.path.join(root, "xattrs/s%d" % i), "user.shared", b"S" * 20)
    put("owners/ext", text(r, words, 10000))
    os.chown(os.path.join(root, "owners/ext"), 70000, 70001)
    put("owners/xdir/in.txt", b"in\n")
    os.chown(os.path.join(root, "owners/xdir"), 70000, 70001)
    with open(os.path.join(root, "sparse.bin"), "wb") as f:
        f.write(text(r, words, 8192))
        f.seek(4 << 20)
        f.write(text(r, words, 8192))
    for dirpath, dirnames, _ in os.walk(root):
        for d in dirnames:
            os.chmod(os.path.join(dirpath, d), 0o755)
    os.chmod(root, 0o755)


def make_small_tree(root):
    """One compressible file: an image of a few blocks."""
    r = random.Random(7)
    words = ["".join(r.choice("qrstuvwxyz") for _ in range(r.randint(2, 9)))
             for _ in range(100)]
    os.makedirs(root)
    os.chmod(root, 0o755)
    with open(os.path.join(root, "small.txt"), "wb") as f:
        f.write(text(r, words, 20000))
    os.chmod(os.path.join(root, "small.txt"), 0o644)


# Each victim's own extents are damaged: its data in pclusters of its own,
# not in the packed inode (the layouts compressed images get by default;
# the upstream fixtures below have fragments).
OWN = "-E^fragments,^dedupe"
BASES = {
    # name: mkfs options
    "plain": [],
    "lz4": ["-zlz4hc", "-C16384", OWN],
    "lz4fast": ["-zlz4", "-C16384", OWN],
    "zstd": ["-zzstd", "-C16384", OWN],
    "lzma": ["-zlzma", "-C16384", OWN],
    "deflate": ["-zdeflate", "-C16384", OWN],
    "lz4-512": ["-b", "512", "-zlz4hc", OWN],
    "zstd-small": ["-zzstd", OWN],       # from the small tree
}

FIXTURES = {
    "legacy": "lz4hc-legacy.img",
    "fragments": "zstd-fragments-dedupe.img",
    "allfragments": "lzma-allfragments-1m.img",
    "48bit": "zstd-48bit.img",
    "prefix": "long-xattr-prefix.img",
}


class Corpus:
    def __init__(self, outdir, outside):
        self.out = outdir
        self.outside = outside
        self.work = os.path.join(outdir, "work")
        self.cases = []
        self.bases = {}

    def tree(self, small=False):
        src = os.path.join(self.work, "src-small" if small else "src")
        if not os.path.isdir(src):
            (make_small_tree if small else make_tree)(src)
        return src

    def base(self, name):
        """Path of a pristine base image (built or fixture)."""
        if name in self.bases:
            return self.bases[name]
        if name in FIXTURES:
            if not FIXTURES_DIR:
                sys.exit("make-corpus.py: EROFSKIT_FIXTURES is not set")
            path = os.path.join(FIXTURES_DIR, "images", FIXTURES[name])
            if not os.path.isfile(path):
                sys.exit("make-corpus.py: no fixture image %s" % path)
        else:
            path = os.path.join(self.work, name + ".img")
            run(EROFSKIT, "mkfs", "-q", "-T", str(EPOCH), *BASES[name], path,
                self.tree(small=name.endswith("-small")))
        self.bases[name] = path
        return path

    def inode_root(self, base):
        return Image(self.base(base)).root_nid

    def fixture_sha(self, name, path):
        man = os.path.join(FIXTURES_DIR, "images",
                           FIXTURES[name].replace(".img", ".manifest.json"))
        with open(man) as f:
            for e in json.load(f)["entries"]:
                if e["path"] == path:
                    return e["sha256"]
        raise KeyError(path)

    def intact(self, base, paths):
        if base in FIXTURES:
            return [[p, self.fixture_sha(base, p)] for p in paths]
        src = self.tree(small=base.endswith("-small"))
        out = []
        for p in paths:
            with open(src + p, "rb") as f:
                out.append([p, sha256(f.read())])
        return out

    def add(self, name, base, img, what, group, damaged, fsck, mount=None,
            intact=(), expect="corrupt", opens=True, kernel=None,
            extract_exit=None):
        img.save(os.path.join(self.out, name + ".img"))
        case = {"name": name, "image": name + ".img", "group": group,
                "what": what, "expect": expect, "damaged": damaged,
                "fsck": fsck, "opens": opens,
                "mount": mount or {"path": damaged, "op": "read", "errno": ["EIO"]},
                "intact": self.intact(base, intact)}
        if kernel is not None:
            case["kernel"] = self.intact(base, kernel)
        if extract_exit is not None:
            case["extract_exit"] = extract_exit
        self.cases.append(case)

    def finish(self):
        with open(os.path.join(self.out, "index.json"), "w") as f:
            json.dump(self.cases, f, indent=1, sort_keys=True)
            f.write("\n")
        with open(os.path.join(self.out, "index.txt"), "w") as f:
            for c in self.cases:
                f.write("%-34s %-8s %-30s fsck ~ /%s/  %s\n" % (
                    c["name"], c["expect"], c["damaged"], c["fsck"], c["what"]))


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def P(path):
    """Regex for a path at the start of an fsck problem line."""
    return "erofskit fsck: " + path.replace(".", "\\.") + " \\(nid [0-9]+\\): .*"


COMMON = ["/a.txt", "/bystander.txt"]
TWOBLK = ["n%03d-" % i + "x" * 115 for i in range(40)]


def inode_of(c, base, path):
    b = c.base(base)
    img = Image(b)
    return b, img, img.inode(dump(b, path)["nid"])


# ------------------------------------------------------------ directories
# /dir holds ".", "..", alpha, bravo, charl, sub (one inline block);
# /twoblk holds 40 long names in two blocks.

DIR_INTACT = COMMON + ["/hostile/keep.txt", "/xattrs/inl"]


def dir_edit(c, name, dirpath, what, regex, edit, mount, block=0,
             intact=DIR_INTACT, base="plain", at=None):
    """Edit block `block` of directory dirpath.  `at` is the damaged path
    fsck must name when it is not the directory (an entry of it)."""
    b, img, ino = inode_of(c, base, dirpath)
    off, valid = img.dir_blocks(ino)[block]
    ents = img.dir_entries(off, valid)
    edit(img, ents, off, valid)
    at = at or dirpath
    c.add(name, base, img, what, "directory", at, P(at) + regex,
          mount=mount, intact=intact)


def nid(c, path, base="plain"):
    return dump(c.base(base), path)["nid"]


def by_name(ents, name):
    for e in ents:
        if e[2] == name:
            return e
    raise KeyError(name)


@case
def directories(c):
    def nameoff0(img, ents, off, valid):
        img.put(off + 8, "H", img.blksz + 8)
    dir_edit(c, "dir-nameoff0-beyond-block", "/dir",
             "the first dirent's nameoff is past the block size",
             "directory .*first name offset", nameoff0,
             {"path": "/dir", "op": "list", "errno": ["EIO"]})

    def nameoff_past(img, ents, off, valid):
        img.put(off + 12 * 3 + 8, "H", valid + 40)
    dir_edit(c, "dir-nameoff-beyond-names", "/dir",
             "a middle dirent's nameoff points past the name area",
             "directory .*name offset", nameoff_past,
             {"path": "/dir", "op": "list", "errno": ["EIO"]})

    def nameoff_back(img, ents, off, valid):
        img.put(off + 12 * 4 + 8, "H", img.get(off + 12 * 2 + 8, "H"))
    dir_edit(c, "dir-nameoff-backwards", "/dir",
             "a dirent's nameoff goes back to an earlier name",
             "directory .*name offset", nameoff_back,
             {"path": "/dir", "op": "list", "errno": ["EIO"]})

    dirnid = nid(c, "/dir")

    def self_loop(img, ents, off, valid):
        by_name(ents, b"sub")[0] = dirnid
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-contains-itself", "/dir",
             "the entry sub points back at /dir itself",
             "directory reached twice", self_loop,
             {"path": "/dir/sub", "op": "stat", "errno": ["ELOOP"]}, at="/dir/sub")

    rootnid = c.inode_root("plain")

    def ancestor(img, ents, off, valid):
        by_name(ents, b"deeper")[0] = rootnid
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-contains-ancestor", "/dir/sub",
             "the entry deeper in /dir/sub points at the root",
             "directory reached twice", ancestor,
             {"path": "/dir/sub/deeper", "op": "stat", "errno": ["EIO"]},
             at="/dir/sub/deeper")

    def unsorted(img, ents, off, valid):
        a, z = by_name(ents, b"alpha"), by_name(ents, b"charl")
        a[2], z[2] = z[2], a[2]
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-unsorted", "/dir", "names alpha and charl swapped",
             "names not in strictly increasing order", unsorted,
             {"path": "/dir", "op": "list", "errno": ["EIO"]})

    def slash(img, ents, off, valid):
        by_name(ents, b"bravo")[2] = b"br/vo"
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-name-slash", "/dir", "the name bravo became br/vo",
             "name contains '/'", slash,
             {"path": "/dir", "op": "list", "errno": ["EIO"]})

    def extra_dotdot(img, ents, off, valid):
        e = by_name(ents, b"alpha")
        e[0], e[1], e[2] = nid(c, "/dir/sub"), FT_DIR, b".."
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-extra-dotdot", "/dir",
             "alpha replaced by a second \"..\" entry pointing at /dir/sub",
             "names not in strictly increasing order", extra_dotdot,
             {"path": "/dir", "op": "list", "errno": ["EIO"]})

    def extra_dot(img, ents, off, valid):
        e = by_name(ents, b"alpha")
        e[0], e[1], e[2] = nid(c, "/dir/sub"), FT_DIR, b"."
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-extra-dot", "/dir",
             "alpha replaced by a second \".\" entry pointing at /dir/sub",
             "names not in strictly increasing order", extra_dot,
             {"path": "/dir", "op": "list", "errno": ["EIO"]})

    def dot_wrong(img, ents, off, valid):
        by_name(ents, b".")[0] = nid(c, "/dir/sub")
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-dot-wrong-nid", "/dir", "\".\" points at /dir/sub",
             "\"\\.\" points to nid", dot_wrong,
             {"path": "/dir", "op": "none", "errno": []})

    def dotdot_wrong(img, ents, off, valid):
        by_name(ents, b"..")[0] = nid(c, "/dir/sub/deeper")
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-dotdot-wrong-nid", "/dir/sub",
             "\"..\" of /dir/sub points at /dir/sub/deeper",
             "\"\\.\\.\" points to nid", dotdot_wrong,
             {"path": "/dir/sub", "op": "none", "errno": []})

    def no_dot(img, ents, off, valid):
        by_name(ents, b".")[2] = b"-"
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-dot-renamed", "/dir",
             "\".\" renamed \"-\": no \".\", and an entry that is the directory itself",
             "directory has 0 \"\\.\" and 1 \"\\.\\.\" entries", no_dot,
             {"path": "/dir/-", "op": "stat", "errno": ["ELOOP"]})

    def bad_type(img, ents, off, valid):
        by_name(ents, b"bravo")[1] = 9
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-bad-filetype", "/dir", "bravo has file type 9",
             "invalid file type", bad_type,
             {"path": "/dir", "op": "list", "errno": ["EIO"]})

    def type_mismatch(img, ents, off, valid):
        by_name(ents, b"bravo")[1] = FT_DIR
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-type-mismatch", "/dir",
             "bravo (a regular file) is typed as a directory",
             "directory entry type 2 does not match", type_mismatch,
             {"path": "/dir/bravo", "op": "none", "errno": []}, at="/dir/bravo")

    def nid_past(img, ents, off, valid):
        by_name(ents, b"bravo")[0] = 1 << 40
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-nid-past-end", "/dir", "bravo's nid points past the image",
             "past the end", nid_past,
             {"path": "/dir/bravo", "op": "stat", "errno": ["EIO"]}, at="/dir/bravo")

    # Two blocks: each sorted, but not in order across blocks.
    def across(img, ents, off, valid):
        e = ents[0]
        e[2] = b"a" + e[2][1:]
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-unsorted-across-blocks", "/twoblk",
             "the first name of the second block sorts before the first block",
             "(order|sorted)", across,
             {"path": "/twoblk", "op": "lookup", "errno": ["ENOENT"],
              "names": TWOBLK}, block=1)

    def dotdot_block(img, ents, off, valid):
        e = ents[0]
        e[0], e[1], e[2] = nid(c, "/dir"), FT_DIR, b".."
        img.dir_write(off, valid, ents)
    dir_edit(c, "dir-extra-dotdot-second-block", "/twoblk",
             "the second block starts with an extra \"..\" pointing at /dir",
             "(\"\\.\\.\"|order|sorted)", dotdot_block,
             {"path": "/twoblk", "op": "lookup", "errno": ["ENOENT"],
              "names": TWOBLK}, block=1)

    def dup_block(img, ents, off, valid):
        prev = img.dir_entries(*img.dir_blocks(ino_twoblk)[0])[-1]
        ents[0][2] = prev[2]
        img.dir_write(off, valid, ents)
    ino_twoblk = Image(c.base("plain")).inode(nid(c, "/twoblk"))
    dir_edit(c, "dir-duplicate-across-blocks", "/twoblk",
             "the second block starts with the last name of the first block",
             "(order|sorted|twice|duplicate)", dup_block,
             {"path": "/twoblk", "op": "none", "errno": []}, block=1)


# ---------------------------------------------------------------- hostile
# Images that try to make an extractor write outside its directory.

HOSTILE_INTACT = COMMON + ["/dir/alpha", "/xattrs/inl"]


def with_symlink(c, img, target):
    """Turn /links/long into a symlink to `target`; returns its nid."""
    ino = img.inode(nid(c, "/links/long"))
    t = target.encode()
    assert ino["layout"] == 2 and len(t) < 3000
    img.write(ino["data_off"], t)
    img.set_size(ino, len(t))
    return ino["nid"]


@case
def hostile(c):
    b = c.base("plain")
    for name, newname, what in (
            ("hostile-name-dotdot-slash", "../" * 16 + ESCAPE,
             "an entry named ../../(...)/tmp/erofskit-corpus-escape"),
            ("hostile-name-absolute", "/" + ESCAPE,
             "an entry named /tmp/erofskit-corpus-escape")):
        img = Image(b)
        ino = img.inode(nid(c, "/hostile"))
        (off, valid), = img.dir_blocks(ino)
        ents = img.dir_entries(off, valid)
        by_name(ents, b"L" * 200)[2] = newname.encode()
        img.dir_write(off, valid, ents)
        c.add(name, "plain", img, what, "hostile", "/hostile",
              P("/hostile") + "name contains '/'",
              mount={"path": "/hostile", "op": "list", "errno": ["EIO"]},
              intact=HOSTILE_INTACT)

    # A ".." entry the block order check cannot see (it starts the second
    # block of a directory that is made the root): followed, it would put
    # /dir's files beside the extraction directory.
    img = Image(b)
    twoblk = img.inode(nid(c, "/twoblk"))
    assert twoblk["nid"] < 0x10000
    (o1, v1) = img.dir_blocks(twoblk)[1]
    e1 = img.dir_entries(o1, v1)
    e1[0][0], e1[0][1], e1[0][2] = nid(c, "/dir"), FT_DIR, b".."
    img.dir_write(o1, v1, e1)
    img.put(Image.SB + 14, "H", twoblk["nid"])
    img.fix_crc()
    c.add("hostile-dotdot-above-root", "plain", img,
          "the root is /twoblk, whose second block starts with a \"..\" "
          "directory entry pointing at /dir", "hostile", "/",
          P("/") + "(\"\\.\\.\"|order|sorted)",
          mount={"path": "/", "op": "lookup", "errno": ["ENOENT"], "names": TWOBLK},
          intact=[])

    # Two blocks of /twoblk: the last name of the first block comes again
    # as the first name of the second block, first as a symlink to a
    # directory outside, then as something that would be written through
    # it.  Names must be unique: the image is corrupt.
    twoblk = Image(b).inode(nid(c, "/twoblk"))
    for name, target, second, what in (
            ("hostile-symlink-then-dir", c.outside, "dir",
             "a symlink to %s, then a directory of the same name holding "
             "inner.txt" % c.outside),
            ("hostile-symlink-then-file", c.outside + "/canary", "file",
             "a symlink to %s/canary, then a regular file of the same name" % c.outside),
            ("hostile-symlink-then-hardlink", c.outside + "/canary", "link",
             "a symlink to %s/canary, then a hard link to /a.txt of the same "
             "name" % c.outside)):
        img = Image(b)
        lnk = with_symlink(c, img, target)
        (o0, v0), (o1, v1) = img.dir_blocks(twoblk)
        e0, e1 = img.dir_entries(o0, v0), img.dir_entries(o1, v1)
        e0[-1][0], e0[-1][1] = lnk, FT_LNK
        e1[0][2] = e0[-1][2]
        if second == "dir":
            # /hostile/zz-dir moves here: out of /hostile, ".." to /twoblk.
            zz = img.inode(nid(c, "/hostile/zz-dir"))
            hdir = img.inode(nid(c, "/hostile"))
            (ho, hv), = img.dir_blocks(hdir)
            img.dir_write(ho, hv, [e for e in img.dir_entries(ho, hv)
                                   if e[2] != b"zz-dir"])
            (zo, zv), = img.dir_blocks(zz)
            ze = img.dir_entries(zo, zv)
            by_name(ze, b"..")[0] = twoblk["nid"]
            img.dir_write(zo, zv, ze)
            e1[0][0], e1[0][1] = zz["nid"], FT_DIR
        elif second == "link":
            e1[0][0], e1[0][1] = nid(c, "/a.txt"), FT_REG
        img.dir_write(o0, v0, e0)
        img.dir_write(o1, v1, e1)
        c.add(name, "plain", img, what, "hostile", "/twoblk",
              P("/twoblk") + "(order|sorted|twice|duplicate)",
              mount={"path": "/twoblk", "op": "none", "errno": []},
              intact=HOSTILE_INTACT)


# ----------------------------------------------------------------- inodes


def inode_edit(c, name, base, path, what, regex, edit, mount=None,
               intact=COMMON, group="inode"):
    b, img, ino = inode_of(c, base, path)
    edit(img, ino)
    c.add(name, base, img, what, group, path, P(path) + regex,
          mount=mount, intact=intact)


@case
def inodes(c):
    inode_edit(c, "inode-unknown-format-bit", "plain", "/dir/bravo",
               "i_format bit 5 set", "unsupported i_format",
               lambda img, ino: img.put(ino["off"], "H", ino["format"] | 0x20),
               {"path": "/dir/bravo", "op": "stat", "errno": ["EIO"]})
    # DOT_OMITTED on a directory that stores its ".": two of them.
    inode_edit(c, "dir-dot-omitted-and-stored", "plain", "/dir",
               "i_format bit 4 (DOT_OMITTED) on a directory that stores \".\"",
               "directory has 2 \"\\.\" and 1 \"\\.\\.\" entries",
               lambda img, ino: img.put(ino["off"], "H", ino["format"] | 0x10),
               {"path": "/dir", "op": "none", "errno": []}, group="directory")
    inode_edit(c, "inode-unknown-layout", "plain", "/dir/bravo",
               "data layout 6", "unsupported data layout",
               lambda img, ino: img.put(ino["off"], "H", (ino["format"] & 1) | (6 << 1)),
               {"path": "/dir/bravo", "op": "stat", "errno": ["EIO"]})
    inode_edit(c, "inode-bad-mode", "plain", "/dir/bravo",
               "mode type 0170000 (no such file type)", "invalid file type in mode",
               lambda img, ino: img.put(ino["off"] + 4, "H", 0o170644),
               {"path": "/dir/bravo", "op": "stat", "errno": ["EIO"]})
    # i_size near 2^63 on every layout that can hold it.
    inode_edit(c, "isize-huge-flat", "plain", "/owners/ext",
               "extended flat file with i_size 2^63-1",
               "(past the end|crosses a block)",
               lambda img, ino: img.set_size(ino, (1 << 63) - 1))
    inode_edit(c, "isize-negative", "plain", "/owners/ext",
               "extended inode with i_size 2^63+100 (negative as loff_t)",
               "negative i_size",
               lambda img, ino: img.set_size(ino, (1 << 63) + 100))
    inode_edit(c, "isize-huge-compressed", "lz4", "/owners/ext",
               "compressed extended inode with i_size 2^63-4096",
               "(past the end|index|extent|lcluster)",
               lambda img, ino: img.set_size(ino, (1 << 63) - 4096))

    def hole(img, ino):
        img.put(ino["off"], "H", 1)                 # extended, flat plain
        img.put(ino["off"] + 6, "H", 0xFFFF)        # start block: 48-bit
        img.put(ino["off"] + 16, "I", 0xFFFFFFFF)   # all ones = no data
        img.set_size(ino, 1 << 62)
    b, img, ino = inode_of(c, "plain", "/owners/ext")
    hole(img, ino)
    c.add("isize-huge-hole", "plain", img,
          "a 4 EiB file that is one hole (flat, null start block: valid since "
          "Linux 6.15, the kernel reads it); fsck has nothing to read; an "
          "extraction may fail only because the target cannot hold the size",
          "inode", "/owners/ext", "clean", expect="valid",
          mount={"path": "/owners/ext", "op": "none", "errno": []},
          intact=COMMON, kernel=[], extract_exit=[0, 2])
    inode_edit(c, "isize-huge-dir", "plain", "/owners/xdir",
               "extended directory with i_size 2^62",
               "(past the end|crosses a block)",
               lambda img, ino: img.set_size(ino, 1 << 62),
               {"path": "/owners/xdir", "op": "list", "errno": ["EIO"]})
    inode_edit(c, "isize-huge-chunked", "plain", "/sparse.bin",
               "chunk-based file with i_size 4 GiB - 1 (its chunk table runs off the image)",
               "(past the end|chunk)",
               lambda img, ino: img.set_size(ino, (1 << 32) - 1))


# --------------------------------------------------------------- symlinks


@case
def symlinks(c):
    inode_edit(c, "symlink-longer-than-pathmax", "plain", "/links/p4000",
               "symlink i_size 5000 (> PATH_MAX and > the block)",
               "symlink length 5000",
               lambda img, ino: img.set_size(ino, 5000),
               {"path": "/links/p4000", "op": "readlink", "errno": ["EIO"]},
               group="symlink")
    inode_edit(c, "symlink-inline-crosses-block", "plain", "/links/long",
               "inline symlink grown to 4080 bytes: its tail crosses the block end",
               "crosses a block boundary",
               lambda img, ino: img.set_size(ino, 4080),
               {"path": "/links/long", "op": "readlink", "errno": ["EIO"]},
               group="symlink")
    inode_edit(c, "symlink-empty", "plain", "/links/short",
               "symlink i_size 0", "symlink length 0",
               lambda img, ino: img.set_size(ino, 0),
               {"path": "/links/short", "op": "readlink", "errno": ["EIO"]},
               group="symlink")
    inode_edit(c, "symlink-nul", "plain", "/links/short",
               "a NUL byte inside the target", "contains NUL",
               lambda img, ino: img.write(ino["data_off"] + 2, b"\0"),
               {"path": "/links/short", "op": "readlink", "errno": ["EIO"]},
               group="symlink")


# ----------------------------------------------------------------- xattrs


def xattr_case(c, name, path, what, regex, edit, read_fails=False):
    mount = {"path": path, "op": "xattrs", "errno": ["EIO"]}
    if read_fails:
        mount["also_read"] = True
    inode_edit(c, name, "plain", path, what, regex, edit, mount, group="xattr")


@case
def xattrs(c):
    xattr_case(c, "xattr-icount-huge", "/xattrs/inl",
               "i_xattr_icount 65535: a 256 KiB body running off the image",
               "(xattr|past the end)",
               lambda img, ino: img.put(ino["off"] + 2, "H", 0xFFFF), True)
    xattr_case(c, "xattr-icount-one", "/xattrs/inl",
               "i_xattr_icount 1: a body that is only a header",
               "only a header",
               lambda img, ino: img.put(ino["off"] + 2, "H", 1))
    xattr_case(c, "xattr-shared-count-overflow", "/xattrs/inl",
               "h_shared_count 200 in a 140-byte body",
               "shared xattr ids overflow",
               lambda img, ino: img.write(ino["xattr_off"] + 4, b"\xc8"))
    xattr_case(c, "xattr-entry-overflow", "/xattrs/inl",
               "the first entry's value size is 65535",
               "overflows the [0-9]+-byte body",
               lambda img, ino: img.put(ino["xattr_off"] + 12 + 2, "H", 0xFFFF))
    xattr_case(c, "xattr-name-overflow", "/xattrs/inl",
               "the last entry's name length is 255",
               "overflows the [0-9]+-byte body",
               lambda img, ino: img.write(
                   ino["xattr_off"] + 12 + (4 + 3 + 10 + 3) // 4 * 4, b"\xff"))
    xattr_case(c, "xattr-shared-id-past-end", "/xattrs/s1",
               "the shared xattr id points past the image",
               "shared xattr",
               lambda img, ino: img.put(ino["xattr_off"] + 12, "I", 0x3FFFFFFF))
    xattr_case(c, "xattr-undefined-long-prefix", "/xattrs/inl",
               "an entry uses long prefix 5 in an image without long prefixes",
               "long prefix 5",
               lambda img, ino: img.write(ino["xattr_off"] + 12 + 1, b"\x85"))


# ------------------------------------------------------------- compressed

Z_INTACT = COMMON + ["/dup1.txt"]


def zcase(c, name, base, path, what, regex, edit, intact=Z_INTACT,
          group="compressed", mount=None):
    b, img, ino = inode_of(c, base, path)
    z = img.zinfo(ino)
    ext = dump(b, path)["extents"]
    edit(img, ino, z, ext)
    c.add(name, base, img, what, group, path, P(path) + regex, mount=mount,
          intact=intact)


def head_lcn(z, e):
    return e["logical"] >> z["lcbits"]


def first_nonhead_after(img, z, lcn):
    lc = img.lcluster(z, lcn + 1)
    assert lc["type"] == 2, "no NONHEAD after the head"
    return lcn + 1, lc


@case
def compressed(c):
    def past_end(img, ino, z, ext):
        img.set_pack_base(z, head_lcn(z, ext[1]), 0x00FFFFF0)
    zcase(c, "zext-pcluster-past-end", "lz4", "/victim.txt",
          "the pack base of the second extent points 64 GiB into a small image",
          "pcluster past the end of the image", past_end)

    def overflow(img, ino, z, ext):
        img.set_pack_base(z, head_lcn(z, ext[1]), 0xFFFFFFFF)
    zcase(c, "zext-address-overflow", "lz4", "/victim.txt",
          "pack base 0xffffffff: base + block count overflows 32 bits",
          "pcluster past the end of the image", overflow)

    def cblk_huge(img, ino, z, ext):
        n, lc = first_nonhead_after(img, z, head_lcn(z, ext[1]))
        assert lc["lo"] & 0x800
        img.set_lcluster(z, n, 2, 0x800 | 2047)
    zcase(c, "zext-pcluster-over-1m", "lz4", "/victim.txt",
          "block count 2047 (an 8 MiB pcluster)",
          "pcluster larger than 1 MiB", cblk_huge)

    def cblk_past(img, ino, z, ext):
        n, lc = first_nonhead_after(img, z, head_lcn(z, ext[-1]))
        img.set_lcluster(z, n, 2, 0x800 | 255)
    zcase(c, "zext-pcluster-length-past-end", "lz4", "/victim.txt",
          "the last pcluster claims 255 blocks, past the end of the image",
          "pcluster past the end of the image", cblk_past)

    def lookback_zero(img, ino, z, ext):
        n = head_lcn(z, ext[1]) + 2
        assert img.lcluster(z, n)["type"] == 2
        img.set_lcluster(z, n, 2, 0)
    zcase(c, "zext-lookback-zero", "lz4", "/victim.txt",
          "a NONHEAD lcluster with look-back distance 0 (only reads that "
          "start inside it look back)",
          "(look-back|inconsistent)", lookback_zero,
          mount={"path": "/victim.txt", "op": "pread", "errno": ["EIO"]})

    def lookback_far(img, ino, z, ext):
        n = head_lcn(z, ext[1]) + 2
        img.set_lcluster(z, n, 2, 2000)
    zcase(c, "zext-lookback-too-far", "lz4", "/victim.txt",
          "a NONHEAD lcluster looks back 2000 lclusters, before the file start",
          "(look-back|inconsistent)", lookback_far,
          mount={"path": "/victim.txt", "op": "pread", "errno": ["EIO"]})

    def head_late(img, ino, z, ext):
        img.set_lcluster(z, 0, 1, 100)
    zcase(c, "zext-first-head-late", "lz4", "/victim.txt",
          "lcluster 0 starts its extent at byte 100: bytes 0..99 have no extent",
          "first lcluster starts after offset 0", head_late)

    def cofs_512(img, ino, z, ext):
        n = head_lcn(z, ext[1])
        lc = img.lcluster(z, n)
        assert lc["type"] == 1
        img.set_lcluster(z, n, 1, 600)
    zcase(c, "zext-clusterofs-over-cluster", "lz4-512", "/victim.txt",
          "512-byte lclusters: a head with clusterofs 600",
          "cluster offset beyond the cluster size", cofs_512)

    def cofs_full(img, ino, z, ext):
        n = head_lcn(z, ext[1])
        img.set_lcluster(z, n, 1, 4096)
    zcase(c, "zext-clusterofs-full-index", "legacy", "/data/log-2m.log",
          "full index: a head with clusterofs 4096 (the cluster size)",
          "cluster offset beyond the cluster size", cofs_full,
          intact=["/data/random-512k.bin", "/sizes/size-300000"])

    def blkaddr_full(img, ino, z, ext):
        lc = img.lcluster(z, head_lcn(z, ext[1]))
        img.put(lc["entry"] + 4, "I", 0xFFFFFFFF)
    zcase(c, "zext-blkaddr-overflow-full-index", "legacy", "/data/log-2m.log",
          "full index: a head at block 0xffffffff",
          "pcluster past the end of the image", blkaddr_full,
          intact=["/data/random-512k.bin", "/sizes/size-300000"])

    def delta1_full(img, ino, z, ext):
        n, lc = first_nonhead_after(img, z, head_lcn(z, ext[1]))
        img.put(lc["entry"] + 6, "H", 0xFFFF)
    zcase(c, "zext-delta1-overrun-full-index", "legacy", "/data/log-2m.log",
          "full index: delta1 65535 makes an extent run to the end of the file",
          "(extent at offset [0-9]+ .*expected [0-9]+|index of offset [0-9]+ leads to extent)",
          delta1_full,
          intact=["/data/random-512k.bin", "/sizes/size-300000"])

    def p0_overflow(img, ino, z, ext):
        img.put(z["header"] + 8, "Q", 0xFFFFFFFFFFFFF000)
    zcase(c, "zext-encoded-address-overflow", "48bit", "/data/log-2m.log",
          "48-bit encoded extents: physical start 2^64-4096 (sums wrap)",
          "(past the end|out of range|overflow)", p0_overflow,
          intact=["/data/random-512k.bin", "/sizes/size-300000"])

    def encoded_len(img, ino, z, ext):
        plen = img.get(z["header"] + 16, "I")
        img.put(z["header"] + 16, "I", (plen & ~0x1FFFFF) | 0x1FFFFF)
    zcase(c, "zext-encoded-length-over-1m", "48bit", "/data/log-2m.log",
          "48-bit encoded extents: physical length 2 MiB - 1",
          "(above 1 MiB|past the end)", encoded_len,
          intact=["/data/random-512k.bin", "/sizes/size-300000"])

    # Overlapping pclusters (no dedupe feature).
    def overlap(img, ino, z, ext):
        n = head_lcn(z, ext[2])
        want = ext[1]["physical"] // img.blksz
        have = ext[2]["physical"] // img.blksz
        lc = img.lcluster(z, n)
        img.set_pack_base(z, n, lc["base"] + want - have)
    zcase(c, "zext-overlap-other-extent", "lz4", "/victim.txt",
          "the third extent points at the second extent's pcluster (no dedupe feature)",
          "extent at offset [0-9]+", overlap)

    b, img, ino1 = inode_of(c, "lz4", "/dup1.txt")
    ino2 = img.inode(dump(b, "/dup2.txt")["nid"])
    z1, z2 = img.zinfo(ino1), img.zinfo(ino2)
    assert z1["index"] % 32 == z2["index"] % 32 and ino1["size"] == ino2["size"]
    pos, unit = img.compact_pos(z1, z1["nlc"] - 1)
    packsize = 8 if unit == 4 else 32
    n = pos // packsize * packsize + packsize - z1["header"]
    img.write(z2["header"], bytes(img.b[z1["header"]:z1["header"] + n]))
    c.add("zext-overlap-identical-files", "lz4", img,
          "/dup2.txt's index is a copy of /dup1.txt's: both files share every "
          "pcluster, without the dedupe feature (the kernel reads it)",
          "compressed", "/dup2.txt", "clean", expect="valid",
          mount={"path": "/dup2.txt", "op": "none", "errno": []},
          intact=["/dup1.txt", "/dup2.txt"] + COMMON,
          kernel=["/dup1.txt", "/dup2.txt", "/victim.txt"])


@case
def streams(c):
    for base, alg in (("lz4fast", "lz4"), ("zstd", "zstd"), ("lzma", "lzma"),
                      ("deflate", "deflate")):
        def garbage(img, ino, z, ext):
            e = ext[1]
            pc = bytes(img.b[e["physical"]:e["physical"] + e["physical_length"]])
            skip = len(pc) - len(pc.lstrip(b"\0"))
            r = random.Random(7)
            junk = bytes(r.randrange(256) for _ in range(len(pc) - skip - 4))
            img.write(e["physical"] + skip + 4, junk)
        zcase(c, "stream-garbage-" + alg, base, "/victim.txt",
              "the second pcluster's %s stream replaced by random bytes after "
              "its first 4" % alg, "extent at offset [0-9]+ .*%s" % alg, garbage)

        def truncated(img, ino, z, ext):
            for e in ext[1:]:
                pc = bytes(img.b[e["physical"]:e["physical"] + e["physical_length"]])
                stream = pc.lstrip(b"\0")
                pad = len(pc) - len(stream)
                cut = min(len(stream) // 2, img.blksz - 1 - pad)
                if cut >= 16:
                    break
            else:
                raise RuntimeError("no extent to truncate")
            short = stream[:len(stream) - cut]
            img.write(e["physical"], bytes(len(pc) - len(short)) + short)
        zcase(c, "stream-truncated-" + alg, base, "/victim.txt",
              "a %s stream cut short (its tail dropped, still right-aligned "
              "in its pcluster)" % alg, "extent at offset [0-9]+ .*%s" % alg,
              truncated)


@case
def interlaced(c):
    b = c.base("allfragments")
    img = Image(b)
    ino = img.inode(img.get(Image.SB + 96, "Q"))
    z = img.zinfo(ino)
    assert z["advise"] & 0x10 and z["advise"] & 6 == 6, "not interlaced, big pclusters"
    last = z["nlc"] - 1
    assert img.lcluster(z, 0)["type"] == 1 and img.lcluster(z, last)["type"] == 0
    img.set_lcluster(z, 0, 0, 0)            # PLAIN: uncompressed, interlaced
    img.set_lcluster(z, 1, 2, 0x800 | 2)    # of 2 blocks
    img.set_lcluster(z, 2, 1, 0)            # and 8192 bytes long
    c.add("interlaced-plain-over-one-block", "allfragments", img,
          "packed inode: its first extent becomes an interlaced uncompressed "
          "extent of 8192 bytes in a 2-block pcluster (interlacing rotates "
          "within one block only)",
          "compressed", "/data/log-2m.log",
          P("/data/log-2m.log") + "interlaced extent at 0 longer than a block",
          intact=[])

    img = Image(b)
    img.set_lcluster(z, last, 0, 100)
    c.add("interlaced-tail-offset-moved", "allfragments", img,
          "packed inode: the interlaced EOF head moved from clusterofs 1505 "
          "to 100, cutting the lzma extent before it short",
          "compressed", "/sizes/size-4097",
          P("/sizes/size-4097") + "fragment: inode [0-9]+: extent at offset 0 .*lzma",
          intact=[])


# -------------------------------------------------------------- fragments


@case
def fragments(c):
    zcase(c, "fragment-tail-past-packed", "fragments", "/data/tail/second.dat",
          "the tail fragment's offset is 0xffffff00, past the packed inode",
          "fragment at [0-9]+ .*past the end",
          lambda img, ino, z, ext: img.put(z["header"], "I", 0xFFFFFF00),
          intact=["/data/tail/first.dat", "/data/log-2m.log"], group="fragment")

    def whole(img, ino, z, ext):
        img.put(z["header"], "Q", (1 << 63) | (1 << 40))
    zcase(c, "fragment-whole-past-packed", "allfragments", "/sizes/size-4097",
          "a whole-file fragment at offset 2^40, past the packed inode",
          "fragment at [0-9]+ .*past the end", whole,
          intact=["/sizes/size-4096", "/data/log-2m.log"], group="fragment")

    def whole_end(img, ino, z, ext):
        packed = img.inode(img.get(Image.SB + 96, "Q"))
        img.put(z["header"], "Q", (1 << 63) | (packed["size"] - 100))
    zcase(c, "fragment-whole-straddles-end", "allfragments", "/sizes/size-4097",
          "a whole-file fragment that starts 100 bytes before the packed "
          "inode's end and runs 3997 bytes past it",
          "fragment at [0-9]+ .*past the end", whole_end,
          intact=["/sizes/size-4096", "/data/log-2m.log"], group="fragment")


# ----------------------------------------------------------------- chunks


def relink(img, dirino, name, newnid):
    """Point the entry `name` of a flat directory at another nid."""
    for off, valid in img.dir_blocks(dirino):
        ents = img.dir_entries(off, valid)
        for e in ents:
            if e[2] == name:
                e[0] = newnid
                img.dir_write(off, valid, ents)
                return
    raise KeyError(name)


def chunk_index_image(c, devices, last_device):
    """/sparse.bin rebuilt with 8-byte chunk indexes.

    erofskit writes 4-byte block maps, so the inode is written anew in
    blocks appended to the image: the same file with chunk format
    INDEXES, every chunk on device 0 except the last data chunk, which
    gets `last_device`; the root's entry is pointed at it.  With
    `devices` > 0 the superblock announces that many extra devices and a
    device table (tags blob1.., one block each, mapped past the image).
    """
    b, img, old = inode_of(c, "plain", "/sparse.bin")
    assert old["layout"] == 4 and not old["u"] & 0x20
    bits = old["u"] & 0x1F
    nchunks = (old["size"] + (img.blksz << bits) - 1) // (img.blksz << bits)
    bmap = [img.get(old["data_off"] + 4 * i, "I") for i in range(nchunks)]
    table = 32 + 8 * nchunks
    nblk = (table + img.blksz - 1) // img.blksz + (1 if devices else 0)
    blocks_before = len(img.b) // img.blksz
    off = img.append_blocks(nblk)
    core = struct.pack("<HHHHIIII HH I", 4 << 1, 0, S_IFREG | 0o644, 1,
                       old["size"], 0, bits | 0x20, 999, 0, 0, 0)
    img.write(off, core)
    lastdata = max(i for i, x in enumerate(bmap) if x != 0xFFFFFFFF)
    for i, blk in enumerate(bmap):
        dev = last_device if i == lastdata else 0
        img.write(off + 32 + 8 * i, struct.pack("<HHI", 0, dev, blk))
    if devices:
        slots = off + (nblk - 1) * img.blksz
        for k in range(devices):
            img.write(slots + 128 * k, b"blob%d" % (k + 1))
            img.put(slots + 128 * k + 64, "I", 1)
            img.put(slots + 128 * k + 68, "I", blocks_before + k)
        img.put(Image.SB + 80, "I", img.incompat | 0x8)
        img.put(Image.SB + 86, "H", devices)
        img.put(Image.SB + 88, "H", slots // 128)
    relink(img, img.inode(img.root_nid), b"sparse.bin", img.nid_at(off))
    img.fix_crc()
    return img


@case
def chunks(c):
    img = chunk_index_image(c, 0, 0)
    c.add("chunk-index-rebuilt", "plain", img,
          "control case: /sparse.bin rewritten with 8-byte chunk indexes, all "
          "on device 0 (valid; shows the rebuilt record reads right)",
          "chunk", "/sparse.bin", "clean", expect="valid",
          mount={"path": "/sparse.bin", "op": "none", "errno": []},
          intact=COMMON + ["/sparse.bin"], kernel=["/sparse.bin"])

    img = chunk_index_image(c, 2, 3)
    c.add("chunk-missing-device", "plain", img,
          "8-byte chunk indexes: the last data chunk is on device 3 of 2 "
          "(the superblock lists two extra devices)",
          "chunk", "/sparse.bin", P("/sparse.bin") + "missing device 3",
          intact=COMMON)

    img = chunk_index_image(c, 0, 1)
    c.add("chunk-device-masked", "plain", img,
          "8-byte chunk indexes: a chunk on device 1 in an image with no extra "
          "devices; readers mask the id with roundup_pow_of_two(0 + 1) - 1 = 0 "
          "(spec 8.2), so it is the primary device (the kernel reads it)",
          "chunk", "/sparse.bin", "clean", expect="valid",
          mount={"path": "/sparse.bin", "op": "none", "errno": []},
          intact=COMMON + ["/sparse.bin"], kernel=["/sparse.bin"])

    inode_edit(c, "chunk-block-past-end", "plain", "/sparse.bin",
               "the first chunk's block is 0x7ffffff0", "(past the end|out of range)",
               lambda img, ino: img.put(ino["data_off"], "I", 0x7FFFFFF0),
               group="chunk")
    inode_edit(c, "chunk-format-unknown", "plain", "/sparse.bin",
               "chunk format bit 0x80 set", "unsupported chunk format",
               lambda img, ino: img.put(ino["off"] + 16, "I", ino["u"] | 0x80),
               {"path": "/sparse.bin", "op": "stat", "errno": ["EIO"]},
               group="chunk")


# ------------------------------------------------------------- superblock


def sb_case(c, name, base, what, regex, edit, crc=True):
    img = Image(c.base(base))
    edit(img)
    if crc:
        img.fix_crc()
    c.add(name, base, img, what + ("" if crc else " (checksum not updated)"),
          "superblock", "image", "erofskit fsck: .*" + regex, opens=False,
          mount={"path": "image", "op": "mount", "errno": []})


def record_off(img, alg):
    """Offset of algorithm alg's compression configuration record."""
    off = Image.SB + img.sb_size
    bitmap = img.get(Image.SB + 84, "H")
    for a in range(4):
        if not bitmap & (1 << a):
            continue
        off = (off + 3) // 4 * 4
        if a == alg:
            return off
        off += 2 + (img.get(off, "H") or 65536)
    raise KeyError(alg)


@case
def superblock(c):
    SB = Image.SB
    sb_case(c, "sb-bad-magic", "plain", "magic 0xe0f5e1e3",
            "bad superblock magic", lambda img: img.put(SB, "I", 0xE0F5E1E3))
    sb_case(c, "sb-checksum-mismatch", "plain", "one byte of the label changed",
            "checksum mismatch", lambda img: img.write(SB + 64, b"X"), crc=False)
    sb_case(c, "sb-blkszbits-13", "plain", "blkszbits 13 (8 KiB blocks)",
            "block size 2\^13", lambda img: img.write(SB + 12, b"\x0d"))
    sb_case(c, "sb-blkszbits-8", "plain", "blkszbits 8 (256-byte blocks)",
            "block size 2\^8", lambda img: img.write(SB + 12, b"\x08"), crc=False)
    sb_case(c, "sb-extslots-too-many", "plain", "sb_extslots 200",
            "sb_extslots 200", lambda img: img.write(SB + 13, b"\xc8"))
    sb_case(c, "sb-dirblkbits", "plain", "dirblkbits 1",
            "dirblkbits 1", lambda img: img.write(SB + 90, b"\x01"))
    sb_case(c, "sb-unknown-incompat", "plain", "incompat bit 0x200",
            "unknown incompatible features 0x200",
            lambda img: img.put(SB + 80, "I", img.incompat | 0x200))
    sb_case(c, "sb-root-nid-past-end", "plain", "root nid 65535 (2 MiB in)",
            "root inode.*past the end", lambda img: img.put(SB + 14, "H", 0xFFFF))
    sb_case(c, "sb-root-not-directory", "plain", "root nid is /a.txt's",
            "root inode [0-9]+ is not a directory",
            lambda img: img.put(SB + 14, "H", nid(c, "/a.txt")))
    sb_case(c, "sb-meta-blkaddr-past-end", "plain", "meta_blkaddr 0x10000000",
            "root inode.*past the end", lambda img: img.put(SB + 40, "I", 0x10000000))

    def nocsum(img):
        img.put(SB + 8, "I", img.get(SB + 8, "I") & ~1)
        img.put(SB + 40, "I", 0x7FFFFFFF)
    sb_case(c, "sb-nochecksum-meta-past-end", "plain",
            "checksum feature cleared, meta_blkaddr 0x7fffffff",
            "root inode.*past the end", nocsum, crc=False)
    sb_case(c, "sb-compr-unknown-algorithm", "lz4",
            "algorithm bitmap gains bit 4", "unknown compression algorithms",
            lambda img: img.put(SB + 84, "H", img.get(SB + 84, "H") | 0x10))
    sb_case(c, "sb-compr-lz4-pclusterblks", "lz4",
            "lz4 record: max_pclusterblks 300 (> 1 MiB)", "max_pclusterblks 300",
            lambda img: img.put(record_off(img, 0) + 4, "H", 300))
    sb_case(c, "sb-compr-record-short", "lz4",
            "lz4 record of 2 bytes (needs 14)", "2 bytes, need 14",
            lambda img: img.put(record_off(img, 0), "H", 2))
    sb_case(c, "sb-compr-lzma-dict", "lzma",
            "lzma record: dictionary 1 GiB", "dictionary size",
            lambda img: img.put(record_off(img, 1) + 2, "I", 1 << 30))
    sb_case(c, "sb-compr-lzma-format", "lzma",
            "lzma record: format 1", "lzma record format 1",
            lambda img: img.put(record_off(img, 1) + 6, "H", 1))
    sb_case(c, "sb-compr-deflate-window", "deflate",
            "deflate record: windowbits 16", "windowbits 16",
            lambda img: img.write(record_off(img, 2) + 2, b"\x10"))
    sb_case(c, "sb-compr-zstd-window", "zstd",
            "zstd record: window log 11 + 10 (2 MiB)", "window log 11",
            lambda img: img.write(record_off(img, 3) + 3, b"\x0b"))
    def record_past_end(img):
        assert len(img.b) < 65535, "the small image is not small"
        img.put(record_off(img, 3), "H", 0xFFFF)
    sb_case(c, "sb-compr-record-past-end", "zstd-small",
            "zstd record: length 65535 in an image of a few blocks",
            "read of 65535 bytes .*past the end", record_past_end)
    sb_case(c, "sb-prefix-count", "prefix", "xattr_prefix_count 200",
            "200 long xattr prefixes", lambda img: img.write(SB + 91, b"\xc8"))
    sb_case(c, "sb-prefix-start-past-end", "prefix",
            "xattr_prefix_start points past the image",
            "long xattr prefix 0.*past the end",
            lambda img: img.put(SB + 92, "I", 0x3FFFFFFF))

    def prefix_len0(img):
        img.put(img.get(SB + 92, "I") * 4, "H", 0)
    sb_case(c, "sb-prefix-length-zero", "prefix", "long prefix record of length 0",
            "length 0 not in 1\.\.256", prefix_len0)

    # The kernel mounts an image whose long prefix names an unknown base
    # index (names using it are invisible): erofskit opens it too.
    img = Image(c.base("prefix"))
    img.write(img.get(SB + 92, "I") * 4 + 2, b"\x09")
    img.fix_crc()
    c.add("sb-prefix-bad-base", "prefix", img,
          "long prefix with base index 9 (the kernel mounts it; names using it "
          "are invisible)", "superblock", "/", "clean", expect="valid",
          mount={"path": "/", "op": "none", "errno": []},
          intact=["/sizes/size-100"], kernel=["/sizes/size-100"])
    sb_case(c, "sb-packed-nid-past-end", "fragments", "packed_nid 2^40",
            "packed inode.*past the end", lambda img: img.put(SB + 96, "Q", 1 << 40))
    sb_case(c, "sb-packed-nid-bit63", "fragments", "packed_nid with bit 63",
            "bit 63", lambda img: img.put(SB + 96, "Q", (1 << 63) | 5))
    # The kernel mounts an image whose packed inode is not a regular file;
    # every read of a fragment then fails.
    img = Image(c.base("fragments"))
    img.put(SB + 96, "Q", img.root_nid)
    img.fix_crc()
    c.add("sb-packed-not-regular", "fragments", img,
          "packed_nid is the root's: files whose data is in fragments fail",
          "superblock", "/sizes/size-4097",
          P("/sizes/size-4097") + "packed inode [0-9]+ is not a regular file")

    def truncate(img):
        del img.b[len(img.b) // 3:]
    sb_case(c, "image-truncated", "plain", "the image cut to a third",
            "(past the end|too short)", truncate, crc=False)


# ------------------------------------------------------------------ main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", action="append", default=[],
                    help="only the cases whose name matches this glob")
    ap.add_argument("--outside", default="/tmp/erofskit-outside",
                    help="where hostile symlinks point")
    ap.add_argument("--keep-work", action="store_true",
                    help="keep OUTDIR's work subdirectory (the trees and "
                    "base images)")
    ap.add_argument("outdir")
    a = ap.parse_args()
    if not EROFSKIT:
        sys.exit("make-corpus.py: EROFSKIT must point at the erofskit binary")
    os.makedirs(a.outdir, exist_ok=True)
    c = Corpus(a.outdir, a.outside)
    if os.path.exists(c.work):
        shutil.rmtree(c.work)
    os.makedirs(c.work)
    for fn in CASES:
        fn(c)
    if a.case:
        keep = [x for x in c.cases if any(fnmatch.fnmatch(x["name"], g) for g in a.case)]
        for x in c.cases:
            if x not in keep:
                os.unlink(os.path.join(a.outdir, x["image"]))
        c.cases = keep
    c.finish()
    if not a.keep_work:
        shutil.rmtree(c.work)


if __name__ == "__main__":
    main()
