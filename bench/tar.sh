#!/bin/bash
# erofskit mkfs --tar: the time, image size and peak memory of building
# from a tar stream, against the ways round it and against tar2sqfs.
#
#   bench/tar.sh [TREE]     default: $BENCH_DATA/rootfs (BENCH_DATA:
#                           /tmp/data, made by bench/datasets.sh)
#
# Environment (defaults in brackets):
#   REPS       runs of each command per row, the median is shown [3]
#   WORKERS    erofskit --workers = tar2sqfs -j [nproc]
#   BIG        copies of TREE in the archive of the memory row [4]
#   MANY       small random files in the memory row's second archive [120000]
#   WORK       where the archives and images go [a directory in $TMPDIR]
#   EROFSKIT   the binary [build/erofskit]
#   ROWS       which of the rows below to run ["1 2 3 4 5"]
#
# Rows (the issue's targets):
#   1. an uncompressed image from .tar.gz: mkfs --tar against tar -xzf to
#      disk followed by mkfs of the directory;
#   2. -zlz4hc,12 and -zzstd,15 (-C131072) from .tar.gz and .tar.zst
#      against mkfs of the already extracted directory;
#   3. against tar2sqfs (squashfs-tools-ng) at the same algorithm, level
#      and block size, both reading the plain .tar;
#   4. peak RSS of mkfs --tar on an archive BIG times the tree, and on
#      one of MANY small files that do not compress (each stored plain,
#      its tail inline: what memory grows with is the count of files);
#   5. --tar=i of the plain .tar against cat TAR > /dev/null (warm), and
#      the index's size against the tar's.
# Prints markdown on stdout, progress on stderr.  Needs no root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
REPS=${REPS:-3}
WORKERS=${WORKERS:-$(nproc)}
BIG=${BIG:-4}
MANY=${MANY:-120000}
DATA=${BENCH_DATA:-/tmp/data}
TREE=${1:-$DATA/rootfs}
ROWS=${ROWS:-1 2 3 4 5}

say() { echo "tar.sh: $*" >&2; }
die() { say "$*"; exit 1; }
[ -x "$EROFSKIT" ] || die "no erofskit at $EROFSKIT (build first, or set EROFSKIT)"
[ -d "$TREE" ] || die "no tree at $TREE (bench/datasets.sh makes it)"
for tool in tar gzip zstd tar2sqfs hyperfine /usr/bin/time; do
	command -v "$tool" >/dev/null || die "$tool is missing (scripts/deps.sh --bench)"
done
if [ -z "${WORK:-}" ]; then
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/erofskit-bench-tar.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"

# median of the numbers on stdin
. "$here/lib.sh"
# timed OUT COMMAND...: seconds of one run into OUT's list
timed() {
	local out=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; die "failed: $*"; }
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc >>"$out"
}
size() { stat -c %s "$1"; }
want() { case " $ROWS " in *" $1 "*) return 0 ;; esac; return 1; }
mib() { echo "scale=1; $1 / 1048576" | bc; }
check() { "$EROFSKIT" fsck -q "$1" || die "$1 is not clean"; }

say "archives of $TREE"
# Sorted by name, as layer tools write them (Go's archive/tar walks in
# lexical order): a readdir-ordered archive packs other neighbours together
# in the packed inode (zstd,15 on rootfs: 1.9% bigger than the directory's
# image, against 0.1% sorted).
tar -C "$TREE" --sort=name --xattrs --acls -cf "$WORK/root.tar" .
gzip -n -6 <"$WORK/root.tar" >"$WORK/root.tar.gz"
zstd -q -3 <"$WORK/root.tar" >"$WORK/root.tar.zst"
rm -rf "$WORK/x" && mkdir "$WORK/x" && tar -C "$WORK/x" --xattrs --acls -xf "$WORK/root.tar"
echo "Tree $(basename "$TREE"): $(find "$TREE" -type f | wc -l) files;" \
     "tar $(mib "$(size "$WORK/root.tar")") MiB, .tar.gz $(mib "$(size "$WORK/root.tar.gz")") MiB," \
     ".tar.zst $(mib "$(size "$WORK/root.tar.zst")") MiB. $WORKERS workers, median of $REPS runs (s)."
echo

if want 1; then
say "1. uncompressed, from .tar.gz"
rm -f "$WORK"/t1.* "$WORK"/t2.*
for _ in $(seq "$REPS"); do
	timed "$WORK/t1.s" "$EROFSKIT" mkfs --tar -q "$WORK/t1.img" "$WORK/root.tar.gz"
	timed "$WORK/t2.s" bash -c "rm -rf '$WORK/y' && mkdir '$WORK/y' &&
		tar -C '$WORK/y' -xzf '$WORK/root.tar.gz' &&
		'$EROFSKIT' mkfs -q '$WORK/t2.img' '$WORK/y'"
done
check "$WORK/t1.img"
a=$(median <"$WORK/t1.s") b=$(median <"$WORK/t2.s")
echo "| uncompressed, from .tar.gz | s | image bytes |"
echo "|---|---|---|"
echo "| mkfs --tar root.tar.gz | $a | $(size "$WORK/t1.img") |"
echo "| tar -xzf, then mkfs of the directory | $b | $(size "$WORK/t2.img") |"
echo "| ratio | $(echo "scale=2; $b / $a" | bc)x faster | |"
echo
fi

if want 2; then
say "2. compressed, from .tar.gz and .tar.zst, against the extracted directory"
echo "| -C131072 | mkfs --tar .tar.gz | mkfs --tar .tar.zst | mkfs DIR | image bytes (tar / dir) |"
echo "|---|---|---|---|---|"
for alg in lz4hc,12 zstd,15; do
	rm -f "$WORK"/c*.s
	for _ in $(seq "$REPS"); do
		timed "$WORK/c1.s" "$EROFSKIT" mkfs --tar -q -z"$alg" -C131072 "$WORK/c1.img" "$WORK/root.tar.gz"
		timed "$WORK/c2.s" "$EROFSKIT" mkfs --tar -q -z"$alg" -C131072 "$WORK/c2.img" "$WORK/root.tar.zst"
		timed "$WORK/c3.s" "$EROFSKIT" mkfs -q -z"$alg" -C131072 "$WORK/c3.img" "$WORK/x"
	done
	check "$WORK/c1.img"
	echo "| $alg | $(median <"$WORK/c1.s") | $(median <"$WORK/c2.s") | $(median <"$WORK/c3.s") |" \
	     "$(size "$WORK/c1.img") / $(size "$WORK/c3.img") |"
done
echo
fi

if want 3; then
say "3. against tar2sqfs, both reading the plain .tar"
echo "| -b 131072 | erofskit mkfs --tar: s / bytes | tar2sqfs: s / bytes |"
echo "|---|---|---|"
for pair in "lz4hc,12|-c lz4 -X hc" "zstd,15|-c zstd -X level=15" "lzma,6|-c xz"; do
	alg=${pair%%|*} sq=${pair#*|}
	rm -f "$WORK"/q*.s
	for _ in $(seq "$REPS"); do
		timed "$WORK/q1.s" "$EROFSKIT" mkfs --tar -q -z"$alg" -C131072 --workers "$WORKERS" \
			"$WORK/q1.img" "$WORK/root.tar"
		# shellcheck disable=SC2086
		timed "$WORK/q2.s" bash -c "tar2sqfs -q -f $sq -b 131072 -j $WORKERS '$WORK/q2.sqfs' <'$WORK/root.tar'"
	done
	check "$WORK/q1.img"
	echo "| $alg | $(median <"$WORK/q1.s") / $(size "$WORK/q1.img") |" \
	     "$(median <"$WORK/q2.s") / $(size "$WORK/q2.sqfs") |"
done
echo
fi

if want 4; then
say "4. peak memory on an archive $BIG times the tree"
rm -f "$WORK/big.tar"
for i in $(seq "$BIG"); do
	tar -C "$TREE" --sort=name --transform "s,^\\.,copy$i," -rf "$WORK/big.tar" .
done
/usr/bin/time -f %M -o "$WORK/rss" "$EROFSKIT" mkfs --tar -q -zlz4hc -C131072 \
	"$WORK/big.img" - <"$WORK/big.tar" || die "mkfs --tar of the big archive failed"
check "$WORK/big.img"
python3 - "$WORK/many.tar" "$MANY" <<'PY'
import io, random, sys, tarfile
r = random.Random(7)
with tarfile.open(sys.argv[1], "w", format=tarfile.GNU_FORMAT) as t:
    for i in range(int(sys.argv[2])):
        data = r.randbytes(r.randint(1000, 4000))
        info = tarfile.TarInfo("d%03d/f%06d" % (i // 1000, i))
        info.size, info.mtime = len(data), 1700000000
        t.addfile(info, io.BytesIO(data))
PY
/usr/bin/time -f %M -o "$WORK/rss2" "$EROFSKIT" mkfs --tar -q -zlz4hc -C131072 \
	"$WORK/many.img" - <"$WORK/many.tar" || die "mkfs --tar of the many-files archive failed"
check "$WORK/many.img"
rm -f "$WORK/many.img"
echo "| archive | peak RSS of mkfs --tar -zlz4hc -C131072 (stdin) |"
echo "|---|---|"
echo "| $(mib "$(size "$WORK/big.tar")") MiB ($BIG copies) | $(( $(cat "$WORK/rss") / 1024 )) MiB |"
echo "| $(mib "$(size "$WORK/many.tar")") MiB ($MANY small random files) | $(( $(cat "$WORK/rss2") / 1024 )) MiB |"
rm -f "$WORK/many.tar"
echo
fi

if want 5; then
say "5. --tar=i against cat"
# Tens of milliseconds: timed by hyperfine, without a shell (timed()'s
# date and bash -c added some 25 ms to each, which made the ratio look
# near 1).  This machine's speed drifts over seconds, and hyperfine runs
# one command's runs together: so 2 * REPS rounds of 10 runs of each
# (after 3 warm-ups), the two alternating; the medians of all runs, and
# the median of the rounds' ratios.
for round in $(seq $((2 * REPS))); do
	hyperfine -N -w 3 -r 10 --export-json "$WORK/i$round.json" \
		"$EROFSKIT mkfs --tar=i -q $WORK/i.img $WORK/root.tar" "cat $WORK/root.tar" >/dev/null
done
read -r a b ratio < <(python3 -c 'import json, statistics, sys
rounds = [json.load(open(f))["results"] for f in sys.argv[1:]]
runs = [sum((r[k]["times"] for r in rounds), []) for k in (0, 1)]
ratios = [r[0]["median"] / r[1]["median"] for r in rounds]
print("%.4f %.4f %.2f" % (statistics.median(runs[0]), statistics.median(runs[1]),
                          statistics.median(ratios)))' "$WORK"/i[0-9]*.json)
cat "$WORK/i.img" "$WORK/root.tar" >"$WORK/i-whole.img"
check "$WORK/i-whole.img"
echo "| --tar=i | s | bytes |"
echo "|---|---|---|"
echo "| mkfs --tar=i root.tar | $a | index $(size "$WORK/i.img") ($(echo "scale=2; 100 * $(size "$WORK/i.img") / $(size "$WORK/root.tar")" | bc)% of the tar) |"
echo "| cat root.tar > /dev/null | $b | |"
echo "| ratio (median of the rounds') | ${ratio}x | |"
fi
