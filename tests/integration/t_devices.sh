# Images with extra devices (spec 8.3), as mkfs.erofs --blobdev makes
# them: chunk data in a blob file beside the image.
# - mkfs.erofs 1.5's blob images read back equal through fsck --device
#   --extract, dump --device --cat, and erofskit mount -o device= (both
#   I/O back ends), as the kernel reads them with device=; the drop-in
#   names take --device=FILE.
# - Without the blob, the files on it are reported, naming the device,
#   never read from the wrong place; a blob too short, the wrong number
#   of files, or a device file given to an image without devices fail
#   clearly.
# - A blob at a unified address (the slot's uniaddr, as newer mkfs.erofs
#   sets it): the image and blob concatenated read flat, without --device,
#   as the kernel mounts them; the image alone reads with --device.
# - erofskit mkfs --blobdev: the kernel reads the image with its blob
#   (device=) and the two concatenated, at 4096- and 512-byte blocks, from
#   a directory and a tar, beside compression; fsck.erofs 1.5 takes it
#   with --device; equal chunks are stored once in the blob; one worker or
#   two and the drop-in give the same bytes; what cannot work is refused
#   and a failed build leaves no blob.
# - mkfs --tar=i: the tar is the image's extra device, read beside it
#   (the kernel's device=, fsck --device, mount -o device=) as well as
#   appended.
. "$(dirname "$0")/lib.sh"

command -v mkfs.erofs >/dev/null || fail "mkfs.erofs (Debian erofs-utils) is not installed"
E=$EROFSKIT
cd "$T"

mkdir -p src/sub
head -c 1000000 /dev/urandom >src/rand
cp src/rand src/sub/rand-copy
seq 1 200000 >src/sub/text
ln src/sub/text src/text-link
head -c 4097 /dev/urandom >src/b4097
head -c 100 /dev/urandom >src/small
: >src/empty
ln -s sub/text src/symlink
# data, zeros, data, a hole to the end
{ head -c 70000 /dev/urandom; head -c 262144 /dev/zero; head -c 5000 /dev/urandom; } >src/holes
truncate -s 2M src/holes
setfattr -n user.note -v blob src/sub/text
manifest src src.json

for chunk in 4096 65536; do
	mkfs.erofs --blobdev="blob$chunk" --chunksize=$chunk "img$chunk" src >/dev/null 2>&1 ||
		fail "mkfs.erofs --blobdev --chunksize=$chunk failed"
	[ "$(stat -c %s "blob$chunk")" -gt 1000000 ] || fail "the blob holds no data"
done

note "fsck --device --extract, dump --device --cat: equal to the source"
for chunk in 4096 65536; do
	rm -rf out
	"$E" fsck -q --device "blob$chunk" --extract out "img$chunk" ||
		fail "fsck --device of mkfs.erofs's $chunk-byte chunks"
	tree_is out src.json "extraction with the blob, $chunk-byte chunks"
	"$E" dump --device "blob$chunk" --cat /sub/rand-copy "img$chunk" | cmp - src/rand ||
		fail "dump --device --cat: other bytes"
done

note "dump: the device table, and extents on the device"
"$E" dump img4096 >sb.txt
grep -q "^Device 1: .*read from nowhere (its file not given)" sb.txt || fail "dump without the blob: $(cat sb.txt)"
"$E" dump --device blob4096 img4096 >sb.txt
grep -q "^Device 1: .*read from its own file" sb.txt || fail "dump with the blob: $(cat sb.txt)"
"$E" dump --json --device blob4096 --path /b4097 img4096 >ext.json
python3 - ext.json blob4096 src/b4097 <<'PY' || fail "dump --json: the extents do not point into the blob"
import json, sys
d = json.load(open(sys.argv[1]))
blob = open(sys.argv[2], "rb").read()
want = open(sys.argv[3], "rb").read()
got = b""
for e in d["extents"]:
    assert e["device"] == 1, e
    got += blob[e["device_offset"]:e["device_offset"] + e["length"]]
assert got == want, "other bytes"
PY

note "erofskit mount -o device=: the tree, io=uring and io=pread"
for io in uring pread; do
	fmount img65536 "m-$io" "device=blob65536,io=$io"
	tree_is "m-$io" src.json "erofskit mount -o device=,io=$io"
	fumount "m-$io"
done

note "the kernel reads it alike with device= (a loop device)"
loop=$(losetup -f --show -r blob65536) || fail "losetup of the blob failed"
mkdir -p km
mount -t erofs -o "loop,ro,device=$loop" img65536 km || fail "the kernel refused device=$loop"
_mounts+=("$T/km")
tree_is km src.json "the kernel's mount with device="
kumount km
losetup -d "$loop"

note "the drop-in names: --device=FILE"
"$EROFSKIT_BUILD/dropin/fsck.erofs" --device=blob4096 --extract=dropped img4096 >/dev/null ||
	fail "fsck.erofs --device= failed"
tree_is dropped src.json "fsck.erofs --device= --extract="
"$EROFSKIT_BUILD/dropin/dump.erofs" --device=blob4096 --path=/rand --cat img4096 | cmp - src/rand ||
	fail "dump.erofs --device= --cat: other bytes"

note "without the blob: each file on it reported, naming the device"
expect_exit 1 "$E" fsck img4096 >out.txt 2>err.txt
grep -q "^erofskit fsck: /rand (nid [0-9]*): .*lies on extra device 1, which the image file does not hold" err.txt ||
	fail "fsck without the blob: $(cat err.txt)"
grep -q "/sub/text" err.txt || fail "fsck without the blob does not name /sub/text"
[ "$(grep -c "warning: img4096: extra device 1 is not in the image file and its file is not given" err.txt)" = 1 ] ||
	fail "fsck without the blob does not say once that it is missing: $(cat err.txt)"
# Files with no chunk (empty, inline, symlink) are still read.
"$E" dump --cat /empty img4096 | cmp - src/empty || fail "an empty file without the blob"
expect_exit 2 "$E" dump --cat /rand img4096 >/dev/null 2>err.txt
grep -q "extra device 1" err.txt || fail "dump --cat without the blob: $(cat err.txt)"
# dump --stats counts the blob's bytes as elsewhere; with it, as plain:
# the same file bytes either way.
"$E" dump --stats --json img4096 >st-none.json || fail "dump --stats without the blob failed"
"$E" dump --stats --json --device blob4096 img4096 >st-blob.json || fail "dump --stats with the blob failed"
python3 - st-none.json st-blob.json <<'PY' || fail "dump --stats: the blob's bytes are not counted alike"
import json, sys
none, blob = (json.load(open(p)) for p in sys.argv[1:3])
n, b = none["data_by_store"], blob["data_by_store"]
assert n["elsewhere"] > 0 and n["plain"] == 0 and none["stored_bytes"] == 0, n
assert b["elsewhere"] == 0 and b["plain"] == n["elsewhere"], (n, b)
assert none["data_bytes"] == blob["data_bytes"] == sum(n.values()) == sum(b.values())
PY
mkdir -p m-none
"$E" mount img4096 m-none 2>err.txt || fail "erofskit mount without the blob failed: $(cat err.txt)"
_mounts+=("$T/m-none")
grep -q "warning: img4096: extra device 1 is not in the image file and its file is not given (-o device=FILE)" err.txt ||
	fail "mount without the blob does not say so: $(cat err.txt)"
cmp m-none/empty src/empty || fail "mount without the blob: an empty file"
! cat m-none/rand >/dev/null 2>&1 || fail "mount without the blob read a file that lies on it"
fumount m-none

note "bad device files fail clearly"
expect_exit 2 "$E" fsck --device blob4096 --device blob4096 img4096 2>err.txt
grep -q "the image has 1 extra device, 2 files were given" err.txt || fail "two files: $(cat err.txt)"
head -c 8192 blob4096 >short
expect_exit 1 "$E" fsck --device short img4096 2>err.txt
grep -q "lies past the end of extra device 1" err.txt || fail "a short blob: $(cat err.txt)"
"$E" mkfs -q plain.img src/sub || fail "mkfs of a plain image failed"
expect_exit 2 "$E" fsck --device blob4096 plain.img 2>err.txt
grep -q "the image has no extra devices, 1 file was given" err.txt || fail "no devices: $(cat err.txt)"
expect_exit 2 "$E" fsck --device no-such-file img4096 2>err.txt
grep -q "no-such-file: No such file" err.txt || fail "a missing file: $(cat err.txt)"
expect_exit 2 "$E" mount -o device=no-such-file img4096 m-bad 2>err.txt
grep -q "no-such-file: No such file" err.txt || fail "mount, a missing file: $(cat err.txt)"

note "a blob at a unified address: flat when concatenated, or given"
# The slot (at devt_slotoff * 128 = 1152) gets blocks and uniaddr the
# way newer mkfs.erofs writes them; the superblock's checksum bit goes
# (compat byte 1032), since the slot lies under the checksum.
le32() { printf '%02x%02x%02x%02x' $(($1 & 255)) $((($1 >> 8) & 255)) $((($1 >> 16) & 255)) $((($1 >> 24) & 255)); }
[ "$(od -An -tu2 -j1112 -N2 img4096 | tr -d ' ')" = 9 ] || fail "mkfs.erofs moved the device table"
cp img4096 uni.img
python3 "$HERE/imgpatch.py" uni.img 1216 "$(le32 $(($(stat -c %s blob4096) / 4096)))$(le32 $(($(stat -c %s uni.img) / 4096)))"
python3 "$HERE/imgpatch.py" uni.img 1032 "$(printf '%02x' $(($(od -An -tu1 -j1032 -N1 uni.img) & ~1)))"
cat uni.img blob4096 >flat.img
kernel_check flat.img src.json "the image and blob concatenated"
extract_check flat.img src.json "the image and blob concatenated"
rm -rf out
"$E" fsck -q --device blob4096 --extract out uni.img || fail "fsck --device of the unified image"
tree_is out src.json "the unified image with --device"
# Given, the device takes its unified range over the image file's bytes.
rm -rf out
"$E" fsck -q --device blob4096 --extract out flat.img || fail "fsck --device of the flat image"
tree_is out src.json "the flat image with --device"
expect_exit 1 "$E" fsck uni.img 2>err.txt
grep -q "lies on extra device 1, which the image file does not hold" err.txt ||
	fail "the unified image alone: $(cat err.txt)"

note "mkfs --blobdev: the kernel, with device= and concatenated"
# kernel_blob IMAGE BLOB WHAT: the kernel's mount with the blob as its
# device, and of the two concatenated, and erofskit's extraction, equal
# the source.
kernel_blob() {
	local loop
	loop=$(losetup -f --show -r "$2") || fail "losetup of $2 failed"
	mkdir -p kb
	mount -t erofs -o "loop,ro,device=$loop" "$1" kb || fail "the kernel refused $3 with device="
	_mounts+=("$T/kb")
	tree_is kb src.json "the kernel's mount of $3 with device="
	kumount kb
	losetup -d "$loop"
	cat "$1" "$2" >kb-flat.img
	kernel_check kb-flat.img src.json "$3 with its blob appended"
	rm -rf out
	"$E" fsck -q --device "$2" --extract out "$1" || fail "fsck --device of $3"
	tree_is out src.json "erofskit's extraction of $3"
}
"$E" mkfs -q --chunksize 4096 --blobdev b4k.blob b4k.img src || fail "mkfs --blobdev failed"
kernel_blob b4k.img b4k.blob "--chunksize 4096 --blobdev"
fsck.erofs --device=b4k.blob b4k.img >fsck.txt 2>&1 || fail "fsck.erofs 1.5: $(cat fsck.txt)"
"$E" mkfs -q -b 512 --chunksize 65536 --blobdev b512.blob b512.img src || fail "mkfs -b 512 --blobdev failed"
kernel_blob b512.img b512.blob "-b 512 --chunksize 65536 --blobdev"
"$E" mkfs -q -zlz4hc --chunksize 8192 --blobdev bz.blob bz.img src || fail "mkfs -zlz4hc --blobdev failed"
kernel_blob bz.img bz.blob "-zlz4hc --chunksize 8192 --blobdev"
[ "$(stat -c %s bz.blob)" -ge 1000000 ] || fail "-zlz4hc: the random file's chunks are not in the blob"
tar --format=posix --xattrs -C src -cf src.tar .
"$E" mkfs -q --tar --chunksize 4096 --blobdev bt.blob bt.img src.tar || fail "mkfs --tar --blobdev failed"
kernel_blob bt.img bt.blob "--tar --chunksize 4096 --blobdev"

note "mkfs --blobdev: equal chunks once; the same bytes for any workers, and the drop-in"
"$E" mkfs -q -E^dedupe --chunksize 4096 --blobdev nodedupe.blob nodedupe.img src ||
	fail "mkfs -E^dedupe --blobdev failed"
[ $(($(stat -c %s b4k.blob) + 1000000)) -le "$(stat -c %s nodedupe.blob)" ] ||
	fail "the copy of a 1 MB file is stored again: $(stat -c %s b4k.blob) against $(stat -c %s nodedupe.blob)"
"$E" mkfs -q --workers 1 --chunksize 4096 --blobdev w1.blob w1.img src || fail "mkfs --workers 1 failed"
"$E" mkfs -q --workers 2 --chunksize 4096 --blobdev w2.blob w2.img src || fail "mkfs --workers 2 failed"
cmp w1.img w2.img && cmp w1.blob w2.blob || fail "--workers 1 and 2 differ"
cmp w1.img b4k.img && cmp w1.blob b4k.blob || fail "the same build twice differs"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet --chunksize=4096 --blobdev=drop.blob drop.img src ||
	fail "mkfs.erofs (drop-in) --blobdev failed"
cmp drop.img b4k.img && cmp drop.blob b4k.blob || fail "the drop-in's --blobdev differs"
"$E" mkfs --json --chunksize 4096 --blobdev j.blob j.img src >j.json || fail "mkfs --json --blobdev"
python3 -c 'import json, os, sys; d = json.load(open(sys.argv[1])); assert d["blob_bytes"] == os.path.getsize(sys.argv[2]) > 0, d' \
	j.json j.blob || fail "mkfs --json: blob_bytes is not the blob's size"

note "mkfs --tar=i: the tar beside the image, as its device"
"$E" mkfs -q --tar=i ti.img src.tar || fail "mkfs --tar=i failed"
"$E" dump ti.img | grep -q "^Device 1: .*at unified block $(($(stat -c %s ti.img) / 512)), read from nowhere (the image file ends before it" ||
	fail "--tar=i: no device slot at the image's end: $("$E" dump ti.img)"
cat ti.img src.tar >ti-flat.img
"$E" dump ti-flat.img | grep -q "^Device 1: .*read from the image file" ||
	fail "--tar=i and its tar: the device is not in the image file: $("$E" dump ti-flat.img)"
kernel_blob ti.img src.tar "--tar=i"
fmount ti.img m-ti "device=$T/src.tar"
tree_is m-ti src.json "erofskit mount -o device= of --tar=i"
fumount m-ti
expect_exit 1 "$E" fsck ti.img 2>err.txt
grep -q "warning: ti.img: extra device 1 is not in the image file" err.txt ||
	fail "--tar=i alone: the missing tar is not said: $(cat err.txt)"

note "mkfs --blobdev: refusals, and no blob from a failed build"
mkfs_refused "it needs --chunksize" --blobdev x.blob
mkfs_refused "takes a file name" --chunksize 4096 --blobdev -
mkfs_refused "the image itself" --chunksize 4096 --blobdev bad.img
mkfs_refused "not with --blobdev" --chunksize 4096 --blobdev x.blob --block-list-file x.map
expect_exit 2 "$E" mkfs -q --tar=i --chunksize 4096 --blobdev x.blob bad.img src.tar 2>err.txt
[ ! -e x.blob ] && [ ! -e bad.img ] || fail "a refused build left a file"
expect_exit 2 "$E" mkfs -q --chunksize 4096 --blobdev x.blob bad.img no-such-dir 2>err.txt
[ ! -e x.blob ] && [ ! -e bad.img ] || fail "a failed build left the blob or the image"
echo "ok"
