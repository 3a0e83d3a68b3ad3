# Trees the fixture tree does not have: names that are not UTF-8 or hold a
# newline, a tab or a backslash; names that sort before "." or between "."
# and ".."; a 5000-entry directory; directories whose entries exactly fill
# a block (and one byte more); block-boundary file sizes; 200 xattrs on one
# file, a 65535-byte xattr value, xattrs on a symlink, the same xattr on
# 300 files.  Built with -b 4096 and -b 512, then the kernel's view and
# erofskit fsck --extract are each compared with the source by treecmp.py,
# which works on raw byte names.
. "$(dirname "$0")/lib.sh"

TREECMP="python3 $HERE/treecmp.py"

# The tree lives on a tmpfs: ext4 without ea_inode (as /tmp here) holds
# neither 200 xattrs nor a 65535-byte value on one inode.  Extractions go
# there too, for the same reason.
mkdir -p "$T/fs"
mount -t tmpfs -o size=256m,mode=0755 tmpfs "$T/fs" || fail "cannot mount a tmpfs"
_mounts+=("$T/fs")
S=$T/fs/src

python3 - "$S" <<'PY' || fail "cannot build the odd tree"
import os, sys

root = os.fsencode(sys.argv[1])
os.mkdir(root)

def P(*parts):
    return b"/".join([root] + [p if isinstance(p, bytes) else p.encode() for p in parts])

def write(path, data=b""):
    with open(path, "wb") as f:
        f.write(data)

def data(n, seed):
    out, x = bytearray(), seed * 2654435761 % 2**32 or 1
    while len(out) < n:
        x = (x * 1103515245 + 12345) % 2**31
        out += x.to_bytes(4, "little")
    return bytes(out[:n])

# --- names ---------------------------------------------------------------
os.mkdir(P("names"))
odd = [b"\xff\xfe", b"new\nline", b"tab\there", b"back\\slash", b"...", b".a",
       b"..a", b".!", b". ", b".-", b"!bang", b" space-first", b"\x01ctrl", b"-",
       b"\x7f", b"\xc3\x28", b"\xe2\x82", b"\xff" * 255, b"quote\"", b"apos'",
       b"$HOME", b"*", b"?", b"a:b", b"~", b"\x1b[31mred", b"trailing-space ",
       b"\xef\xbb\xbfbom", b"caf\xe9-latin1"]
for i, n in enumerate(odd):
    write(P("names", n), b"name %r\n" % n + data(i * 37, i))
# a directory, a symlink, a fifo and a hard link with odd names
os.mkdir(P("names", b"dir-\xfe\n\t\\"))
write(P("names", b"dir-\xfe\n\t\\", b"\xfd inside"), b"inside an odd directory\n")
os.symlink(b"\xfe\xff/target\nwith newline", P("names", b"link-\xff"))
os.symlink(b"\xff\xfe", P("names", b"link-to-\xff\xfe"))
os.mkfifo(P("names", b"fifo\tfifo"))
os.link(P("names", b"\xff\xfe"), P("names", b"hard\nlink"))
os.link(P("names", b"\xff\xfe"), P("names", b"dir-\xfe\n\t\\", b"hard-\x80"))

# --- a 5000-entry directory ---------------------------------------------
os.mkdir(P("big"))
for i in range(5000):
    name = b"e%05d-" % i + b"x" * (i % 47)
    write(P("big", name), data(i % 7 * 100, i) if i % 500 == 0 else b"")
os.mkdir(P("big", "zz-subdir"))

# --- directories whose entries fill a block exactly (and by one more) ----
# A block holds 12-byte dirents then the names; "." and ".." take 27 bytes.
os.mkdir(P("fill"))
def fill(name, total):
    os.mkdir(P("fill", name))
    rem = total - 27
    n = rem // 40
    base = rem - 12 * n
    for i in range(n):
        ln = base // n + (1 if i < base % n else 0)
        nm = (b"f%03d" % i).ljust(ln, b"y")
        write(P("fill", name, nm))
    assert 27 + sum(12 + len(x) for x in os.listdir(P("fill", name))) == total
for bs in (512, 4096):
    fill("exact-%d" % bs, bs)
    fill("exact-%d-plus1" % bs, bs + 1)
os.mkdir(P("empty"))

# --- file sizes around block boundaries ----------------------------------
os.mkdir(P("sizes"))
for n in (0, 1, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096,
          4097, 8191, 8192, 8193, 65535, 65536, 65537):
    write(P("sizes", "size-%d" % n), data(n, n))

# --- xattrs ----------------------------------------------------------------
os.mkdir(P("xattrs"))
f = P("xattrs", "two-hundred")
write(f, b"many xattrs\n")
for i in range(200):
    ns = ("user", "trusted", "security")[i % 3]
    os.setxattr(f, "%s.x%03d-%s" % (ns, i, "n" * (i % 30)), data(i % 61, i))
f = P("xattrs", "big-value")
write(f, b"one 65535-byte xattr\n")
os.setxattr(f, "user.big", data(65535, 7))
os.setxattr(f, "user." + "L" * 250, b"longest name")        # 255-byte name
os.setxattr(f, "user.empty", b"")
os.symlink("big-value", P("xattrs", "symlink"))
for i in range(3):
    os.setxattr(P("xattrs", "symlink"), "trusted.sym%d" % i, b"on the link %d" % i,
                follow_symlinks=False)
os.mkdir(P("xattrs", "dir-with-xattrs"))
os.setxattr(P("xattrs", "dir-with-xattrs"), "user.d", b"on a directory")
os.setxattr(P("xattrs", "dir-with-xattrs"), "trusted.d", b"\x00\x01\xff")
os.mkdir(P("xattrs", "same"))
for i in range(300):
    g = P("xattrs", "same", "f%03d" % i)
    write(g, b"%d\n" % i)
    os.setxattr(g, "user.same", b"the same value on 300 files")
    os.setxattr(g, "trusted.same", data(100, 1))
    if i % 3 == 0:
        os.setxattr(g, "user.own", b"%d" % i)

# --- owners, modes, mtimes -----------------------------------------------
os.chown(P("names", b"\xff\xfe"), 1001, 2002)
os.chown(P("names", b"link-\xff"), 3003, 4004, follow_symlinks=False)
os.chmod(P("names", b"new\nline"), 0o4711)
os.chmod(P("names", b"..."), 0o000)
for i, n in enumerate(odd):
    os.utime(P("names", n), ns=(0, 1600000000 * 10**9 + i * 111111111))
os.utime(P("names", b"link-\xff"), ns=(0, -1), follow_symlinks=False)
# directory mtimes last, deepest first, so nothing changes them afterwards
dirs = [d for d, _, _ in os.walk(root)]
for i, d in enumerate(sorted(dirs, key=len, reverse=True)):
    os.utime(d, ns=(0, 1650000000 * 10**9 + i * 1000003))
PY

# Check that the filesystem took what the test is about.
python3 - "$S" <<'PY' || fail "the source filesystem did not keep the xattrs the test needs"
import os, sys
s = sys.argv[1]
n = len(os.listxattr(s + "/xattrs/two-hundred"))
assert n == 200, "two-hundred has %d xattrs" % n
v = os.getxattr(s + "/xattrs/big-value", "user.big")
assert len(v) == 65535, "user.big is %d bytes" % len(v)
n = len(os.listxattr(s + "/xattrs/symlink", follow_symlinks=False))
assert n == 3, "the symlink has %d xattrs" % n
assert len(os.listdir(s + "/big")) == 5001
PY

for bs in 4096 512; do
	note "block size $bs"
	img=$T/img$bs
	"$EROFSKIT" mkfs -q -b $bs "$img" "$S"
	"$EROFSKIT" fsck -q "$img" || fail "erofskit fsck rejects its own image (-b $bs)"
	if [ $bs = 4096 ]; then
		fsck.erofs "$img" >"$T/fsck.erofs.log" 2>&1 ||
			{ tail "$T/fsck.erofs.log" >&2; fail "Debian fsck.erofs rejects the image"; }
	fi

	# The block-filling directories do fill exactly one block.
	size() { "$EROFSKIT" dump --json --path "$1" "$img" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])'; }
	[ "$(size /fill/exact-$bs)" = $bs ] || fail "/fill/exact-$bs is $(size /fill/exact-$bs) bytes, not one block"
	[ "$(size /fill/exact-$bs-plus1)" -gt $bs ] || fail "/fill/exact-$bs-plus1 fits one block"
	[ "$(size /big)" -gt $((4 * bs)) ] || fail "/big is not several blocks"

	kmount "$img" "$T/mnt$bs"
	$TREECMP "$S" "$T/mnt$bs" >"$T/k$bs.diff" || { cat "$T/k$bs.diff" >&2; fail "kernel view differs from the source (-b $bs)"; }
	kumount "$T/mnt$bs"
	grep -q " 0 differences" "$T/k$bs.diff" || fail "treecmp printed no summary"

	"$EROFSKIT" fsck -q --extract "$T/fs/out$bs" "$img" || fail "erofskit fsck --extract failed (-b $bs)"
	$TREECMP "$S" "$T/fs/out$bs" >"$T/x$bs.diff" || { cat "$T/x$bs.diff" >&2; fail "erofskit extraction differs from the source (-b $bs)"; }
	rm -rf "$T/fs/out$bs"
done

# treecmp itself notices a difference in a name's bytes, a mode and an
# xattr value of a symlink (so the comparisons above can fail).
cp -a "$S" "$T/fs/copy"
$TREECMP --quiet "$S" "$T/fs/copy" || fail "treecmp: a copy differs"
mv "$T/fs/copy/names/"$'\xff\xfe' "$T/fs/copy/names/"$'\xff\xfd'
expect_exit 1 $TREECMP --quiet "$S" "$T/fs/copy" >/dev/null
mv "$T/fs/copy/names/"$'\xff\xfd' "$T/fs/copy/names/"$'\xff\xfe'
touch -r "$S/names" "$T/fs/copy/names"     # the renames changed its mtime
chmod 4755 "$T/fs/copy/names/"$'new\nline'
expect_exit 1 $TREECMP --quiet "$S" "$T/fs/copy" >/dev/null
chmod 4711 "$T/fs/copy/names/"$'new\nline'
$TREECMP --quiet "$S" "$T/fs/copy" >/dev/null || fail "treecmp: the restored copy differs"
setfattr -h -n trusted.sym1 -v changed "$T/fs/copy/xattrs/symlink"
expect_exit 1 $TREECMP --quiet "$S" "$T/fs/copy" >/dev/null

# dump takes byte paths, and its --json output stays JSON (RFC 8259: UTF-8)
# whatever bytes the names, targets and xattr names hold.  Kept last: the
# comparisons above do not depend on it.
note "dump with odd names"
"$EROFSKIT" dump --cat /names/$'\xff\xfe' "$T/img512" >"$T/cat.out" || fail "dump --cat of a non-UTF-8 path failed"
cmp -s "$T/cat.out" "$S/names/"$'\xff\xfe' || fail "dump --cat of a non-UTF-8 path gave other bytes"
"$EROFSKIT" dump --cat /names/$'new\nline' "$T/img512" >"$T/cat.out" || fail "dump --cat of a path with a newline failed"
cmp -s "$T/cat.out" "$S/names/"$'new\nline' || fail "dump --cat of a path with a newline gave other bytes"
for bs in 4096 512; do
	"$EROFSKIT" dump --json --ls /names "$T/img$bs" >"$T/ls.json" || fail "dump --ls /names failed"
	"$EROFSKIT" dump --json --path /names/link-$'\xff' "$T/img$bs" >"$T/link.json" || fail "dump --path of a non-UTF-8 symlink failed"
	python3 - "$T/ls.json" "$T/link.json" "$S/names" <<'PY' || fail "dump --json output with non-UTF-8 names is not valid JSON (-b $bs)"
import json, os, sys
for f in sys.argv[1:3]:
    try:
        json.loads(open(f, "rb").read())
    except ValueError as e:
        sys.exit("%s: %s" % (os.path.basename(f), e))
ls = json.loads(open(sys.argv[1], "rb").read())
names = [e["name"] for e in ls]
want = len(os.listdir(sys.argv[3])) + 2
assert len(names) == want and len(set(names)) == want, \
    "--ls gave %d names (%d distinct), the directory has %d" % (len(names), len(set(names)), want)
for n in ("\t".join(["tab", "here"]), "new\nline", "back\\slash", "...", ".!", " space-first"):
    assert n in names, "--ls lost %r" % n
PY
done
echo PASS
