# mkfs options taken from mkfs.erofs, read as Debian's mkfs.erofs 1.5
# reads them.
# - --ignore-mtime, -Eforce-inode-compact, -Eforce-inode-extended: every
#   inode of erofskit's image has the core (32 or 64 bytes) mkfs.erofs
#   gives it, and the kernel shows each file's own mtime where it is kept
#   and the image's epoch where --ignore-mtime let it go; an owner a
#   compact inode cannot hold fails -Eforce-inode-compact (exit 2, the file
#   named, the image there before kept), as upstream refuses it.
# - --uid-offset, --gid-offset: every owner shifted (the kernel shows it);
#   one shifted past 2^32-1 fails, named.
# - -Enosbcrc: no sb_csum feature, as upstream's; the kernel and
#   fsck.erofs 1.5 take the image.
# - --hard-dereference: each name of a hard-linked file is an inode of its
#   own with the same bytes (the kernel shows one link each); a tar source
#   refuses it.
# An archive source and the drop-in name take the same options.
. "$(dirname "$0")/lib.sh"

command -v mkfs.erofs >/dev/null || fail "mkfs.erofs (Debian erofs-utils) is not installed"
E=$EROFSKIT
cd "$T"
COMMON=@1700000000.123456789
mkdir -p src/d/e
for i in 1 2 3 4 5 6; do echo "file $i" >"src/d/f$i"; done
echo old >src/old
echo newer >src/d/e/newer
echo far >src/far
echo big-owner >src/d/owned
ln -s d/f1 src/link
chown 70000:70000 src/d/owned
touch -h -d "$COMMON" src src/d src/d/e src/d/f* src/link src/d/owned
touch -d @1000000 src/old
touch -d @1700000123.5 src/d/e/newer
touch -d @2100000000 src/far
touch -d "$COMMON" src/d/e

# forms IMAGE: "PATH compact|extended" for every path the kernel lists,
# from dump --json.
forms() {
	kmount "$1" "$T/mnt"
	(cd "$T/mnt" && find . | sed 's|^\.||; s|^$|/|') | LC_ALL=C sort >paths.txt
	kumount "$T/mnt"
	# One interpreter for every path (one each: 46 s of the test, now 8).
	python3 - "$E" "$1" paths.txt <<'PY' || fail "dump --json of $1"
import json, subprocess, sys
tool, image, paths = sys.argv[1:]
for p in open(paths).read().splitlines():
    d = json.loads(subprocess.run([tool, "dump", "--json", "--path", p, image],
                                  capture_output=True, check=True).stdout)
    print(d["path"], "extended" if d["extended"] else "compact")
PY
}

# mtimes DIR: "PATH SECONDS.NANOSECONDS" for every path under DIR.
mtimes() {
	(cd "$1" && find . -printf '%p %T@\n' | LC_ALL=C sort)
}

# both NAME OPTION...: erofskit's and mkfs.erofs's images with the
# options; every inode's form the same in both.
both() {
	local name=$1
	shift
	"$E" mkfs -q "$@" "$name.img" src 2>err.txt || fail "mkfs $*: $(cat err.txt)"
	"$E" fsck -q "$name.img" || fail "mkfs $*: the image is not clean"
	mkfs.erofs "$@" "$name-theirs.img" src >/dev/null 2>&1 || fail "mkfs.erofs $* failed"
	forms "$name.img" >"$name.forms"
	forms "$name-theirs.img" >"$name-theirs.forms"
	diff "$name-theirs.forms" "$name.forms" >&2 ||
		fail "$*: inode forms differ from mkfs.erofs's (left: theirs)"
}

mtimes src >source.mtimes

note "default: every mtime kept, 64-byte inodes only where one needs it"
"$E" mkfs -q default.img src
kmount default.img "$T/mnt"
mtimes "$T/mnt" >default.mtimes
kumount "$T/mnt"
diff source.mtimes default.mtimes >&2 || fail "the default image changed mtimes"
forms default.img >default.forms
grep -q "^/d/f1 compact$" default.forms || fail "a file with the common mtime is not compact"
grep -q "^/old extended$" default.forms || fail "a file with its own mtime is not extended"

note "--ignore-mtime: compact where only an mtime stood in the way, as mkfs.erofs"
both ignore --ignore-mtime
grep -c extended ignore.forms | grep -qx 1 || fail "--ignore-mtime: extended inodes: $(grep extended ignore.forms)"
grep -q "^/d/owned extended$" ignore.forms || fail "--ignore-mtime: the big owner lost its extended inode"
kmount ignore.img "$T/mnt"
mtimes "$T/mnt" >ignore.mtimes
kumount "$T/mnt"
# The owner's inode is extended anyway and keeps its mtime; every other
# path shows the epoch, the tree's most common mtime.
common=$(grep '^\./d/f1 ' source.mtimes | cut -d' ' -f2)
awk -v c="$common" '$1 == "./d/owned" { print; next } { print $1, c }' source.mtimes >ignore.expected
diff ignore.expected ignore.mtimes >&2 || fail "--ignore-mtime: mtimes are not the epoch's (left: expected)"
cmp -s ignore.img default.img && fail "--ignore-mtime changed nothing"
[ "$(stat -c %s ignore.img)" -le "$(stat -c %s default.img)" ] || fail "--ignore-mtime made a bigger image"

note "-E48bit --ignore-mtime: seconds kept where a compact 48-bit inode reaches them"
"$E" mkfs -q -E48bit --ignore-mtime ignore48.img src
kmount ignore48.img "$T/mnt"
got=$(stat -c %Y "$T/mnt/d/e/newer")
kumount "$T/mnt"
[ "$got" = 1700000123 ] || fail "-E48bit --ignore-mtime: newer shows second $got, not 1700000123"
forms ignore48.img >ignore48.forms
grep -q "^/d/e/newer compact$" ignore48.forms || fail "-E48bit --ignore-mtime: newer is not compact"

note "-Eforce-inode-extended: every inode 64 bytes, every mtime kept, as mkfs.erofs"
both extended -Eforce-inode-extended
grep -q compact extended.forms && fail "-Eforce-inode-extended left compact inodes: $(grep compact extended.forms)"
kmount extended.img "$T/mnt"
mtimes "$T/mnt" >extended.mtimes
kumount "$T/mnt"
diff source.mtimes extended.mtimes >&2 || fail "-Eforce-inode-extended changed mtimes"

note "-Eforce-inode-compact: every inode 32 bytes, as mkfs.erofs, once no owner is too big"
cp default.img kept.img
expect_exit 2 "$E" mkfs -q -Eforce-inode-compact kept.img src 2>err.txt
grep -q "src/d/owned (owner 70000:70000): an owner or group over 65535" err.txt ||
	fail "-Eforce-inode-compact with a big owner: $(cat err.txt)"
cmp -s kept.img default.img || fail "a failed build replaced the image that was there"
mkfs.erofs -Eforce-inode-compact refused.img src >/dev/null 2>&1 &&
	fail "mkfs.erofs took a big owner with -Eforce-inode-compact (the oracle changed?)"
both compact -Eforce-inode-compact --exclude-path=d/owned
grep -q extended compact.forms && fail "-Eforce-inode-compact left extended inodes: $(grep extended compact.forms)"
"$E" mkfs -q -Eforce-inode-compact,^force-inode-compact undone.img src 2>/dev/null
cmp -s undone.img default.img || fail "-E^force-inode-compact did not undo it"

note "an archive source: the same forms"
tar --format=posix -C src -cf src.tar .
"$E" mkfs -q --tar --ignore-mtime tar.img src.tar
grep -v '^/d/owned ' ignore.forms >ignore-dir.forms
forms tar.img | grep -v '^/d/owned ' >tar.forms
diff ignore-dir.forms tar.forms >&2 || fail "--tar --ignore-mtime: forms differ from the directory's"
expect_exit 2 "$E" mkfs -q --tar -Eforce-inode-compact tar2.img src.tar 2>err.txt
grep -q "d/owned (owner 70000:70000)" err.txt || fail "--tar -Eforce-inode-compact: $(cat err.txt)"

note "the drop-in name takes them, for the same image"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet --ignore-mtime drop.img src ||
	fail "mkfs.erofs (drop-in) --ignore-mtime failed"
cmp drop.img ignore.img || fail "the drop-in's --ignore-mtime image differs"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet --preserve-mtime -Eforce-inode-extended drop.img src ||
	fail "mkfs.erofs (drop-in) -Eforce-inode-extended failed"
cmp drop.img extended.img || fail "the drop-in's -Eforce-inode-extended image differs"

note "--uid-offset/--gid-offset: every owner shifted, as a user namespace maps it"
owners() { (cd "$1" && find . -printf '%p %U %G\n' | LC_ALL=C sort); }
owners src | awk '{ print $1, $2 + 100000, $3 + 200000 }' >shifted.expected
"$E" mkfs -q --uid-offset 100000 --gid-offset 200000 shifted.img src
"$E" mkfs -q --tar --uid-offset 100000 --gid-offset 200000 shifted-tar.img src.tar
for img in shifted shifted-tar; do
	kmount $img.img "$T/mnt"
	owners "$T/mnt" >$img.owners
	kumount "$T/mnt"
	diff shifted.expected $img.owners >&2 || fail "$img: owners are not shifted (left: expected)"
done
"$E" mkfs -q --force-uid 5 --uid-offset 10 forced.img src
kmount forced.img "$T/mnt"
owners "$T/mnt" | awk '$2 != 15 { bad = 1 } END { exit !bad }' && fail "--force-uid 5 --uid-offset 10: an owner is not 15"
kumount "$T/mnt"
expect_exit 2 "$E" mkfs -q --uid-offset 4294967295 over.img src 2>err.txt
grep -q "src/d/owned: owner 70000:70000 with the id offsets is over 4294967295" err.txt ||
	fail "an owner shifted out of range: $(cat err.txt)"
[ ! -e over.img ] || fail "an image was left after an owner overflowed"
expect_exit 2 "$E" mkfs -q --tar --gid-offset 4294967295 over.img src.tar 2>err.txt
grep -q "entry .* './d/owned': owner 70000:70000 with the id offsets" err.txt ||
	fail "--tar: an owner shifted out of range: $(cat err.txt)"
expect_exit 2 "$E" mkfs -q --uid-offset -1 over.img src 2>err.txt
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet --uid-offset=100000 --gid-offset=200000 drop.img src ||
	fail "mkfs.erofs (drop-in) --uid-offset failed"
cmp drop.img shifted.img || fail "the drop-in's --uid-offset image differs"

note "-Enosbcrc: no superblock checksum, as mkfs.erofs; the kernel and fsck.erofs take it"
"$E" mkfs -q -Enosbcrc nocrc.img src
mkfs.erofs -Enosbcrc nocrc-theirs.img src >/dev/null 2>&1 || fail "mkfs.erofs -Enosbcrc failed"
"$E" dump nocrc.img | grep '^Features:' >nocrc.features
"$E" dump nocrc-theirs.img | grep '^Features:' >nocrc-theirs.features
grep -q sb_csum nocrc.features && fail "-Enosbcrc: $(cat nocrc.features)"
grep -q sb_csum nocrc-theirs.features && fail "mkfs.erofs -Enosbcrc kept sb_csum (the oracle changed?)"
"$E" dump default.img | grep -q '^Features:.*sb_csum' || fail "the default image has no sb_csum: the test proves nothing"
fsck.erofs nocrc.img >fsck.out 2>&1 || fail "fsck.erofs 1.5 on the -Enosbcrc image: $(cat fsck.out)"
"$E" fsck -q nocrc.img || fail "-Enosbcrc: the image is not clean"
kmount nocrc.img "$T/mnt"
mtimes "$T/mnt" >nocrc.mtimes
diff -r src "$T/mnt" >&2 || fail "-Enosbcrc: the kernel's tree differs from the source"
kumount "$T/mnt"
diff source.mtimes nocrc.mtimes >&2 || fail "-Enosbcrc changed mtimes"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet -Enosbcrc drop.img src || fail "mkfs.erofs (drop-in) -Enosbcrc failed"
cmp drop.img nocrc.img || fail "the drop-in's -Enosbcrc image differs"

note "--hard-dereference: a hard link's names each an inode of their own"
mkdir -p hl
head -c 100000 /dev/urandom >hl/a
ln hl/a hl/b
ln hl/a hl/c
"$E" mkfs -q --hard-dereference hl.img hl || fail "mkfs --hard-dereference failed"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet --hard-dereference hl-drop.img hl ||
	fail "mkfs.erofs (drop-in) --hard-dereference failed"
cmp hl.img hl-drop.img || fail "the drop-in's --hard-dereference differs"
kmount hl.img hlm
for f in a b c; do
	[ "$(stat -c %h "hlm/$f")" = 1 ] || fail "--hard-dereference: $f has $(stat -c %h "hlm/$f") links"
	cmp "hlm/$f" hl/a || fail "--hard-dereference: $f has other bytes"
done
[ "$(stat -c %i hlm/a)" != "$(stat -c %i hlm/b)" ] || fail "--hard-dereference: a and b share an inode"
kumount hlm
"$E" mkfs -q hl-linked.img hl || fail "mkfs of the links failed"
kmount hl-linked.img hlm
[ "$(stat -c %h hlm/a)" = 3 ] || fail "without --hard-dereference the links are not kept"
kumount hlm
tar -C hl -cf hl.tar .
expect_exit 2 "$E" mkfs -q --tar --hard-dereference hl-tar.img hl.tar 2>err.txt
grep -q "hard-dereference takes a directory source" err.txt || fail "a tar with --hard-dereference: $(cat err.txt)"
[ ! -e hl-tar.img ] || fail "a refused build left an image"

note "--root-xattr-isize: the root's xattr area padded, its xattrs intact"
mkdir -p rx/d
echo inside >rx/d/f
setfattr -n user.root -v v1 rx
for tree in rx rx/d; do
	"$E" mkfs -q --root-xattr-isize 1024 rx.img "$tree" || fail "mkfs --root-xattr-isize failed"
	"$E" dump --json --path / rx.img >rx.json || fail "dump of the root"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["xattr_size"] == 1024, d["xattr_size"]' rx.json ||
		fail "--root-xattr-isize 1024 ($tree): the root's xattr area is not 1024 bytes"
	"$E" fsck -q rx.img || fail "--root-xattr-isize: our fsck refuses the image"
	fsck.erofs rx.img >fsck.txt 2>&1 || fail "--root-xattr-isize: fsck.erofs 1.5 refuses it: $(cat fsck.txt)"
	kmount rx.img rxm
	[ "$(getfattr --absolute-names -d -m - rxm | grep -c '^[a-z]')" = "$([ "$tree" = rx ] && echo 1 || echo 0)" ] ||
		fail "--root-xattr-isize ($tree): the kernel lists other xattrs: $(getfattr -d -m - rxm)"
	[ "$tree" = rx/d ] || [ "$(getfattr --only-values -n user.root rxm)" = v1 ] || fail "the root's xattr is lost"
	kumount rxm
done
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet --root-xattr-isize=1024 rx-drop.img rx/d ||
	fail "mkfs.erofs (drop-in) --root-xattr-isize failed"
cmp rx-drop.img rx.img || fail "the drop-in's --root-xattr-isize differs"
expect_exit 2 "$E" mkfs -q --root-xattr-isize 300000 rx-bad.img rx 2>err.txt
grep -q "an inode's xattrs take at most 262148 bytes" err.txt || fail "a huge --root-xattr-isize: $(cat err.txt)"
