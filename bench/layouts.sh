#!/bin/bash
# What the space-saving layouts cost a reader: images of one tree built
# with each setting, then, caches dropped before every run,
#   - the kernel reading every file of the tree (find | xargs cat), cold;
#   - erofskit mount serving a fixed random sample of whole files, cold.
# Runs alternate between the images; times are medians of REPS.  Prints a
# markdown table.  Needs root (mounts, drop_caches).
#
#   bench/layouts.sh [TREE]        default: /tmp/data/src (bench/datasets.sh)
#   ALG=lz4hc REPS=5 SAMPLE=400 \
#   SETTINGS='default= old=-Efragments=0 tailpacking=-Eztailpacking fragments=-Efragments,dedupe'
#   (a '/' in OPTIONS separates options: metabox=-Efragments/-m4096)
#   EROFSKIT=build/erofskit  (BASELINE=other/erofskit: a "baseline" row
#   built with that binary and no options, such as the previous release)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
TREE=${1:-/tmp/data/src}
ALG=${ALG:-lz4hc}
REPS=${REPS:-5}
SAMPLE=${SAMPLE:-400}
SETTINGS=${SETTINGS:-"plain=-E^fragments,^dedupe,^ztailpacking tailpacking=-Eztailpacking,^fragments fragments=-Efragments,^dedupe fragments+dedupe=-Efragments,dedupe all-fragments=-Eall-fragments,dedupe"}

. "$here/lib.sh"
need_root "mounts, drop_caches"
need_trees "$TREE"
work=$(mktemp -d /tmp/erofskit-layouts.XXXXXX)
cleanup() {
	local m
	for m in "$work"/mnt "$work"/fuse; do
		mountpoint -q "$m" 2>/dev/null && umount "$m"
	done
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/mnt" "$work/fuse"

now() { date +%s.%N; }

# The sample: the same files for every image, by a fixed seed.
(cd "$TREE" && find . -type f -size +0 | LC_ALL=C sort) >"$work/all"
python3 - "$work/all" "$SAMPLE" >"$work/sample" <<'PY'
import random, sys
files = open(sys.argv[1]).read().splitlines()
random.Random(42).shuffle(files)
print("\n".join(files[:int(sys.argv[2])]))
PY

names=()
build() {   # name, binary, options...
	local name=$1 bin=$2
	shift 2
	# shellcheck disable=SC2068
	"$bin" mkfs -q -z"$ALG" $@ "$work/$name.img" "$TREE"
	"$EROFSKIT" fsck -q "$work/$name.img"
	names+=("$name")
}
[ -n "${BASELINE:-}" ] && build baseline "$BASELINE"
for s in $SETTINGS; do
	opts=${s#*=}
	build "${s%%=*}" "$EROFSKIT" "${opts//\// }"
done

kernel_all() {
	mount -t erofs -o loop,ro "$1" "$work/mnt"
	drop_caches
	local t0; t0=$(now)
	(cd "$work/mnt" && tr '\n' '\0' <"$work/all" | xargs -0 -n 256 cat >/dev/null)
	echo "$(now) - $t0" | bc
	umount "$work/mnt"
}

fuse_sample() {
	"$EROFSKIT" mount "$1" "$work/fuse"
	drop_caches
	local t0; t0=$(now)
	(cd "$work/fuse" && while IFS= read -r f; do cat -- "$f"; done <"$work/sample" >/dev/null)
	echo "$(now) - $t0" | bc
	umount "$work/fuse"
}

for ((r = 0; r < REPS; r++)); do
	for n in "${names[@]}"; do
		kernel_all "$work/$n.img" >>"$work/$n.kernel"
		fuse_sample "$work/$n.img" >>"$work/$n.fuse"
	done
done

files=$(wc -l <"$work/all")
echo "## Reading the layouts: $(basename "$TREE"), -z$ALG"
echo
echo "$(date -u +%F), $(uname -r), $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)); $files files;"
echo "medians of $REPS runs, alternating images, caches dropped before each."
echo
echo "| setting | options | image MiB | kernel, every file (s) | erofskit mount, $SAMPLE random files (s) |"
echo "|---|---|---|---|---|"
for n in "${names[@]}"; do
	opts=""
	for s in $SETTINGS; do [ "${s%%=*}" = "$n" ] && opts=${s#*=} && opts=${opts//\// }; done
	[ "$n" = baseline ] && opts="(BASELINE binary)"
	printf "| %s | \`-z%s %s\` | %.2f | %.2f | %.2f |\n" "$n" "$ALG" "$opts" \
		"$(echo "$(stat -c %s "$work/$n.img") / 1048576" | bc -l)" \
		"$(median <"$work/$n.kernel")" "$(median <"$work/$n.fuse")"
done
