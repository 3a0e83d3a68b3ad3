# erofskit dump: the superblock, one inode (--path), a directory (--ls) and
# file contents (--cat), in text and JSON, checked against the source tree
# (os.lstat, readlink, listxattr, the bytes) for 4096- and 512-byte blocks.
. "$(dirname "$0")/lib.sh"

S=$T/src
mkdir -p "$S/dir/sub" "$S/dev" "$S/empty-dir"
: >"$S/dir/empty"
printf 'hello, dump\n' >"$S/dir/small.txt"
head -c $((1536 * 1024 + 7)) /dev/urandom >"$S/dir/big.bin"     # 1.5 MiB + 7
head -c 4097 /dev/urandom >"$S/dir/sub/4097.bin"
head -c 512 /dev/urandom >"$S/dir/sub/512.bin"
ln "$S/dir/small.txt" "$S/dir/sub/hardlink"
ln -s ../dir/small.txt "$S/dir/link"
ln -s "$(printf 'x%.0s' {1..300})" "$S/dir/long-link"
mknod "$S/dev/char" c 1 3
mknod "$S/dev/block" b 259 65537
mkfifo "$S/dev/fifo"
setfattr -n user.colour -v blue "$S/dir/small.txt"
setfattr -n user.empty "$S/dir/big.bin"
setfattr -n trusted.t -v "$(head -c 700 /dev/zero | tr '\0' z)" "$S/dir/big.bin"
chown 1234:5678 "$S/dir/big.bin"
chown -h 4321:8765 "$S/dir/link"
chmod 4751 "$S/dir/sub/4097.bin"
chmod 1777 "$S/dir/sub"
python3 - "$S" <<'PY'
import os, sys
s = sys.argv[1]
os.utime(s + "/dir/big.bin", ns=(0, 1600000000123456789))
os.utime(s + "/dir/sub/4097.bin", ns=(0, -86400 * 10**9 + 999999999))
os.utime(s + "/dir/link", ns=(0, 1500000000000000001), follow_symlinks=False)
os.utime(s + "/dir", ns=(0, 1234567890987654321))
PY

for bs in 4096 512; do
	note "block size $bs"
	img=$T/img$bs
	"$EROFSKIT" mkfs -q -b $bs -L dump-test "$img" "$S"

	# The text superblock dump.
	"$EROFSKIT" dump "$img" >"$T/sb.txt" || fail "dump failed"
	grep -qE "^Block size: +$bs\$" "$T/sb.txt" || fail "text dump: block size"
	grep -qE "^Label: +dump-test\$" "$T/sb.txt" || fail "text dump: label"

	# Everything else through JSON, compared with the source in Python.
	python3 - "$EROFSKIT" "$img" "$S" $bs <<'PY' || fail "dump disagrees with the source (-b $bs)"
import json, os, stat, subprocess, sys

erofskit, img, src, bs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
bad = []

def check(cond, what):
    if not cond:
        bad.append(what)

def dump(*args):
    r = subprocess.run([erofskit, "dump", *args, img], capture_output=True)
    if r.returncode != 0:
        sys.exit("dump %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.decode()))
    if r.stderr:
        sys.exit("dump %s wrote to stderr: %s" % (" ".join(args), r.stderr.decode()))
    return r.stdout

def djson(*args):
    out = dump(*args, "--json")
    try:
        return json.loads(out)
    except ValueError as e:
        sys.exit("dump %s --json is not JSON (%s): %r" % (" ".join(args), e, out[:300]))

TYPES = {stat.S_IFREG: "regular", stat.S_IFDIR: "directory", stat.S_IFLNK: "symlink",
         stat.S_IFCHR: "chardev", stat.S_IFBLK: "blockdev", stat.S_IFIFO: "fifo",
         stat.S_IFSOCK: "socket"}

# Walk the source: every path, and the number of distinct inodes.
paths, inodes = ["/"], {os.lstat(src).st_ino}
for d, dirs, files in os.walk(src):
    for n in dirs + files:
        p = os.path.join(d, n)
        paths.append("/" + os.path.relpath(p, src))
        inodes.add(os.lstat(p).st_ino)

sb = djson()
check(sb["block_size"] == bs, "superblock block_size %r" % sb["block_size"])
check(sb["inodes"] == len(inodes), "superblock inodes %r, the tree has %d" % (sb["inodes"], len(inodes)))
check(sb["label"] == "dump-test", "superblock label %r" % sb["label"])
check(sb["image_size"] == os.path.getsize(img), "superblock image_size %r" % sb["image_size"])
check(sb["blocks"] * bs == os.path.getsize(img), "superblock blocks %r" % sb["blocks"])

# --path for every entry: attributes against lstat.
nids = {}
for p in paths:
    st = os.lstat(src + p)
    d = djson("--path", p)
    nids[p] = d["nid"]
    w = "--path %s: " % p
    check(d["path"] == p, w + "path %r" % d["path"])
    check(d["type"] == TYPES[stat.S_IFMT(st.st_mode)], w + "type %r" % d["type"])
    check(int(d["mode"], 8) == stat.S_IMODE(st.st_mode), w + "mode %r" % d["mode"])
    check((d["uid"], d["gid"]) == (st.st_uid, st.st_gid), w + "owner %r:%r" % (d["uid"], d["gid"]))
    check(d["mtime"] * 10**9 + d["mtime_nsec"] == st.st_mtime_ns,
          w + "mtime %r.%09d, source %r" % (d["mtime"], d["mtime_nsec"], st.st_mtime_ns))
    check(d["nlink"] == st.st_nlink, w + "nlink %r, source %r" % (d["nlink"], st.st_nlink))
    if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
        check(d["size"] == st.st_size, w + "size %r, source %r" % (d["size"], st.st_size))
    if stat.S_ISREG(st.st_mode):
        covered = sum(e["length"] for e in d["extents"])
        check(covered == st.st_size, w + "extents cover %d of %d bytes" % (covered, st.st_size))
    if stat.S_ISLNK(st.st_mode):
        check(d["target"] == os.readlink(src + p), w + "target %r" % d["target"])
    else:
        check("target" not in d, w + "has a target")
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        check(d["rdev"] == [os.major(st.st_rdev), os.minor(st.st_rdev)], w + "rdev %r" % d["rdev"])
    else:
        check("rdev" not in d, w + "has an rdev")
    want_x = sorted((n, len(os.getxattr(src + p, n, follow_symlinks=False)))
                    for n in os.listxattr(src + p, follow_symlinks=False))
    got_x = sorted((x["name"], x["size"]) for x in d["xattrs"])
    check(got_x == want_x, w + "xattrs %r, source %r" % (got_x, want_x))
# Hard links share a nid, nothing else does.
check(nids["/dir/small.txt"] == nids["/dir/sub/hardlink"], "hard links have different nids")
check(len(set(nids.values())) == len(inodes), "%d nids for %d inodes" % (len(set(nids.values())), len(inodes)))
check(nids["/"] == sb["root_nid"], "root nid %r, superblock %r" % (nids["/"], sb["root_nid"]))

# --ls of every directory: exactly its names plus . and .., with the nids,
# types and attributes --path gave.
for p in paths:
    if not os.path.isdir(src + p) or os.path.islink(src + p):
        continue
    ls = djson("--ls", p)
    names = [e["name"] for e in ls]
    want = sorted(os.listdir(src + p) + [".", ".."])
    check(sorted(names) == want, "--ls %s: %r, want %r" % (p, names, want))
    check(len(names) == len(set(names)), "--ls %s: a name twice" % p)
    parent = os.path.dirname(p.rstrip("/")) or "/"
    for e in ls:
        q = {".": p, "..": parent}.get(e["name"], os.path.join(p, e["name"]))
        if q not in nids:
            continue
        st = os.lstat(src + q)
        w = "--ls %s: %s: " % (p, e["name"])
        check(e["nid"] == nids[q], w + "nid %r, --path says %r" % (e["nid"], nids[q]))
        check(e["type"] == TYPES[stat.S_IFMT(st.st_mode)], w + "type %r" % e["type"])
        check(int(e["mode"], 8) == stat.S_IMODE(st.st_mode), w + "mode %r" % e["mode"])
        check(e["mtime"] * 10**9 + e["mtime_nsec"] == st.st_mtime_ns, w + "mtime")
        if stat.S_ISREG(st.st_mode):
            check(e["size"] == st.st_size, w + "size %r" % e["size"])
# Text --ls names every entry too.
text = dump("--ls", "/dir").decode()
for n in os.listdir(src + "/dir"):
    check(any(line.endswith(" " + n) for line in text.splitlines()), "text --ls /dir lacks %s" % n)

# --cat: byte-identical, every regular file (empty, 512, 4097, 1.5 MiB+7).
for p in paths:
    if stat.S_ISREG(os.lstat(src + p).st_mode):
        with open(src + p, "rb") as f:
            check(dump("--cat", p) == f.read(), "--cat %s differs from the source" % p)
check(dump("--cat", "/dir/sub/hardlink") == b"hello, dump\n", "--cat through a hard link")

for b in bad:
    print("MISMATCH:", b)
sys.exit(1 if bad else 0)
PY

	# Errors: --cat of a non-file, a missing path, --ls of a file.
	for p in /dir /dev/char /dir/link; do
		expect_exit 2 "$EROFSKIT" dump --cat "$p" "$img" >"$T/cat.out" 2>"$T/err"
		[ ! -s "$T/cat.out" ] || fail "dump --cat $p wrote data"
		grep -qF "$p" "$T/err" || { cat "$T/err" >&2; fail "dump --cat $p: no message naming it"; }
	done
	for opt in --path --ls --cat; do
		expect_exit 2 "$EROFSKIT" dump $opt /dir/no-such-file "$img" >"$T/out" 2>"$T/err"
		grep -qF "/dir/no-such-file" "$T/err" || { cat "$T/err" >&2; fail "dump $opt of a missing path: no message naming it"; }
		[ ! -s "$T/out" ] || fail "dump $opt of a missing path wrote to stdout"
	done
	# A --nid where no inode is, past the image's end or inside another
	# inode, is the user's mistake (exit 2), not damage (exit 1).
	for nid in 99999999 3; do
		expect_exit 2 "$EROFSKIT" dump --nid $nid "$img" 2>"$T/err" >"$T/out"
		grep -qF "is $nid an inode's nid?" "$T/err" ||
			{ cat "$T/err" >&2; fail "dump --nid $nid: $(cat "$T/err")"; }
		[ ! -s "$T/out" ] || fail "dump --nid $nid wrote to stdout"
	done
	# A path through a file, and --ls of a file, are errors too.
	expect_exit 2 "$EROFSKIT" dump --path /dir/small.txt/x "$img" 2>"$T/err" >/dev/null
	expect_exit 2 "$EROFSKIT" dump --ls /dir/small.txt "$img" 2>"$T/err" >"$T/out"
	[ ! -s "$T/out" ] || fail "dump --ls of a file wrote to stdout"
done
note "--stats: counts against the source, data blocks counted once"
# Text that compresses, two copies of it (dedupe shares their blocks),
# and a whole-file fragment: every place data can be.
python3 -c 'print("".join("line %d of the text\n" % i for i in range(20000)), end="")' >"$S/text"
cp "$S/text" "$S/text-copy"
for spec in "" "-zlz4hc -Ededupe,fragments" "-zlzma -C65536 -Eall-fragments,dedupe,48bit" \
	"-b 512 -zzstd -Eztailpacking"; do
	"$EROFSKIT" mkfs -q $spec "$T/st.img" "$S" || fail "mkfs $spec"
	"$EROFSKIT" dump --stats --json "$T/st.img" >"$T/st.json" || fail "dump --stats --json ($spec)"
	python3 - "$EROFSKIT" "$T/st.img" "$S" "$T/st.json" "$spec" <<'PY' || fail "dump --stats of '$spec'"
import json, os, stat, subprocess, sys
erofskit, img, src, stats, spec = sys.argv[1:6]
st = json.load(open(stats))
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)
# Counted from the source: names, inodes, types, sizes.
kinds = {stat.S_IFREG: "regular", stat.S_IFDIR: "directories", stat.S_IFLNK: "symlinks",
         stat.S_IFCHR: "character devices", stat.S_IFBLK: "block devices",
         stat.S_IFIFO: "fifos", stat.S_IFSOCK: "sockets"}
types, inodes, names, sizes, files = {}, set(), 0, [0] * 10, []
for d, ds, fs in os.walk(src):
    for p in [d] if d == src else []:
        pass
    for n in ([""] if d == src else []) + ds + fs:
        p = os.path.join(d, n) if n else d
        a = os.lstat(p)
        names += 1
        if (a.st_dev, a.st_ino) in inodes:
            continue
        inodes.add((a.st_dev, a.st_ino))
        k = kinds[stat.S_IFMT(a.st_mode)]
        types[k] = types.get(k, 0) + 1
        if k == "regular":
            files.append(os.path.relpath(p, src))
            c, bound = 0, 1024
            while c < 9 and a.st_size >= bound:
                c, bound = c + 1, bound * 4
            sizes[c] += 1
check(st["names"] == names, "names %d, want %d" % (st["names"], names))
check(st["inodes"] == len(inodes), "inodes %d, want %d" % (st["inodes"], len(inodes)))
check({k: v for k, v in st["types"].items() if v} == types, "types %r, want %r" % (st["types"], types))
check([c["files"] for c in st["sizes"]] == sizes, "sizes %r, want %r" % (st["sizes"], sizes))
total = sum(os.path.getsize(os.path.join(src, f)) for f in files)
check(st["data_bytes"] == total, "data %d, want %d" % (st["data_bytes"], total))
check(sum(st["data_by_store"].values()) == total, "stores %r add to %d" % (st["data_by_store"], total))
check(sum(st["layouts"].values()) == types["regular"], "layouts %r" % st["layouts"])
# Data blocks: every extent of every file (and of the packed inode) in
# its own blocks, each pcluster once, in whole blocks.
sb = json.loads(subprocess.run([erofskit, "dump", "--json", img], capture_output=True, check=True).stdout)
bs, seen, stored = sb["block_size"], set(), 0
args = [["--path", "/" + f] for f in files] + ([["--nid", str(sb["packed_nid"])]] if sb["packed_nid"] else [])
for a in args:
    ino = json.loads(subprocess.run([erofskit, "dump", "--json", *a, img], capture_output=True, check=True).stdout)
    for x in ino["extents"]:
        if x["kind"] in ("plain", "compressed") and not x.get("inline") and x["physical"] not in seen:
            seen.add(x["physical"])
            stored += (x["physical_length"] + bs - 1) // bs * bs
check(st["stored_bytes"] == stored, "stored %d, the extents say %d" % (st["stored_bytes"], stored))
check(st["stored_bytes"] % bs == 0 and st["stored_bytes"] < st["image_size"], "stored %d" % st["stored_bytes"])
if spec:
    # The text and its copy compress (both count as data, where their
    # blocks count once).
    text = os.path.getsize(os.path.join(src, "text"))
    by = st["data_by_store"]
    check(by["compressed"] + by["fragments"] + by["inline"] >= 2 * text,
          "the text is not compressed: %r" % by)
    if "fragments" in spec:
        check(st["data_by_store"]["fragments"] > 0, "no fragments: %r" % st["data_by_store"])
else:
    check(st["data_by_store"]["compressed"] == 0, "compressed data without -z")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
done
"$EROFSKIT" dump --stats "$T/st.img" >"$T/st.txt" || fail "dump --stats (text)"
grep -qE "^Names: +[0-9]+ \([0-9]+ inodes\)$" "$T/st.txt" || fail "text --stats: $(head -3 "$T/st.txt")"
"${EROFSKIT_BUILD:-$(dirname "$EROFSKIT")}/dropin/dump.erofs" -S "$T/st.img" >"$T/S.txt" ||
	fail "dump.erofs -S failed"
cmp "$T/st.txt" "$T/S.txt" || fail "dump.erofs -S differs from erofskit dump --stats"
expect_exit 2 "${EROFSKIT_BUILD:-$(dirname "$EROFSKIT")}/dropin/dump.erofs" -S --path=/dir "$T/st.img" 2>/dev/null
expect_exit 2 "$EROFSKIT" dump --stats --ls / "$T/st.img" 2>/dev/null

# The message for --ls of a file names the path the user gave (last, so a
# failure here hides none of the checks above).
expect_exit 2 "$EROFSKIT" dump --ls /dir/small.txt "$T/img4096" 2>"$T/err" >/dev/null
grep -qF "/dir/small.txt" "$T/err" || { cat "$T/err" >&2; fail "dump --ls of a file: the message does not name /dir/small.txt"; }
echo PASS
