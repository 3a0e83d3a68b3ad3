# mkfs with an EROFS image as its source: the image's tree (every file
# type, owners, nanosecond mtimes, xattrs with long prefixes, ACLs, hard
# links, a 5 GiB sparse file's holes) goes into a new image of other compression,
# blocks, clusters and layouts, read without a mount.  Upstream images of
# every layout, rebuilt: the kernel sees in the new image what it saw in
# the old one.  The builds are reproducible and the same for any worker
# count; mkfs.erofs --clean=data takes the source as upstream's rebuild
# mode does; a damaged source fails cleanly (t_corrupt_corpus runs the
# whole corrupt corpus through it).
. "$(dirname "$0")/lib.sh"

IMAGES=$FIXTURES/images
command -v fsck.erofs >/dev/null || fail "fsck.erofs (Debian erofs-utils) is not installed"

# rebuild SOURCE_NAME OPTIONS...: out.img from the fixture image, checked
# by our fsck and by the kernel against the fixture's own kernel view (or
# $WANT's, when set).
rebuild() {
	local name=$1
	shift
	note "$name -> $*"
	rm -f "$T/out.img"
	"$EROFSKIT" mkfs -q "$@" "$T/out.img" "$IMAGES/$name.img" ||
		fail "mkfs $* from $name.img failed"
	"$EROFSKIT" fsck -q "$T/out.img" || fail "$name -> $*: not clean"
	kernel_check "$T/out.img" "${WANT:-$IMAGES/$name.manifest.json}" "$name rebuilt with $*"
}

rebuild plain-4k -zlz4hc -C65536 -E^fragments,^dedupe   # what fsck.erofs 1.5 reads
fsck.erofs "$T/out.img" >"$T/fsck.log" 2>&1 ||
	{ cat "$T/fsck.log" >&2; fail "Debian's fsck.erofs rejected the rebuilt lz4hc image"; }
rebuild plain-512 -zlz4 -C65536 -b 4096 -Eztailpacking
rebuild lzma-allfragments-1m -b 512
# Its 5 GiB file is stored compressed, zeros and all: decoding and checking
# it took 2 of the sanitized test's 2 minutes (the holes: chunked-64k).
python3 "$HERE/manifest_filter.py" --drop-path /sparse/sparse-5g.bin \
	"$IMAGES/zstd-48bit.manifest.json" "$T/48bit.json"
WANT=$T/48bit.json rebuild zstd-48bit -zzstd -C1048576 -Eall-fragments,dedupe -E48bit \
	--exclude-path=sparse/sparse-5g.bin
rebuild metabox -zdeflate -C16384 -m4096
rebuild long-xattr-prefix -zlzma -C131072 --xattr-prefix trusted.overlay.
rebuild chunked-64k --chunksize 4096
rebuild zstd-fragments-dedupe -zlz4hc -E^fragments
rebuild deflate-dict4k

note "the 5 GiB sparse file's holes stay holes (its null chunks in chunked-64k)"
"$EROFSKIT" mkfs -q "$T/sparse.img" "$IMAGES/chunked-64k.img" || fail "mkfs from chunked-64k"
size=$(stat -c %s "$T/sparse.img")
[ "$size" -lt $((64 << 20)) ] || fail "the rebuilt image holds the holes: $size bytes"

note "reproducible, and the same for any worker count"
"$EROFSKIT" mkfs -q -zzstd -Eall-fragments --workers 1 "$T/w1.img" "$IMAGES/lz4hc-64k.img"
"$EROFSKIT" mkfs -q -zzstd -Eall-fragments --workers 2 "$T/w2.img" "$IMAGES/lz4hc-64k.img"
"$EROFSKIT" mkfs -q -zzstd -Eall-fragments --workers 2 "$T/w3.img" "$IMAGES/lz4hc-64k.img"
cmp -s "$T/w1.img" "$T/w2.img" || fail "--workers 1 and 2 gave different images"
cmp -s "$T/w2.img" "$T/w3.img" || fail "the same rebuild twice gave different images"

note "an image of erofskit's own, rebuilt, equals one built from the tree"
make_fixture_tree "$T/tree"
rm -f "$T/tree/sparse/sparse-5g.bin"
"$EROFSKIT" mkfs -q -zlz4hc -T 1700000000 "$T/from-tree.img" "$T/tree"
"$EROFSKIT" mkfs -q -zlzma -C65536 "$T/first.img" "$T/tree"
"$EROFSKIT" mkfs -q -zlz4hc -T 1700000000 "$T/from-image.img" "$T/first.img"
cmp -s "$T/from-tree.img" "$T/from-image.img" ||
	fail "rebuilding an image gave other bytes than building its tree"

note "mkfs.erofs --clean=data DESTINATION SOURCE.erofs"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet --clean=data -zlz4hc -T 1700000000 \
	"$T/dropin.img" "$T/first.img" || fail "mkfs.erofs --clean=data from an image failed"
cmp -s "$T/from-image.img" "$T/dropin.img" || fail "mkfs.erofs --clean=data built another image"

note "path rules and options apply to an image source as to a directory"
"$EROFSKIT" mkfs -q --exclude-path=many --all-root "$T/rules.img" "$T/first.img"
"$EROFSKIT" dump --ls /many "$T/rules.img" >/dev/null 2>&1 && fail "--exclude-path=many kept /many"
owner=$("$EROFSKIT" dump --json --path /owners/uid-123456 "$T/rules.img" |
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["uid"], d["gid"])')
[ "$owner" = "0 0" ] ||
	fail "--all-root did not make /owners/uid-123456 root's"

note "a damaged source: exit 1, no image"
head -c 3000 "$T/first.img" >"$T/cut.img"
expect_exit 1 "$EROFSKIT" mkfs -q "$T/bad.img" "$T/cut.img" 2>"$T/err"
grep -q "cut.img" "$T/err" || fail "the error does not name the source: $(cat "$T/err")"
[ ! -e "$T/bad.img" ] || fail "a failed rebuild left an image"
echo PASS
