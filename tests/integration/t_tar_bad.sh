# mkfs --tar on hostile and broken archives: path traversal ('..',
# absolute names, a file written through a symlink an earlier entry
# planted, a hard link out of the tree or to a directory), names over 255
# bytes, truncated archives, a pax header lying about a size, corrupt
# compression, no archive at all, a name of terminal escapes.  Each gives a clear error naming the
# entry and its position, exit 1, and leaves no image (nor any temporary
# file) behind; nothing is written outside the image.
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
cd "$T"
mkdir work
cd work

# make NAME PYTHON: an archive NAME.tar built by the Python lines, which
# see `t` (a tarfile open for writing) and add(name, data=b"", **fields).
make() {
	python3 - "$1.tar" "$2" <<'PY'
import io, sys, tarfile
path, body = sys.argv[1], sys.argv[2]
t = tarfile.open(path, "w", format=tarfile.PAX_FORMAT)
def add(name, data=b"", **fields):
    i = tarfile.TarInfo(name)
    i.size = len(data)
    for k, v in fields.items():
        setattr(i, k, v)
        if k == "size":
            i.size = v
    t.addfile(i, io.BytesIO(data) if data else None)
exec(body)
t.close()
PY
}

# bad ARCHIVE TEXT...: exit 1, stderr names each TEXT, no image, nothing
# else left in this directory but the archives; copying the data in
# (compressed) and indexing it (--tar=i: headers parsed ahead on a thread
# of their own, the data skipped).
bad() {
	local archive=$1 mode rc
	shift
	for mode in "--tar -zlz4hc" "--tar=i --workers 2"; do
		rc=0
		# shellcheck disable=SC2086 # mode is several words
		"$E" mkfs $mode out.img "$archive" >out.txt 2>err.txt || rc=$?
		[ $rc -eq 1 ] || { cat err.txt >&2; fail "$archive ($mode): exit $rc, not 1"; }
		for text in "$@"; do
			grep -qF -- "$text" err.txt ||
				{ cat err.txt >&2; fail "$archive ($mode): the message does not say '$text'"; }
		done
		[ "$(ls | grep -cvE '\.(tar|gz|zst|xz|bin)$|^(out|err)\.txt$')" -eq 0 ] ||
			{ ls -la >&2; fail "$archive ($mode): something was left behind"; }
	done
	return 0
}

note "path traversal"
make abs 'add("ok"); add("/etc/passwd-evil", b"x")'
bad abs.tar "entry 2" "/etc/passwd-evil" "absolute"
make dotdot 'add("a/"); add("a/../../escape", b"x")'
bad dotdot.tar "entry 2" "a/../../escape" ".."
make planted 'add("lnk", type=tarfile.SYMTYPE, linkname="/tmp"); add("lnk/owned", b"x")'
bad planted.tar "entry 2" "lnk/owned" "'lnk'" "symlink, not a directory"
make hardout 'add("f", b"x"); add("h", type=tarfile.LNKTYPE, linkname="../../etc/passwd")'
bad hardout.tar "entry 2" "'h'" ".."
make harddir 'add("d", type=tarfile.DIRTYPE); add("h", type=tarfile.LNKTYPE, linkname="d")'
bad harddir.tar "entry 2" "hard link to a directory"
make hardnone 'add("h", type=tarfile.LNKTYPE, linkname="never-there")'
bad hardnone.tar "entry 1" "never-there" "does not hold"
make rootfile 'add(".", b"x")'
bad rootfile.tar "entry 1" "root must be a directory"
[ ! -e /tmp/owned ] || fail "a file was written through the planted symlink"

note "impossible names and sizes"
make longname 'add("d/" + "n" * 256, b"x")'
bad longname.tar "entry 1" "256 bytes"
make bigsym 'add("s", type=tarfile.SYMTYPE, linkname="x" * 5000)'
bad bigsym.tar "entry 1" "symlink target of 5000 bytes"
# a name that would drive the terminal (a title escape, a colour, a C1
# CSI): its control bytes are shown as \xNN, none reaches stderr as is
make ctrl 'add("../\x1b]0;owned\x07\x1b[31mred\x9b", b"x")'
bad ctrl.tar "entry 1" '../\x1b]0;owned\x07\x1b[31mred\xc2\x9b'
! LC_ALL=C grep -q "$(printf '[\033\007]')" err.txt ||
	{ od -c err.txt >&2; fail "a control byte of a name reached stderr as it is"; }
# a pax header claims more data than the archive holds
make paxlie 'add("a", b"y" * 1000); add("b", b"z" * 100)'
python3 - paxlie.tar <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
# the second member's header: its size field (octal, at 124) says 1 MiB
i = data.find(b"b\0", 1024)
hdr = i - i % 512
data[hdr + 124:hdr + 136] = b"%011o\0" % (1 << 20)
data[hdr + 148:hdr + 156] = b"        "
data[hdr + 148:hdr + 155] = b"%06o\0" % sum(data[hdr:hdr + 512]) + b" "
open(sys.argv[1], "wb").write(bytes(data))
PY
bad paxlie.tar "entry"

# libarchive warns and reads on without it: an xattr lost, so an error
make paxbig 'add("ok", b"x"); add("f", b"y", pax_headers={"SCHILY.xattr.user.big": "v" * 1000000})'
bad paxbig.tar "entry 2 'f'" "Rejecting pax extended attribute"

# xattrs EROFS cannot hold: a name over 255 bytes, a value over 65535
make xname 'add("ok", b"x"); add("f", b"y", pax_headers={"SCHILY.xattr.user." + "n" * 256: "v"})'
bad xname.tar "entry 2 'f'" "is too long"
make xvalue 'add("ok", b"x"); add("f", b"y", pax_headers={"SCHILY.xattr.user.v": "v" * 65536})'
bad xvalue.tar "entry 2 'f'" "value of 65536 bytes exceeds 65535"

# An ACL that names a user this system has no number for (GNU tar writes
# a name and no number when the archiving system had one): tar -x cannot
# set it either, and an image without it would grant less than the layer
make aclname 'add("ok", b"x"); add("f", b"y", pax_headers={"SCHILY.acl.access": "user::rw-,user:no-such-user-ek:r--,group::r--,mask::r--,other::---"})'
bad aclname.tar "entry 2 'f'" "user 'no-such-user-ek'"

# ACLs as xattr bytes that are not one: a length no entry fits, and an
# owner entry alone (the kernel refuses an ACL without group and other)
make aclraw 'add("ok", b"x"); add("f", b"y", pax_headers={"SCHILY.xattr.system.posix_acl_access": "\x02\0\0\0\x01"})'
bad aclraw.tar "entry 2 'f'" "system.posix_acl_access of 5 bytes is not a POSIX ACL"
make aclshape 'add("ok", b"x"); add("f", b"y", pax_headers={"SCHILY.xattr.system.posix_acl_access": "\x02\0\0\0\x01\0\x06\0\0\0\0\0"})'
bad aclshape.tar "entry 2 'f'" "access ACL lacks an owner, group, other or mask entry"

# but a header alone is no ACL, as the kernel and tar -x read it: built,
# and the file has none
make aclempty 'add("f", b"y", pax_headers={"SCHILY.xattr.system.posix_acl_access": "\x02\0\0\0", "SCHILY.xattr.user.k": "v"})'
"$E" mkfs --tar -q aclempty.img aclempty.tar || fail "an ACL header alone was refused"
"$E" dump --path /f --json aclempty.img >aclempty.json || fail "dump of aclempty.img failed"
[ "$(python3 -c 'import json, sys; print([x["name"] for x in json.load(open(sys.argv[1]))["xattrs"]])' aclempty.json)" = "['user.k']" ] ||
	fail "an ACL header alone: xattrs $(cat aclempty.json)"
rm aclempty.img aclempty.json

note "an error far into a long archive (the reader well ahead of the tree)"
make deep 'for n in range(3000): add("d%02d/f%04d" % (n % 30, n), b"x" * (n % 700))
add("/etc/deep-evil", b"y")
for n in range(3000): add("e/g%04d" % n, b"z")'
bad deep.tar "entry 3001" "/etc/deep-evil" "absolute"
head -c 1500000 deep.tar >deepcut.tar
bad deepcut.tar "deepcut.tar: entry 1320:" "Truncated"

note "truncated and corrupt archives"
make whole 'add("dir/", type=tarfile.DIRTYPE); add("dir/big", bytes(range(256)) * 400); add("z", b"1")'
head -c 40000 whole.tar >cut.tar
bad cut.tar "cut.tar" "entry 2"
gzip -n <whole.tar >good.tar.gz
python3 - good.tar.gz bad.tar.gz <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
for i in range(200, 260):
    d[i] ^= 0x5A
open(sys.argv[2], "wb").write(bytes(d))
PY
bad bad.tar.gz "bad.tar.gz"
zstd -q <whole.tar | head -c 200 >cut.tar.zst
bad cut.tar.zst "cut.tar.zst"
# gzip cut short, and one whose checksum (the trailer's CRC) is wrong
head -c $(( $(stat -c %s good.tar.gz) - 20 )) good.tar.gz >cut.tar.gz
bad cut.tar.gz "cut.tar.gz"
python3 - good.tar.gz crc.tar.gz <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[-8] ^= 1
open(sys.argv[2], "wb").write(bytes(d))
PY
bad crc.tar.gz "crc.tar.gz"
# xz (erofskit's own decoder): cut short, a byte changed, and a stream
# that asks for more memory than erofskit gives one
xz -c <whole.tar >good.tar.xz
head -c $(( $(stat -c %s good.tar.xz) - 30 )) good.tar.xz >cut.tar.xz
bad cut.tar.xz "cut.tar.xz"
expect_exit 1 "$E" mkfs --tar -q out.img cut.tar.xz 2>err.txt
grep -q "xz: the stream is cut short" err.txt || fail "a cut xz stream: $(cat err.txt)"
python3 - good.tar.xz flip.tar.xz <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[len(d) // 2] ^= 0x10
open(sys.argv[2], "wb").write(bytes(d))
PY
bad flip.tar.xz "flip.tar.xz"
# (its block header made to name a 4 GiB dictionary: xz itself would
# need far more memory than that to make one so)
python3 - good.tar.xz greedy.tar.xz <<'PY'
import sys, zlib
d = bytearray(open(sys.argv[1], "rb").read())
size = (d[12] + 1) * 4                 # the block header, after the stream's
at = d.index(b"\x21\x01", 12, 12 + size)  # LZMA2, one property byte
d[at + 2] = 40                         # dictionary 4 GiB - 1
d[12 + size - 4:12 + size] = zlib.crc32(d[12:12 + size - 4]).to_bytes(4, "little")
open(sys.argv[2], "wb").write(bytes(d))
PY
bad greedy.tar.xz "xz: decoding it takes more than 1024 MiB"
head -c 10000 /dev/urandom >noise.bin
bad noise.bin "noise.bin"
# (an archive of no entries is a tar: t_tar.sh makes an empty root of it)
: >empty.tar
bad empty.tar "empty.tar: cannot read it: it is empty, not a tar archive"
expect_exit 1 "$E" mkfs --tar -q out.img - </dev/null 2>err.txt
grep -qF "standard input: cannot read it: it is empty" err.txt ||
	fail "an empty standard input: $(cat err.txt)"
rc=0
"$E" mkfs --tar out.img no-such.tar 2>err.txt || rc=$?
[ $rc -ne 0 ] && grep -q "no-such.tar" err.txt || fail "a missing archive: exit $rc, $(cat err.txt)"

note "libarchive is loaded only to read an archive, and its absence is a clear error"
opens_none libarchive "$E" mkfs -q dir.img "$EROFSKIT_SRC/src/util"
opens_none libarchive "$E" fsck -q dir.img
expect_exit 2 without_libs '^libarchive\\.so' "$E" mkfs --tar -q noarchive.img whole.tar 2>err
grep -q "needs libarchive: libarchive.so.13 (Debian's libarchive13) did not load" err ||
	fail "no libarchive error: $(cat err)"
[ ! -e noarchive.img ] || fail "an image was left behind without libarchive"

note "an intact archive still builds"
"$E" mkfs --tar -q ok.img whole.tar || fail "the intact archive failed"
"$E" fsck -q ok.img || fail "the intact archive's image is not clean"
echo PASS
