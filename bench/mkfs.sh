#!/bin/bash
# mkfs throughput and image size on a real tree: erofskit with one worker
# and with all workers, beside Debian's mkfs.erofs (lz4hc) and mksquashfs
# (same algorithm family, 128 KiB blocks).  Prints a markdown table.
#
#   bench/mkfs.sh [TREE]        default: $BENCH_DATA/rootfs (BENCH_DATA:
#                               /tmp/data), a debootstrap'ed Debian made by
#                               bench/datasets.sh
#   REPS=3 ALGS="lz4hc,12 ..." CLUSTERS="4096 65536 262144" EROFSKIT=build/erofskit
#
# Times are medians of REPS runs with the source tree in the page cache;
# compare rows of one run: absolute times drift on a shared machine.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
REPS=${REPS:-3}
ALGS=${ALGS:-"lz4hc,12 deflate,9 zstd,15 lzma,6"}
CLUSTERS=${CLUSTERS:-"4096 65536 262144"}
DATA=${BENCH_DATA:-/tmp/data}
TREE=${1:-$DATA/rootfs}
CPUS=$(nproc)

if [ ! -d "$TREE" ]; then
	if [ -z "${1:-}" ] && [ "$(id -u)" = 0 ]; then
		echo "building the data sets with bench/datasets.sh ..." >&2
		bash "$here/datasets.sh" "$DATA" >&2
	else
		echo "no tree at $TREE; using /usr" >&2
		TREE=/usr
	fi
fi
[ -x "$EROFSKIT" ] || { echo "build erofskit first (make)" >&2; exit 1; }
command -v mkfs.erofs >/dev/null || { echo "needs Debian's erofs-utils" >&2; exit 1; }
command -v mksquashfs >/dev/null || { echo "needs squashfs-tools" >&2; exit 1; }

work=$(mktemp -d /tmp/erofskit-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
input=$(find "$TREE" -xdev -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
files=$(find "$TREE" -xdev -type f | wc -l)
# Warm the page cache: every tool reads the tree from memory.
tar -C "$TREE" -cf - . >/dev/null 2>&1 || true

# run LABEL IMAGE CMD...: median seconds, peak RSS and image size.
run() {
	local label=$1 img=$2 i t
	shift 2
	: > "$work/times"
	for i in $(seq "$REPS"); do
		rm -f "$img"
		/usr/bin/time -f "%e %M" -o "$work/t1" "$@" >/dev/null 2>"$work/err" ||
			{ cat "$work/err" >&2; echo "FAILED: $label" >&2; return 1; }
		cat "$work/t1" >> "$work/times"
	done
	t=$(sort -n "$work/times" | awk -v n="$REPS" 'NR == int((n + 1) / 2) {print $1}')
	rss=$(sort -k2 -n "$work/times" | tail -1 | awk '{printf "%.0f", $2 / 1024}')
	size=$(stat -c %s "$img")
	echo "$label|$t|$size|$rss" >> "$work/results"
}

squash_comp() {
	case $1 in
	lz4hc*) echo "-comp lz4 -Xhc" ;;
	deflate*) echo "-comp gzip -Xcompression-level 9" ;;
	zstd*) echo "-comp zstd -Xcompression-level 15" ;;
	lzma*) echo "-comp xz" ;;
	esac
}

: > "$work/results"
for alg in $ALGS; do
	for C in $CLUSTERS; do
		run "erofskit|$alg|$C|1" "$work/e.img" \
			"$EROFSKIT" mkfs -q -z"$alg" -C"$C" -T0 --all-root --workers 1 "$work/e.img" "$TREE"
		run "erofskit|$alg|$C|$CPUS" "$work/e.img" \
			"$EROFSKIT" mkfs -q -z"$alg" -C"$C" -T0 --all-root --workers "$CPUS" "$work/e.img" "$TREE"
		case $alg in lz4hc*)
			run "mkfs.erofs 1.5|$alg|$C|1" "$work/d.img" \
				mkfs.erofs -z"$alg" -C"$C" -T0 --all-root "$work/d.img" "$TREE" ;;
		esac
	done
	# shellcheck disable=SC2046
	run "mksquashfs|$(squash_comp "$alg" | awk '{print $2}')|131072|$CPUS" "$work/s.img" \
		mksquashfs "$TREE" "$work/s.img" -noappend -all-root -no-progress -quiet \
		-b 131072 -processors "$CPUS" $(squash_comp "$alg")
done

echo "## mkfs on $TREE ($files files, $(awk -v b="$input" 'BEGIN {printf "%.1f", b / 1048576}') MiB)"
echo
echo "Machine: $CPUS CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), kernel $(uname -r); median of $REPS runs."
echo
echo "| tool | algorithm | cluster | workers | seconds | input MiB/s | image bytes | peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|"
while IFS='|' read -r tool alg C w t size rss; do
	rate=$(awk -v b="$input" -v t="$t" 'BEGIN {printf "%.1f", (t > 0) ? b / 1048576 / t : 0}')
	echo "| $tool | $alg | $C | $w | $t | $rate | $size | $rss |"
done < "$work/results"
echo

# The targets, computed from the rows above.
awk -F'|' -v cpus="$CPUS" '
	$1 == "erofskit" && $4 == 1 { one[$2 "|" $3] = $5 }
	$1 == "erofskit" && $4 == cpus { all[$2 "|" $3] = $5; size[$2 "|" $3] = $6 }
	$1 ~ /mkfs.erofs/ { deb[$2 "|" $3] = $5; dsize[$2 "|" $3] = $6 }
	END {
		for (k in deb)
			printf "- %s -C%s: image %.2f%% of mkfs.erofs 1.5 (target <= 101%%), %.2fx its speed with %d workers (target >= 1.5x)\n",
				substr(k, 1, index(k, "|") - 1), substr(k, index(k, "|") + 1),
				100 * size[k] / dsize[k], deb[k] / all[k], cpus
		for (k in one)
			printf "- %s -C%s: %d workers %.2fx faster than 1 (target >= 1.7x on 2 cores)\n",
				substr(k, 1, index(k, "|") - 1), substr(k, index(k, "|") + 1), cpus,
				one[k] / all[k]
	}' "$work/results" | sort
