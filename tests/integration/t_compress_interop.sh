# Debian's erofs-utils 1.5 as an independent checker: its fsck.erofs
# --extract passes on our lz4 and lz4hc images (it knows no other
# algorithm); our fsck reads its mkfs.erofs lz4/lz4hc images exactly as the
# kernel does.
. "$(dirname "$0")/lib.sh"

make_compact_tree "$T/src" "$T/src.json"
for spec in "lz4 -C4096" "lz4hc -C4096" "lz4hc,12 -C16384" "lz4 -C65536" "lz4hc,9 -C262144"; do
	set -- $spec
	note "ours, $spec, checked by fsck.erofs 1.5"
	# The layouts 1.5 knows: no fragments, no shared pclusters.
	"$EROFSKIT" mkfs -q -z$1 $2 -E^fragments,^dedupe "$T/ours.img" "$T/src"
	fsck.erofs "$T/ours.img" >/dev/null || fail "fsck.erofs rejects our $spec image"
	rm -rf "$T/dx"
	fsck.erofs --extract="$T/dx" "$T/ours.img" >/dev/null ||
		fail "fsck.erofs --extract fails on our $spec image"
	# 1.5 restores contents, owners and times but no xattrs, set-id bits
	# or hard links: compare what it restores, file by file.
	python3 "$HERE/manifest_subset.py" "$T/src.json" "$T/dx" ||
		fail "fsck.erofs 1.5 extracted different contents from our $spec image"
done
# mkfs.erofs 1.5 cannot store 255-byte names ("Could not format the
# device"): its tree goes without those two entries.
cp -a "$T/src" "$T/src15"
python3 - "$T/src15" <<'PY'
import os, sys
for d, dirs, files in os.walk(os.fsencode(sys.argv[1])):
    for n in files + dirs:
        if len(n) > 200:
            os.unlink(os.path.join(d, n))
PY
for spec in "lz4 -C4096" "lz4hc -C4096" "lz4hc,12 -C65536"; do
	set -- $spec
	note "theirs, mkfs.erofs 1.5 $spec, read by erofskit"
	mkfs.erofs -z$1 $2 "$T/theirs.img" "$T/src15" >/dev/null 2>&1 ||
		fail "mkfs.erofs 1.5 failed ($spec)"
	kmount "$T/theirs.img" "$T/mnt"
	manifest "$T/mnt" "$T/truth.json"
	kumount "$T/mnt"
	"$EROFSKIT" fsck -q "$T/theirs.img" || fail "erofskit fsck rejects mkfs.erofs $spec image"
	extract_check "$T/theirs.img" "$T/truth.json" "mkfs.erofs 1.5 $spec image"
done
echo PASS
