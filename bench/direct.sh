#!/bin/bash
# io=uring (O_DIRECT) against io=pread (buffered) through erofskit mount:
# the seeds' three fio jobs (4 KiB sequential, random over the whole file,
# random 14 MiB) on images of a ~285 MiB real file, for each algorithm and
# cluster size, alternating the two back ends within each repetition, a
# fresh mount and dropped caches before every run.  After each run the
# image's pages in the page cache are counted (fincore): what the buffered
# path caches twice; and the server's peak resident set in the random run:
# what the direct path holds instead.  Prints markdown: median MiB/s pread
# / uring, the image MiB left cached and the peak MiB of each.  Needs root.
#
#   bench/direct.sh [FILE]     default: $BENCH_DATA/one/testfile
#                              (BENCH_DATA: /tmp/data, bench/datasets.sh)
#   ALGS="deflate,level=9 lz4hc,12 zstd,15"  CLUSTERS="4096 65536 262144"
#   REPS=3
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
ALGS=${ALGS:-"deflate,level=9 lz4hc,12 zstd,15"}
CLUSTERS=${CLUSTERS:-"4096 65536 262144"}
REPS=${REPS:-3}
DATA=${BENCH_DATA:-/tmp/data}
FILE=${1:-$DATA/one/testfile}

[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
for t in fio fincore; do
	command -v $t >/dev/null || { echo "needs $t (scripts/deps.sh --bench)" >&2; exit 1; }
done
if [ ! -f "$FILE" ]; then
	[ -z "${1:-}" ] || { echo "no file $FILE" >&2; exit 1; }
	bash "$here/datasets.sh" "$DATA" >&2
fi
work=$(mktemp -d /tmp/erofskit-direct.XXXXXX)
mnt=$work/mnt
mkdir -p "$mnt" "$work/src"
cleanup() {
	mountpoint -q "$mnt" && { fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; }
	rm -rf "$work"
}
trap cleanup EXIT
ln "$FILE" "$work/src/testfile" 2>/dev/null || cp "$FILE" "$work/src/testfile"

. "$here/lib.sh"

# one IMAGE IO MODE: "MiB/s cachedMiB peakMiB" of one fio job on a fresh
# mount (peak: the server's resident set at its largest, VmHWM)
one() {
	local extra=() bw cached peak server="erofskit mount .* $mnt\$"
	case $3 in
	seq) extra=(-rw=read) ;;
	rand) extra=(-rw=randread) ;;
	small) extra=(-rw=randread --io_size=14m) ;;
	esac
	sync
	echo 3 >/proc/sys/vm/drop_caches
	"$EROFSKIT" mount -o "io=$2" "$1" "$mnt"
	bw=$(fio -filename="$mnt/testfile" -bs=4k "${extra[@]}" -name=job1 --output-format=json 2>/dev/null |
		python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["jobs"][0]["read"]["bw"] / 1024))')
	cached=$(fincore -b -n -o RES "$1" | awk '{ printf "%.1f", $1 / 1048576 }')
	peak=$(awk '/^VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$(pgrep -f "$server" | head -1)/status")
	fusermount3 -u "$mnt"
	for _ in $(seq 50); do
		pgrep -f "$server" >/dev/null || break
		sleep 0.1
	done
	echo "$bw $cached $peak"
}

echo "## io=pread against io=uring, erofskit mount, a $(($(stat -c %s "$FILE") >> 20)) MiB file"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), kernel $(uname -r); erofskit $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')."
echo "Median of $REPS runs each, the back ends alternating; caches dropped and a fresh mount before every run."
echo "A cell: MiB/s pread / uring (✓: uring at least pread); cached: MiB of the image in the page cache after the run, pread / uring; peak: the mount server's largest resident set in the whole-file random run, MiB, pread / uring (its default cache is 256 MiB); medians."
for alg in $ALGS; do
	echo
	echo "### -z$alg"
	echo
	echo "| cluster | seq 4k | randread 4k | randread 4k, 14 MiB | image MiB | cached after seq | after rand | after 14 MiB | peak, rand |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for C in $CLUSTERS; do
		img=$work/img
		"$EROFSKIT" mkfs -q -z"$alg" -C"$C" "$img" "$work/src"
		cells=() caches=()
		: >"$work/p.rss"; : >"$work/u.rss"
		for mode in seq rand small; do
			: >"$work/p.bw"; : >"$work/u.bw"; : >"$work/p.c"; : >"$work/u.c"
			for _ in $(seq "$REPS"); do
				for io in pread uring; do
					read -r bw cached peak < <(one "$img" $io $mode)
					echo "$bw" >>"$work/${io:0:1}.bw"
					echo "$cached" >>"$work/${io:0:1}.c"
					[ $mode != rand ] || echo "$peak" >>"$work/${io:0:1}.rss"
				done
			done
			p=$(median <"$work/p.bw") u=$(median <"$work/u.bw")
			mark=$(awk -v p="$p" -v u="$u" 'BEGIN { print (u >= p) ? " ✓" : "" }')
			cells+=("$p / $u$mark")
			caches+=("$(median <"$work/p.c") / $(median <"$work/u.c")")
		done
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$C" "${cells[@]}" \
			"$(($(stat -c %s "$img") >> 20))" "${caches[@]}" \
			"$(median <"$work/p.rss") / $(median <"$work/u.rss")"
	done
done
