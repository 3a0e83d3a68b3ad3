# The kernel oracle: the fixture tree (every file type, boundary sizes,
# a sparse 5 GiB file, a 600-entry directory, 255-byte names, long symlinks,
# hard links across directories, xattrs and ACLs, odd modes and owners,
# nanosecond mtimes) -> erofskit mkfs -> mount -> every attribute of every
# entry equals the source; erofskit fsck --extract agrees too.
. "$(dirname "$0")/lib.sh"

make_fixture_tree "$T/src"
manifest "$T/src" "$T/src.json"
for bs in 4096 512; do
	note "block size $bs"
	"$EROFSKIT" mkfs -q -b $bs "$T/img$bs" "$T/src"
	"$EROFSKIT" fsck -q "$T/img$bs"
	kmount "$T/img$bs" "$T/mnt$bs"
	manifest "$T/mnt$bs" "$T/kernel$bs.json"
	kumount "$T/mnt$bs"
	same_manifest "$T/src.json" "$T/kernel$bs.json" "kernel view (-b $bs)"
	"$EROFSKIT" fsck -q --extract "$T/out$bs" "$T/img$bs"
	tree_is "$T/out$bs" "$T/src.json" "erofskit fsck --extract (-b $bs)"
done
# The sparse 5 GiB file costs no space: the image stays small.
size=$(stat -c %s "$T/img4096")
[ "$size" -lt $((16 << 20)) ] || fail "image of a mostly sparse tree is $size bytes"
echo PASS
