# mkfs --tar: archives made by GNU tar (gnu, posix, ustar; xattrs, ACLs,
# sparse files, long and UTF-8 names), bsdtar and Python's tarfile,
# compressed every way libarchive detects (gzip, zstd, xz, bzip2, lz4),
# from a file and from standard input.  The kernel's mount of each image
# must equal what GNU tar extracts from the same archive: bytes, modes,
# owners, times, xattrs, links, devices.  Compressed images too,
# -Enoinline_data and the drop-in's containerd command line, and --tar=i;
# --tar-copy (the tar decompressed beside the image, or indexed by it).
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
cd "$T"

note "a tree with every kind of entry"
mkdir -p src/dir/sub src/empty-dir "src/$(printf 'long%.0s' {1..40})"
python3 - src <<'PY'
import os, random, sys
root = sys.argv[1]
r = random.Random(7)
words = [bytes(r.choice(b"abcdefghij") for _ in range(r.randint(2, 9))) for _ in range(300)]
def text(n):
    out = bytearray()
    while len(out) < n:
        out += r.choice(words) + b" "
    return bytes(out[:n])
for name, size in [("a.txt", 6000), ("dir/b.bin", 300000), ("dir/sub/c", 50), ("empty", 0),
                   ("dir/" + "n" * 200, 1000), ("x" * 255, 77),
                   ("dir/caf\u00e9-\u00fcn\u00efc\u00f8de", 120)]:
    with open(os.path.join(root, name), "wb") as f:
        f.write(text(size))
with open(os.path.join(root, "random.bin"), "wb") as f:
    f.write(r.randbytes(70000))
# sparse: data at 1 MiB and at the end
with open(os.path.join(root, "sparse"), "wb") as f:
    f.seek(1 << 20); f.write(text(5000)); f.seek((3 << 20) - 10); f.write(b"0123456789")
os.symlink("a.txt", os.path.join(root, "link"))
os.symlink("../" * 3 + "outside/target", os.path.join(root, "dir/dangling"))
os.link(os.path.join(root, "a.txt"), os.path.join(root, "dir/hard-a"))
os.mkfifo(os.path.join(root, "fifo"))
os.mknod(os.path.join(root, "chr"), 0o20640, os.makedev(1, 7))
os.mknod(os.path.join(root, "blk"), 0o60600, os.makedev(7, 3))
os.chmod(os.path.join(root, "dir/sub/c"), 0o4751)
os.chmod(os.path.join(root, "dir/sub"), 0o1777)
os.chown(os.path.join(root, "dir/b.bin"), 4242, 4343)
os.chown(os.path.join(root, "empty"), 70000, 5)
for i, name in enumerate(["a.txt", "dir", "dir/sub/c", "empty"]):
    os.utime(os.path.join(root, name), ns=(1_600_000_000_123_456_789 + i * 1001,) * 2)
# Before the epoch, with a fraction: pax writes -99999999.5 (libarchive
# reads that a second late, which the build puts right)
open(os.path.join(root, "old"), "wb").write(b"1966\n")
os.utime(os.path.join(root, "old"), ns=(-99_999_999_500_000_000,) * 2)
PY
setfattr -n user.comment -v "hello tar" src/a.txt
setfattr -n trusted.layer -v 0x00ff10 src/dir
setfattr -n user.big -v "$(head -c 3000 /dev/zero | tr '\0' v)" src/dir/sub/c
setfacl -m u:4242:rx,g:77:r src/dir/b.bin
setfacl -d -m u:4242:rwx src/dir
# Entries for a user and a group this system names: GNU tar writes
# "user:daemon:r--" with no number, which the image takes from the name
# as tar -x does (daemon is 1 on Debian, but whatever it is here)
setfacl -m u:daemon:r,g:daemon:rw src/a.txt

# expected DIR ARCHIVE: what GNU tar extracts from the archive, as root
# (bsdtar for its own archives: GNU tar loses a directory's mtime there;
# bsdtar then gives the root the time the archive holds for it).
EXTRACT=gnu
expected() {
	rm -rf "$1" && mkdir "$1"
	if [ $EXTRACT = gnu-xattrs ]; then
		# ACLs as xattrs (with --acls, GNU tar sets only ACL records)
		tar --xattrs --xattrs-include='*' --same-owner -xpf "$2" -C "$1"
	elif [ $EXTRACT = bsd ]; then
		# it leaves the target's own times alone: the archive's "./"
		# entry holds src's
		bsdtar --xattrs --acls --numeric-owner -xpf "$2" -C "$1" && touch -r src "$1"
	else
		tar --xattrs --xattrs-include='*' --acls --same-owner -xpf "$2" -C "$1"
	fi || fail "$EXTRACT tar cannot extract $2"
}
# check ARCHIVE WHAT [MKFS OPTIONS...]: the image's kernel mount equals the
# extraction (of $PLAIN, the archive uncompressed, when set).  With -, the
# archive goes through standard input.
check() {
	local archive=$1 what=$2 img=img.erofs
	shift 2
	rm -f "$img"
	if [ "${1:-}" = - ]; then
		shift
		"$E" mkfs --tar -q "$@" "$img" - <"$archive" || fail "mkfs --tar $* < $what failed"
	else
		"$E" mkfs --tar -q "$@" "$img" "$archive" || fail "mkfs --tar $* $what failed"
	fi
	"$E" fsck -q "$img" || fail "fsck of the image from $what failed"
	expected want "${PLAIN:-$archive}"
	kmount "$img" mnt
	manifest mnt got.json
	manifest want want.json
	kumount mnt
	same_manifest want.json got.json "$what"
}

note "GNU tar's formats"
for fmt in gnu posix; do
	tar --format=$fmt --xattrs --xattrs-include='*' --acls --sparse -C src -cf "gnu-$fmt.tar" .
	check "gnu-$fmt.tar" "GNU tar --format=$fmt"
done
# ACLs only as the xattrs' bytes (SCHILY.xattr.system.posix_acl_*, as
# tools that archive every xattr write them): GNU tar -x --xattrs sets
# them so
tar --format=posix --xattrs --xattrs-include='*' -C src -cf gnu-rawacl.tar .
grep -qa "SCHILY.xattr.system.posix_acl_access" gnu-rawacl.tar &&
	! grep -qa "SCHILY.acl" gnu-rawacl.tar || fail "gnu-rawacl.tar is not what this case needs"
EXTRACT=gnu-xattrs check gnu-rawacl.tar "GNU tar --xattrs-include='*' without --acls"
# ustar: no xattrs, ACLs, long names or big ids: a tree it can hold
mkdir -p plain/d && cp src/a.txt src/dir/b.bin plain/d/ && ln -s d/a.txt plain/l
tar --format=ustar -C plain -cf ustar.tar .
check ustar.tar "GNU tar --format=ustar"

note "bsdtar and Python's tarfile"
# (not "old": bsdtar writes its time as "-100000000.5" and reads that back
# as -100000000 s plus .5, where pax, GNU tar and the build read a second
# earlier)
bsdtar --format=pax --xattrs --acls --exclude ./old -C src -cf bsd.tar .
EXTRACT=bsd check bsd.tar "bsdtar --format=pax"
python3 - src py.tar <<'PY'
import os, sys, tarfile
with tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as t:
    t.add(sys.argv[1], arcname=".")
PY
check py.tar "Python tarfile (pax)"

note "compressed every way, from a file and from standard input"
for z in "gzip -n" "zstd -q" "xz" "bzip2" "lz4 -q"; do
	$z <gnu-posix.tar >c.tar.z || fail "$z failed"
	PLAIN=gnu-posix.tar check c.tar.z "GNU tar | ${z%% *}"
done
gzip -n <gnu-gnu.tar >s.tar.gz
PLAIN=gnu-gnu.tar check s.tar.gz "gzip on standard input" -
# gzip of several members (pigz --independent, cat a.gz b.gz), then zeros
# after the last member (which gzip -d ignores): the tar they hold
half=$(( $(stat -c %s gnu-gnu.tar) / 2 ))
{ head -c $half gnu-gnu.tar | gzip -n; tail -c +$((half + 1)) gnu-gnu.tar | gzip -n
  head -c 1024 /dev/zero; } >m.tar.gz
PLAIN=gnu-gnu.tar check m.tar.gz "gzip of two members and trailing zeros"
# zstd of two frames
{ head -c $half gnu-gnu.tar | zstd -q; tail -c +$((half + 1)) gnu-gnu.tar | zstd -q; } >m.tar.zst
PLAIN=gnu-gnu.tar check m.tar.zst "zstd of two frames" -

note "compressed images: -zlz4hc with fragments and dedupe, -zzstd with tail packing"
check gnu-posix.tar "-zlz4hc -Efragments,dedupe" -zlz4hc -Efragments,dedupe
check gnu-posix.tar "-zzstd -Eztailpacking" -zzstd -C16384 -Eztailpacking
check gnu-gnu.tar "-Enoinline_data -b 512" -Enoinline_data -b 512

note "--tar=i: the image indexes the tar appended to it"
# (no sparse files: their data is not one run in the tar)
mkdir -p nosparse && tar -C src --exclude=./sparse -cf - . | tar -C nosparse -xpf -
for fmt in gnu posix; do
	tar --format=$fmt --xattrs --xattrs-include='*' --acls -C nosparse -cf "ix-$fmt.tar" .
	rm -f ix.img
	"$E" mkfs --tar=i -q ix.img - <"ix-$fmt.tar" || fail "mkfs --tar=i of a $fmt tar failed"
	meta=$(stat -c %s ix.img) tarsize=$(stat -c %s "ix-$fmt.tar")
	[ $((meta * 100)) -lt $((tarsize * 3)) ] ||
		fail "--tar=i: the index is $meta bytes for a $tarsize-byte tar (3% or more)"
	cat ix.img "ix-$fmt.tar" >ix-whole.img
	echo "   $fmt: index $meta bytes for a $tarsize-byte tar"
	"$E" fsck -q ix-whole.img || fail "fsck of the indexed image ($fmt) failed"
	expected want "ix-$fmt.tar"
	kmount ix-whole.img mnt
	manifest mnt got.json
	manifest want want.json
	kumount mnt
	same_manifest want.json got.json "--tar=i ($fmt)"
done

note "--tar -zlz4hc: the same image from 1, 2 and 3 workers"
# 3,000 files of 2-16 KB of text: their fragments start committing
# while entries are still being read, and the packed inode, made at the
# first commit, once took its nid from how far the workers had got.
PYTHONPATH="$HERE" python3 - words.tar <<'PY'
import io, random, sys, tarfile, wordtext
r = random.Random(7)
text = wordtext.text(r, wordtext.words(r, 300), 1 << 20)
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for k in range(3000):
        size = 2000 + k * 7919 % 14000
        at = k * 104729 % (len(text) - size)
        i = tarfile.TarInfo("d%02d/f%04d.txt" % (k // 500, k))
        i.size, i.mode, i.mtime = size, 0o644, 1700000000 + k
        t.addfile(i, io.BytesIO(bytes(text[at:at + size])))
PY
for w in 1 2 3; do
	"$E" mkfs --tar -zlz4hc --workers $w -q words-$w.img words.tar ||
		fail "mkfs --tar --workers $w words.tar failed"
done
cmp -s words-1.img words-2.img && cmp -s words-1.img words-3.img ||
	fail "--tar -zlz4hc: words.tar's image differs with the number of workers"
"$E" fsck -q words-2.img || fail "fsck of words.tar's image failed"

note "--tar=i: the same index whether the tar is named, piped, or parsed on one thread"
# By name and from standard input the tar is mapped; piped, it is read
# through; with --workers 2 (on any machine) the headers are parsed on a
# thread of their own, with --workers 1 where they are used.
"$E" mkfs --tar=i --workers 2 -q ix-named.img ix-posix.tar || fail "mkfs --tar=i ix-posix.tar failed"
"$E" mkfs --tar=i --workers 2 -q ix-stdin.img - <ix-posix.tar || fail "mkfs --tar=i < ix-posix.tar failed"
cat ix-posix.tar | "$E" mkfs --tar=i --workers 2 -q ix-piped.img || fail "mkfs --tar=i from a pipe failed"
"$E" mkfs --tar=i --workers 1 -q ix-one.img ix-posix.tar || fail "mkfs --tar=i --workers 1 failed"
for img in ix-stdin ix-piped ix-one; do
	cmp -s ix-named.img $img.img || fail "--tar=i: $img.img differs from the named tar's index"
done
# More entries than are parsed ahead (1024), and pax headers of 48 KiB of
# xattrs (past the 4 MiB of headers that may wait): the same index.
python3 - many.tar <<'PY'
import io, sys, tarfile
t = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
for d in range(40):
    i = tarfile.TarInfo("d%02d" % d)
    i.type, i.mode, i.mtime = tarfile.DIRTYPE, 0o755, 1700000000
    t.addfile(i)
for n in range(2600):
    data = bytes([n % 251]) * (n * 37 % 3000)
    i = tarfile.TarInfo("d%02d/f%04d" % (n % 40, n))
    i.size, i.mode, i.mtime = len(data), 0o644, 1700000000 + n
    if n % 3 == 0:
        i.pax_headers = {"SCHILY.xattr.user.big": "%04d" % n * 12000}
    t.addfile(i, io.BytesIO(data))
t.close()
PY
"$E" mkfs --tar=i --workers 2 -q many.img many.tar || fail "mkfs --tar=i many.tar failed"
"$E" mkfs --tar=i --workers 1 -q many-one.img many.tar || fail "mkfs --tar=i --workers 1 many.tar failed"
cmp -s many.img many-one.img || fail "--tar=i: many.tar's index differs between 2 workers and 1"
cat many.tar >>many.img
"$E" fsck -q many.img || fail "fsck of many.tar's index failed"
kmount many.img mnt
[ "$(getfattr --only-values -n user.big mnt/d00/f1200 2>/dev/null | head -c 8)" = 12001200 ] ||
	fail "--tar=i: d00/f1200's 48 KiB xattr did not come through"
cmp -s mnt/d07/f2567 <(python3 -c 'import sys; sys.stdout.buffer.write(bytes([2567 % 251]) * (2567 * 37 % 3000))') ||
	fail "--tar=i: d07/f2567's data differs"
kumount mnt
rc=0
"$E" mkfs --tar=i -q ix.img c.tar.z 2>ix.err || rc=$?
[ $rc -eq 1 ] && grep -q "compressed" ix.err || fail "--tar=i of a compressed tar: exit $rc, $(cat ix.err)"
rc=0
"$E" mkfs --tar=i -q ix.img gnu-gnu.tar 2>ix.err || rc=$?
[ $rc -eq 1 ] && grep -q "sparse" ix.err || fail "--tar=i of a sparse file: exit $rc, $(cat ix.err)"
rc=0
"$E" mkfs --tar=i -zlz4 -q ix.img ix-gnu.tar 2>ix.err || rc=$?
[ $rc -eq 2 ] && grep -q "no compression" ix.err || fail "--tar=i -zlz4: exit $rc, $(cat ix.err)"

note "--tar-copy: the tar, decompressed, beside the image; with --tar=i the tar it indexes"
"$E" mkfs --tar=i -q ix-plain.img ix-posix.tar || fail "mkfs --tar=i ix-posix.tar failed"
"$E" mkfs --tar -zlz4 -q f-plain.img ix-posix.tar || fail "mkfs --tar -zlz4 ix-posix.tar failed"
for z in gzip zstd xz; do
	$z -c ix-posix.tar >ix.tar.$z
	rm -f copy.tar
	"$E" mkfs --tar=i --tar-copy copy.tar -q ix-$z.img ix.tar.$z || fail "mkfs --tar=i --tar-copy ($z) failed"
	cmp copy.tar ix-posix.tar || fail "--tar=i --tar-copy ($z): the copy is not the tar"
	cmp ix-$z.img ix-plain.img || fail "--tar=i --tar-copy ($z): another index than the tar's"
	rm -f copy.tar
	"$E" mkfs --tar -zlz4 --tar-copy copy.tar -q f-$z.img - <ix.tar.$z ||
		fail "mkfs --tar --tar-copy ($z, standard input) failed"
	cmp copy.tar ix-posix.tar || fail "--tar --tar-copy ($z): the copy is not the tar"
	cmp f-$z.img f-plain.img || fail "--tar --tar-copy ($z): another image than without it"
done
cat ix-xz.img copy.tar >ix-whole.img
kmount ix-whole.img mnt
manifest mnt got.json
kumount mnt
expected want ix-posix.tar
manifest want want.json
same_manifest want.json got.json "--tar=i of an xz tar, with the copy appended"
# A stream cut short: neither the image nor the copy (nor their
# temporary files) is left; a compression erofskit does not decode
# itself, --oci and the image's own path are refused.
head -c $(($(stat -c %s ix.tar.gzip) / 2)) ix.tar.gzip >cut.tar.gz
rm -f copy.tar cut.img
expect_exit 1 "$E" mkfs --tar=i --tar-copy copy.tar -q cut.img cut.tar.gz 2>err.txt
compgen -G 'copy.tar*' >/dev/null && fail "a cut stream left a copy: $(ls copy.tar*)"
compgen -G 'cut.img*' >/dev/null && fail "a cut stream left an image"
bzip2 -c ix-posix.tar >ix.tar.bz2
expect_exit 2 "$E" mkfs --tar --tar-copy copy.tar -q bz.img ix.tar.bz2 2>err.txt
grep -q "this one is bzip2" err.txt || fail "--tar-copy of a bzip2 tar: $(cat err.txt)"
[ ! -e bz.img ] && [ ! -e copy.tar ] || fail "--tar-copy of a bzip2 tar left a file"
expect_exit 2 "$E" mkfs --tar --tar-copy same.img -q same.img ix-posix.tar 2>err.txt
grep -q "that is the image" err.txt || fail "--tar-copy IMAGE: $(cat err.txt)"

note "an archive of no entries (an empty layer) is an empty root"
# empty_root IMAGE WHAT: our fsck passes it and the kernel mounts an empty root
empty_root() {
	"$E" fsck -q "$1" || fail "fsck of the empty archive's image ($2) failed"
	kmount "$1" mnt
	[ -z "$(ls -A mnt)" ] || fail "the empty archive's image ($2) is not an empty root"
	kumount mnt
}
tar -cf none.tar -T /dev/null
gzip -c none.tar >none.tar.gz
"$E" mkfs --tar -q none.img none.tar || fail "mkfs --tar of an empty archive failed"
empty_root none.img "--tar"
"$E" mkfs --tar -q -zlz4hc none-z.img none.tar.gz || fail "mkfs --tar -zlz4hc of an empty .tar.gz failed"
empty_root none-z.img "-zlz4hc, .tar.gz"
"$E" mkfs --tar=i -q none-i.img none.tar || fail "mkfs --tar=i of an empty archive failed"
cat none.tar >>none-i.img
empty_root none-i.img "--tar=i"

note "reproducible: the same archive gives the same image"
"$E" mkfs --tar -q -zlz4hc -T0 r1.img gnu-posix.tar
"$E" mkfs --tar -q -zlz4hc -T0 --workers 1 r2.img - <gnu-posix.tar
cmp r1.img r2.img || fail "the same archive gave two images"

note "later entries replace earlier ones, as tar -x does"
mkdir -p v1/d v2/d
echo old >v1/d/f && echo keep >v1/d/other && mkdir v1/gone && echo x >v1/gone/y
# a tree under the replaced directory goes with it; its neighbour stays
mkdir -p v1/gone/sub/deep v1/stay && echo z >v1/gone/sub/deep/z && echo s >v1/stay/s
echo new >v2/d/f && echo file-now >v2/gone
ln -s nowhere v2/link-then-file; echo was-link >v1/link-then-file
tar -C v1 -cf both.tar ./d ./stay ./gone ./link-then-file
tar -C v2 -rf both.tar ./d/f ./gone ./link-then-file
# (times differ from an extraction: it leaves the root and d at "now")
"$E" mkfs --tar -q both.img both.tar || fail "mkfs --tar of replacing entries failed"
kmount both.img mnt
[ "$(cat mnt/d/f)" = new ] || fail "d/f is not the later entry's"
[ "$(cat mnt/d/other)" = keep ] || fail "d lost a child when its entry came again"
[ -f mnt/gone ] && [ "$(cat mnt/gone)" = file-now ] || fail "the directory 'gone' was not replaced by the file"
[ "$(readlink mnt/link-then-file)" = nowhere ] || fail "the file was not replaced by the symlink"
[ "$(cat mnt/stay/s)" = s ] || fail "the replaced directory's neighbour lost its file"
[ "$(find mnt | wc -l)" -eq 8 ] || { find mnt >&2; fail "the replaced entries left something behind"; }
kumount mnt
"$E" fsck -q both.img || fail "fsck of the image with replaced entries failed"

note "whole small files: namesakes side by side in the packed inode, as from a directory"
# 12 packages' copyright files among other files: the archive interleaves
# them, the packed inode must hold them one after another.
python3 - alike <<'PY'
import os, random, sys
r = random.Random(3)
words = [bytes(r.choice(b"abcdefghij") for _ in range(r.randint(3, 8))) for _ in range(200)]
def text(n):
    return b" ".join(r.choice(words) for _ in range(n))[:n]
for i in range(12):
    d = os.path.join(sys.argv[1], "pkg%02d" % i)
    os.makedirs(d)
    open(os.path.join(d, "copyright"), "wb").write(b"Copyright %d\n" % i + text(1500 + 100 * i))
    open(os.path.join(d, "notes-%d" % i), "wb").write(text(3000 + 50 * i))
PY
tar -C alike -cf alike.tar .
"$E" mkfs --tar -q -zlz4hc -Eall-fragments alike.img alike.tar || fail "mkfs --tar -Eall-fragments failed"
kmount alike.img mnt
diff -r alike mnt >&2 || fail "the image of alike.tar differs from its tree"
kumount mnt
for i in $(seq -w 0 11); do
	"$E" dump --json --path "/pkg$i/copyright" alike.img
done | python3 -c '
import json, sys
spans = sorted((e["physical"], e["length"]) for d in map(json.loads, sys.stdin)
               for e in d["extents"] if e["kind"] == "fragment")
assert len(spans) == 12, spans
for (a, n), (b, _) in zip(spans, spans[1:]):
    assert a + n == b, "fragments apart: %s" % spans
' || fail "the copyright files are not together in the packed inode"
echo PASS
