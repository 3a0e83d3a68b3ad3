# An image that starts partway into its file (mkfs/fsck/dump --offset,
# mount -o offset=; mkfs.erofs's --offset, the kernel's fsoffset=), as an
# archive carries one after a header of its own.
# - mkfs --offset N: N zero bytes, then the bytes the image has without
#   it (the same UUID); from a directory and a tar, 4096- and 512-byte
#   blocks; to standard output too.
# - The kernel (fsoffset=), erofskit fsck and --extract, dump, erofskit
#   mount -o offset= (FUSE, both io back ends) read the whole tree; an
#   image appended to a header of other bytes reads the same way.
# - --block-list-file numbers blocks from the image's start.
# - The drop-in names take --offset=.
# - Refused: an offset that is not a multiple of 4096 (the kernel mounts
#   no other, 512-byte blocks or not), one past the file's
#   end, one that is no size; without the offset the image is not found.
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
cd "$T"
mkdir -p src/d
PYTHONPATH="$HERE" python3 -c 'import random, sys, wordtext
r = random.Random(5)
sys.stdout.buffer.write(wordtext.text(r, wordtext.words(r, 400), 300000))' >src/d/text
head -c 70000 /dev/urandom >src/random
ln -s d/text src/link
setfattr -n user.k -v v src/random
manifest src tree.json

# kernel_offset IMAGE OFFSET WHAT: the kernel's fsoffset= mount shows the tree.
kernel_offset() {
	mkdir -p km
	mount -t erofs -o "loop,ro,fsoffset=$2" "$1" km || fail "the kernel refused $1 at fsoffset=$2"
	_mounts+=("$T/km")
	tree_is km tree.json "the kernel's view of $3"
	kumount km
}

note "mkfs --offset: zeros, then the image as it is without the offset"
for setting in "-zlz4hc 8192" "-b512 -zzstd 4096" " 12288"; do
	opts=${setting% *} off=${setting##* }
	# shellcheck disable=SC2086
	"$E" mkfs -q $opts --offset "$off" at.img src || fail "mkfs $opts --offset $off failed"
	# shellcheck disable=SC2086
	"$E" mkfs -q $opts plain.img src || fail "mkfs $opts failed"
	cmp -n "$off" at.img /dev/zero || fail "$opts --offset $off: the first $off bytes are not zeros"
	cmp <(tail -c +$((off + 1)) at.img) plain.img || fail "$opts --offset $off: other bytes after the offset"
	kernel_offset at.img "$off" "mkfs $opts --offset $off"
	"$E" fsck -q --offset "$off" at.img || fail "fsck --offset $off rejects it"
	rm -rf out
	"$E" fsck -q --offset "$off" --extract out at.img || fail "fsck --offset --extract failed"
	tree_is out tree.json "the extraction of $opts --offset $off"
	"$E" dump --offset "$off" --cat /d/text at.img | cmp - src/d/text ||
		fail "dump --offset --cat: other bytes"
done
"$E" mkfs -q -zlz4hc --offset 8192 - src >stdout.img || fail "mkfs --offset to standard output failed"
"$E" mkfs -q -zlz4hc --offset 8192 at.img src
cmp stdout.img at.img || fail "mkfs --offset -: other bytes than into a file"
tar --format=posix --xattrs --xattrs-include='*' -C src -cf src.tar .
"$E" mkfs -q --tar -zlz4hc --offset 8192 tar.img src.tar || fail "mkfs --tar --offset failed"
kernel_offset tar.img 8192 "mkfs --tar --offset"

note "an image after a header of other bytes; erofskit mount -o offset="
head -c 12288 /dev/urandom >archive
cat plain.img >>archive
kernel_offset archive 12288 "an image 12288 bytes into an archive"
"$E" fsck -q --offset 12K archive || fail "fsck --offset 12K of the archive"
for io in uring pread; do
	fmount archive "fm-$io" "offset=12288,io=$io"
	tree_is "fm-$io" tree.json "erofskit mount -o offset=,io=$io"
	fumount "fm-$io"
done

note "--block-list-file counts from the image's start"
"$E" mkfs -q --offset 8192 --block-list-file with.list at.img src || fail "mkfs --offset --block-list-file"
"$E" mkfs -q --block-list-file without.list plain.img src
cmp with.list without.list || fail "the block list moved with the offset"

note "the drop-in names take --offset="
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet -zlz4hc --offset=8192 drop.img src ||
	fail "mkfs.erofs --offset= failed"
"$E" mkfs -q -zlz4hc --offset 8192 at.img src
cmp drop.img at.img || fail "the drop-in's --offset image differs"
"$EROFSKIT_BUILD/dropin/fsck.erofs" --offset=8192 drop.img >/dev/null || fail "fsck.erofs --offset= failed"
"$EROFSKIT_BUILD/dropin/dump.erofs" --offset=8192 --path=/d/text --cat drop.img | cmp - src/d/text ||
	fail "dump.erofs --offset= --cat: other bytes"

note "refused: not a 4096 multiple, past the end, no size; no image without the offset"
mkfs_refused "offset 100 is not a multiple of 4096" --offset 100
# 512-byte blocks too: the kernel finds no superblock at fsoffset=512
mkfs_refused "offset 512 is not a multiple of 4096" -b512 --offset 512
mkfs_refused "--offset 'x' is not a size" --offset x
size=$(stat -c %s at.img)
expect_exit 2 "$E" fsck --offset "$size" at.img 2>err.txt
grep -qF "offset $size: the file holds $size bytes" err.txt || fail "an offset at the end: $(cat err.txt)"
expect_exit 2 "$E" dump --offset 1z at.img 2>err.txt
grep -qF "offset '1z' is not a size" err.txt || fail "a bad dump --offset: $(cat err.txt)"
expect_exit 1 "$E" fsck at.img 2>err.txt
grep -q "bad superblock magic" err.txt || fail "without --offset: $(cat err.txt)"
echo PASS
