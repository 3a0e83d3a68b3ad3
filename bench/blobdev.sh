#!/bin/bash
# Images whose chunks live in a blob beside them (--blobdev): erofskit
# against mkfs.erofs (Debian's erofs-utils), both with --chunksize=4096.
# For each tree, each tool builds REPS times (median wall time), then the
# kernel reads every file cold through the image mounted with its blob as
# device= (a loop device), median of REPS with caches dropped before each.
# Prints a markdown table.  Needs root (mounts, loop devices, drop_caches).
#
#   bench/blobdev.sh [TREE...]     default: /tmp/data/rootfs /tmp/data/src
#   REPS=3 EROFSKIT=build/erofskit
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
REPS=${REPS:-3}
[ $# -gt 0 ] || set -- /tmp/data/rootfs /tmp/data/src

. "$here/lib.sh"
need_root "mounts, loop devices, drop_caches"
command -v mkfs.erofs >/dev/null || { echo "needs mkfs.erofs (erofs-utils)" >&2; exit 1; }
need_trees "$@"
work=$(mktemp -d /tmp/erofskit-blobdev.XXXXXX)
loop=
cleanup() {
	mountpoint -q "$work/mnt" 2>/dev/null && umount "$work/mnt"
	[ -z "$loop" ] || losetup -d "$loop" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/mnt"

# build TREE CMD: REPS builds of $work/img and $work/blob; the median s.
build() {
	local tree=$1 cmd=$2 i
	for ((i = 0; i < REPS; i++)); do
		rm -f "$work/img" "$work/blob"
		# shellcheck disable=SC2086 # cmd is several words
		/usr/bin/time -f "%e" -o "$work/time" $cmd "$tree" >/dev/null 2>&1 ||
			{ echo "failed: $cmd $tree" >&2; exit 1; }
		cat "$work/time"
	done | median
}

# read_cold: the kernel reads every file, the blob as device=; median s.
read_cold() {
	loop=$(losetup -f --show -r "$work/blob")
	mount -t erofs -o "loop,ro,device=$loop" "$work/img" "$work/mnt"
	cold_read "$work/mnt"
	umount "$work/mnt"
	losetup -d "$loop"
	loop=
}

echo "| tree | tool | build s | image bytes | blob bytes | together | kernel cold read s |"
echo "|---|---|---|---|---|---|---|"
for tree in "$@"; do
	while IFS='|' read -r name cmd; do
		cmd=${cmd//BLOB/$work/blob}
		cmd=${cmd//IMG/$work/img}
		secs=$(build "$tree" "$cmd")
		img=$(stat -c %s "$work/img")
		blob=$(stat -c %s "$work/blob")
		printf '| %s | %s | %.2f | %s | %s | %s | %.2f |\n' "$(basename "$tree")" "$name" \
			"$secs" "$img" "$blob" $((img + blob)) "$(read_cold)"
	done <<EOF
erofskit --chunksize 4096 --blobdev|$EROFSKIT mkfs -q --chunksize 4096 --blobdev BLOB IMG
mkfs.erofs --chunksize=4096 --blobdev|mkfs.erofs --chunksize=4096 --blobdev=BLOB IMG
EOF
done
