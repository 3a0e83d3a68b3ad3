#!/bin/bash
# Uncompressed images: what --chunksize saves, costs to build, and costs a
# reader.  For each tree, each setting builds the image REPS times (median
# wall time, the image's bytes, peak RSS), then the kernel reads every
# file of it cold (median of REPS, caches dropped before each run).
# Settings: erofskit flat (the default), whole-file dedupe, chunks of 4K,
# 64K, 1M and 4M (dedupe on, its default there), and mkfs.erofs (Debian's
# erofs-utils) flat and with --chunksize=4096.  Prints a markdown table.
# Needs root (mounts, drop_caches).
#
#   bench/chunks.sh [TREE...]     default: /tmp/data/rootfs /tmp/data/src
#   REPS=3 EROFSKIT=build/erofskit
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
REPS=${REPS:-3}
[ $# -gt 0 ] || set -- /tmp/data/rootfs /tmp/data/src

. "$here/lib.sh"
need_root "mounts, drop_caches"
need_trees "$@"
work=$(mktemp -d /tmp/erofskit-chunks.XXXXXX)
cleanup() {
	mountpoint -q "$work/mnt" 2>/dev/null && umount "$work/mnt"
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/mnt"

# build TREE CMD...: REPS builds into $work/img; "SECONDS PEAK_KB" medians.
build() {
	local tree=$1 i
	shift
	for ((i = 0; i < REPS; i++)); do
		rm -f "$work/img"
		/usr/bin/time -f "%e %M" -o "$work/time" "$@" "$work/img" "$tree" >/dev/null 2>&1 ||
			{ echo "failed: $* $work/img $tree" >&2; exit 1; }
		cat "$work/time"
	done >"$work/times"
	echo "$(cut -d' ' -f1 "$work/times" | median) $(cut -d' ' -f2 "$work/times" | median)"
}

# read_cold: the kernel reads every file of $work/img, cold; median seconds.
read_cold() {
	mount -t erofs -o loop,ro "$work/img" "$work/mnt"
	cold_read "$work/mnt"
	umount "$work/mnt"
}

echo "| tree | setting | build s | image bytes | vs flat | peak RSS KiB | kernel cold read s |"
echo "|---|---|---|---|---|---|---|"
for tree in "$@"; do
	flat=
	while IFS='|' read -r name cmd; do
		# shellcheck disable=SC2086 # cmd is several words
		read -r secs rss < <(build "$tree" $cmd)
		bytes=$(stat -c %s "$work/img")
		[ -n "$flat" ] || flat=$bytes
		cold=$(read_cold)
		printf '| %s | %s | %.2f | %s | %+.1f%% | %s | %.2f |\n' "$(basename "$tree")" "$name" \
			"$secs" "$bytes" "$(echo "($bytes - $flat) * 100 / $flat" | bc -l)" "$rss" "$cold"
	done <<EOF
erofskit flat|$EROFSKIT mkfs -q
erofskit -Ededupe (whole files)|$EROFSKIT mkfs -q -Ededupe
erofskit --chunksize 4096|$EROFSKIT mkfs -q --chunksize 4096
erofskit --chunksize 65536|$EROFSKIT mkfs -q --chunksize 65536
erofskit --chunksize 1048576|$EROFSKIT mkfs -q --chunksize 1048576
erofskit --chunksize 4194304|$EROFSKIT mkfs -q --chunksize 4194304
mkfs.erofs 1.5 flat|mkfs.erofs
mkfs.erofs 1.5 --chunksize=4096|mkfs.erofs --chunksize=4096
EOF
done
