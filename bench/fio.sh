#!/bin/bash
# The seeds' fio table on this machine: a ~285 MiB real file in images
# compressed with deflate level 9 at several cluster sizes, read with fio
# exactly as the seeds ran it (4 KiB sequential, random, and small random
# reads of 14 MiB), caches dropped before each run:
#   - the kernel's own EROFS mount of the same image;
#   - erofskit mount with each deflate engine and each I/O back end;
#   - the in-process library (bench/reader.c), median of three runs;
#   - squashfuse_ll on a squashfs image of the same file (gzip, 128 KiB).
# Every fio run gets a fresh mount.  Prints markdown tables of MiB/s.
# Needs root.
#
#   bench/fio.sh [FILE]     default: $BENCH_DATA/one/testfile (BENCH_DATA:
#                           /tmp/data), made by bench/datasets.sh
#   CLUSTERS="4096 16384 65536 131072 262144" ENGINES="zlib libdeflate isal"
#   ROWS="kernel mount inprocess squashfuse" (which readers to run)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
READER=${READER:-$top/build/erofskit-bench-read}
CLUSTERS=${CLUSTERS:-"4096 16384 65536 131072 262144"}
ENGINES=${ENGINES:-"zlib libdeflate isal"}
IOS=${IOS:-"pread uring"}
ROWS=${ROWS:-"kernel mount inprocess squashfuse"}
DATA=${BENCH_DATA:-/tmp/data}
FILE=${1:-$DATA/one/testfile}

[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
if [ ! -f "$FILE" ]; then
	[ -z "${1:-}" ] || { echo "no file $FILE" >&2; exit 1; }
	bash "$here/datasets.sh" "$DATA" >&2
fi
for t in fio squashfuse_ll mksquashfs; do
	command -v $t >/dev/null || { echo "needs $t (scripts/deps.sh --bench)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/erofskit-fio.XXXXXX)
mnt=$work/mnt
mkdir -p "$mnt" "$work/src"
cleanup() {
	mountpoint -q "$mnt" && { umount "$mnt" 2>/dev/null || fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; }
	rm -rf "$work"
}
trap cleanup EXIT
ln "$FILE" "$work/src/testfile" 2>/dev/null || cp "$FILE" "$work/src/testfile"
name=testfile

drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
wanted() { case " $ROWS " in *" $1 "*) return 0 ;; esac; return 1; }

# fio_bw FILE MODE: MiB/s of one fio job as the seeds ran it.
fio_bw() {
	local extra=()
	case $2 in
	seq) extra=(-rw=read) ;;
	rand) extra=(-rw=randread) ;;
	small) extra=(-rw=randread --io_size=14m) ;;
	esac
	drop
	fio -filename="$1" -bs=4k "${extra[@]}" -name=job1 --output-format=json 2>/dev/null |
		python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["jobs"][0]["read"]["bw"] / 1024))'
}

# row LABEL MOUNT-COMMAND...: the three fio numbers, each on a fresh mount
# (so that no reader starts with what the previous run left in its own
# cache: drop_caches empties the kernel's, not a FUSE server's).
row() {
	local label=$1 mode out=()
	shift
	for mode in seq rand small; do
		"$@"
		out+=("$(fio_bw "$mnt/$name" $mode)")
		unmount_now
	done
	printf "| %s | %s | %s | %s |\n" "$label" "${out[@]}"
}

# in_process IMAGE MODE ENGINE: the in-process reader's MiB/s, median of
# three runs (each a second or less), caches dropped before each.
in_process() {
	local i
	for i in 1 2 3; do
		drop
		"$READER" "$1" "/$name" "$2" "$3"
	done | grep . | sort -n | sed -n 2p
}

unmount_now() {
	umount "$mnt" 2>/dev/null || fusermount3 -u "$mnt"
	# A FUSE server exits after the unmount: let it go before the next.
	for _ in $(seq 50); do
		pgrep -f "erofskit mount .* $mnt\$" >/dev/null || pgrep -f "squashfuse_ll .* $mnt\$" >/dev/null || break
		sleep 0.1
	done
}

echo "## fio on a $(($(stat -c %s "$FILE") >> 20)) MiB file, deflate level 9"
echo
echo "Machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), kernel $(uname -r). MiB/s; caches dropped before each run."
for C in $CLUSTERS; do
	img=$work/c$C.img
	"$EROFSKIT" mkfs -q -zdeflate,level=9 -C"$C" "$img" "$work/src"
	echo
	echo "### -C $C"
	echo
	echo "| reader | seq 4k | randread 4k | randread 4k, 14 MiB |"
	echo "|---|---|---|---|"
	wanted kernel && row "kernel" mount -t erofs -o loop,ro "$img" "$mnt"
	for engine in $ENGINES; do
		wanted mount || break
		for io in $IOS; do
			row "erofskit mount, $engine, io=$io" \
				"$EROFSKIT" mount -o "engine=$engine,io=$io" "$img" "$mnt"
		done
	done
	for engine in $ENGINES; do
		wanted inprocess || break
		seq=$(in_process "$img" seq "$engine")
		rnd=$(in_process "$img" rand "$engine")
		small=$(in_process "$img" small "$engine")
		codec=$(in_process "$img" codec "$engine")
		echo "| library in-process, $engine (single-core decode: $codec) | $seq | $rnd | $small |"
	done
done

wanted squashfuse || exit 0
echo
echo "### squashfuse_ll (gzip, -b 131072)"
echo
echo "| reader | seq 4k | randread 4k | randread 4k, 14 MiB |"
echo "|---|---|---|---|"
mksquashfs "$work/src" "$work/sq.img" -noappend -no-progress -quiet -comp gzip \
	-Xcompression-level 9 -b 131072 >/dev/null
row "squashfuse_ll" squashfuse_ll "$work/sq.img" "$mnt"
