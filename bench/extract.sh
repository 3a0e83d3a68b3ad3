#!/bin/bash
# Full extraction of a real tree: erofskit fsck --extract with one worker
# and with all workers, beside Debian's fsck.erofs --extract (lz4hc images)
# and a multi-threaded unsquashfs of squashfs images of the same tree.
# Caches are dropped before every run; times are medians of REPS runs.
#
#   bench/extract.sh [TREE]     default: $BENCH_DATA/rootfs (BENCH_DATA:
#                               /tmp/data), made by bench/datasets.sh
#   REPS=3 ALGS="lz4hc,12 zstd,15 lzma,6 deflate,9" CLUSTERS="4096 16384 32768 65536 262144"
#   MKFS_OPTS (more erofskit mkfs options, e.g. -E^fragments,^dedupe)
#
# Needs root (drop_caches).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
REPS=${REPS:-3}
ALGS=${ALGS:-"lz4hc,12 zstd,15 lzma,6 deflate,9"}
CLUSTERS=${CLUSTERS:-"4096 16384 32768 65536 262144"}
MKFS_OPTS=${MKFS_OPTS:-}
DATA=${BENCH_DATA:-/tmp/data}
TREE=${1:-$DATA/rootfs}
CPUS=$(nproc)

[ "$(id -u)" = 0 ] || { echo "needs root (drop_caches)" >&2; exit 1; }
if [ ! -d "$TREE" ]; then
	if [ -z "${1:-}" ]; then
		bash "$here/datasets.sh" "$DATA" >&2
	else
		echo "no tree at $TREE; using /usr" >&2
		TREE=/usr
	fi
fi
work=$(mktemp -d /tmp/erofskit-extract.XXXXXX)
trap 'mountpoint -q "$work/target" && umount "$work/target"; rm -rf "$work"' EXIT
input=$(find "$TREE" -xdev -type f -printf '%s\n' | awk '{s+=$1} END {print s}')

# Every run extracts into a freshly made ext4 (a loop-mounted file), so
# that each tool meets the same filesystem state: ext4's inode allocator
# slows down markedly right after many deletions, which would otherwise
# favour whichever tool runs first.
target=$work/target
fresh_target() {
	mountpoint -q "$target" && umount "$target"
	rm -f "$work/fs.img"
	truncate -s 4G "$work/fs.img"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$work/fs.img"
	mkdir -p "$target"
	mount -o loop "$work/fs.img" "$target"
}

# once CMD...: one run into a fresh target, caches dropped; prints
# "seconds peak-RSS-KiB CPU-seconds" (user + system), or "- - -" when it
# failed.
once() {
	fresh_target
	sync
	echo 3 > /proc/sys/vm/drop_caches
	local t0=$EPOCHREALTIME t1
	if /usr/bin/time -f "%M %U %S" -o "$work/t1" "$@" >/dev/null 2>"$work/err"; then
		t1=$EPOCHREALTIME
		# elapsed to the millisecond (time(1) gives hundredths)
		awk -v a="$t0" -v b="$t1" '{printf "%.3f %d %.2f\n", b - a, $1, $2 + $3}' "$work/t1"
	else
		cat "$work/err" >&2
		echo "FAILED: $*" >&2
		echo "- - -"
	fi
	umount "$target"
}

# median FILE COLUMN: the median of a column of numbers (0 if none).
median() {
	sort -n -k"$2" "$1" | awk -v c="$2" '{v[NR] = $c} END {print NR ? v[int((NR + 1) / 2)] : 0}'
}

# timed CMD...: median seconds and peak RSS (MiB) of REPS runs.
timed() {
	local i
	: > "$work/times"
	for i in $(seq "$REPS"); do
		once "$@" | grep -v '^-' >> "$work/times" || true
	done
	echo "$(median "$work/times" 1) $(( $(median "$work/times" 2) / 1024 ))"
}

squash_comp() {
	case $1 in
	lz4hc*) echo "-comp lz4 -Xhc" ;;
	deflate*) echo "-comp gzip -Xcompression-level 9" ;;
	zstd*) echo "-comp zstd -Xcompression-level 15" ;;
	lzma*) echo "-comp xz" ;;
	esac
}

rows=$work/rows
: > "$rows"
for alg in $ALGS; do
	# shellcheck disable=SC2046
	mksquashfs "$TREE" "$work/sq.img" -noappend -no-progress -quiet -b 131072 \
		-processors "$CPUS" $(squash_comp "$alg") >/dev/null
	# (command substitutions, not < <(...): a run must end, unmounting
	# its target, before the next one starts)
	read -r sq _ <<< "$(timed unsquashfs -q -n -processors "$CPUS" \
			    -d "$target/out" "$work/sq.img")"
	for C in $CLUSTERS; do
		"$EROFSKIT" mkfs -q -z"$alg" -C"$C" $MKFS_OPTS "$work/e.img" "$TREE"
		# One worker and all workers alternate, so that both meet the
		# same moments of a shared host; the speed-up is the median of
		# the pairs' ratios.
		: > "$work/pairs"
		for i in $(seq "$REPS"); do
			read -r t1 m1 c1 <<< "$(once "$EROFSKIT" fsck -q --workers 1 \
					     --extract "$target/out" "$work/e.img")"
			read -r tn mn cn <<< "$(once "$EROFSKIT" fsck -q --workers "$CPUS" \
					     --extract "$target/out" "$work/e.img")"
			echo "$t1 $m1 $c1 $tn $mn $cn" |
				awk '$1 != "-" && $4 != "-" {print $0, $1 / $4}' >> "$work/pairs"
		done
		one=$(median "$work/pairs" 1)
		rss1=$(( $(median "$work/pairs" 2) / 1024 ))
		cpu1=$(median "$work/pairs" 3)
		all=$(median "$work/pairs" 4)
		rssn=$(( $(median "$work/pairs" 5) / 1024 ))
		cpun=$(median "$work/pairs" 6)
		ratio=$(median "$work/pairs" 7)
		# The spread of the pairs' ratios shows how much the host moved
		# them; the CPU times show whether the workers did extra work.
		spread=$(sort -n -k7 "$work/pairs" | awk 'NR == 1 {lo = $7} {hi = $7} END {printf "%.2f-%.2f", lo, hi}')
		deb=-
		case $alg in lz4hc*)
			read -r deb _ <<< "$(timed fsck.erofs --extract="$target/out" "$work/e.img")" ;;
		esac
		echo "$alg $C $one $all $rss1 $rssn $deb $sq $ratio $spread $cpu1 $cpun" >> "$rows"
	done
done

echo "## Extraction of $TREE ($(find "$TREE" -xdev -type f | wc -l) files, $(awk -v b="$input" 'BEGIN {printf "%.1f", b / 1048576}') MiB)"
echo
echo "Machine: $CPUS CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), kernel $(uname -r)."
echo "Each run extracts into a freshly made ext4 (loop-mounted); caches dropped before each run; median of $REPS runs; seconds."
echo "1-worker and $CPUS-worker runs alternate; the speed-up is the median of the $REPS pairs' ratios."
echo "Decoders: deflate ${EROFSKIT_ENGINE:-libdeflate}, lzma ${EROFSKIT_LZMA_ENGINE:-builtin} (EROFSKIT_ENGINE, EROFSKIT_LZMA_ENGINE)."
echo
echo "CPU is user + system seconds of the run, median; pair ratios gives the lowest and highest of the $REPS."
echo
echo "| algorithm | cluster | 1 worker | $CPUS workers | improvement | speed-up | pair ratios | CPU s (1 / $CPUS) | peak RSS MiB (1 / $CPUS) | fsck.erofs 1.5 | unsquashfs ($CPUS threads, 128K) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
while read -r alg C one all rss1 rssn deb sq ratio spread cpu1 cpun; do
	awk -v a="$alg" -v c="$C" -v o="$one" -v l="$all" -v r1="$rss1" -v rn="$rssn" \
	    -v d="$deb" -v s="$sq" -v q="$ratio" -v sp="$spread" -v c1="$cpu1" -v cn="$cpun" 'BEGIN {
		printf "| %s | %d | %.3f | %.3f | %.0f%% | %.2fx | %s | %.2f / %.2f | %s / %s | %s | %s |\n",
		       a, c, o, l, (1 - 1 / q) * 100, q, sp, c1, cn, r1, rn, d, s }'
done < "$rows"
echo
awk -v cpus="$CPUS" '{
	target = ($1 ~ /^lz4/) ? 1.3 : 1.7
	sp = $9
	printf "- %s -C%d: %.2fx with %d workers (target %.1fx)%s%s%s\n", $1, $2, sp, cpus, target,
	       sp < 1 ? " SLOWER THAN ONE WORKER" : "",
	       ($7 != "-" && $4 >= $7) ? " not faster than fsck.erofs" : "",
	       ($4 >= $8) ? " not faster than unsquashfs" : ""
}' "$rows"
