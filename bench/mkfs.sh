#!/bin/bash
# erofskit mkfs against mksquashfs: wall time, image size and peak memory of
# each, on the same trees with the same algorithm, level and cluster (block)
# size.  The issue's goal: images smaller than squashfs's, built faster.
#
#   bench/mkfs.sh [TREE...]     default: $BENCH_DATA/rootfs $BENCH_DATA/src
#                               (BENCH_DATA: /tmp/data, made by
#                               bench/datasets.sh)
#
# Environment (defaults in brackets):
#   ALGS       erofskit algorithms ["lz4hc,12 deflate,9 zstd,15 lzma,6"];
#              each runs against its mksquashfs equivalent (squash_comp)
#   CLUSTERS   erofskit -C = mksquashfs -b ["131072 1048576"]
#   SETTINGS   the erofskit settings to compare, NAME=OPTIONS words;
#              OPTIONS is one word added to the mkfs command line (join
#              layouts with commas: -Eztailpacking,fragments; a '/'
#              separates options: -Efragments/-m4096)
#              ['default= 48bit=-E48bit smallest=-Eall-fragments=1048576,48bit/-m1048576']
#   REPS       runs of each tool per row [3]
#   WORKERS    erofskit --workers = mksquashfs -processors [nproc]
#   EROFSKIT   the binary [build/erofskit]
#
# Prints markdown on stdout (progress on stderr): a table per data set and
# cluster size, a row per algorithm.  Within a rep the tools alternate
# (every setting, then mksquashfs), so that a shared machine's drift
# meets them all alike.  Times are medians of REPS runs with the tree in
# the page cache; compare within one run, not across machines.  Every
# erofskit image is checked once per row with erofskit fsck (untimed); a
# failure ends the script.  Needs no root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
ALGS=${ALGS:-"lz4hc,12 deflate,9 zstd,15 lzma,6"}
CLUSTERS=${CLUSTERS:-"131072 1048576"}
SETTINGS=${SETTINGS:-"default= 48bit=-E48bit smallest=-Eall-fragments=1048576,48bit/-m1048576"}
REPS=${REPS:-3}
WORKERS=${WORKERS:-$(nproc)}
DATA=${BENCH_DATA:-/tmp/data}

die() {
	echo "mkfs.sh: $*" >&2
	exit 1
}
say() {
	echo "mkfs.sh: $*" >&2
}

# squash_comp ALG: mksquashfs's options for erofskit's -zALG, the same
# algorithm at the same level.  (mksquashfs 4.5's -Xhc is LZ4HC at its
# highest level, 12; its xz has no presets: it is xz's default, 6.)
squash_comp() {
	local name=${1%%,*} level=
	[ "$name" = "$1" ] || level=${1#*,}
	level=${level#level=}
	case $name,$level in
	lz4,) echo "-comp lz4" ;;
	lz4hc,12) echo "-comp lz4 -Xhc" ;;
	deflate,[1-9]) echo "-comp gzip -Xcompression-level $level" ;;
	zstd,[1-9] | zstd,1[0-9] | zstd,2[0-2]) echo "-comp zstd -Xcompression-level $level" ;;
	lzma,6) echo "-comp xz" ;;
	*) return 1 ;;
	esac
}

# --- arguments and checks -------------------------------------------------
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive number"
[[ $WORKERS =~ ^[1-9][0-9]*$ ]] || die "WORKERS must be a positive number"
for alg in $ALGS; do
	squash_comp "$alg" >/dev/null || die "no mksquashfs equivalent of -z$alg"
done
for C in $CLUSTERS; do
	[[ $C =~ ^[0-9]+$ ]] || die "CLUSTERS: $C is not a number of bytes"
done
# The settings, in order: names[i] and opts[i].
names=() opts=()
for s in $SETTINGS; do
	[[ $s =~ ^([A-Za-z0-9_.+-]+)=(.*)$ ]] || die "SETTINGS: '$s' is not NAME=OPTIONS"
	for n in "${names[@]}"; do
		[ "$n" != "${BASH_REMATCH[1]}" ] || die "SETTINGS: '$n' twice"
	done
	names+=("${BASH_REMATCH[1]}")
	opts+=("${BASH_REMATCH[2]//\// }")
done
[ ${#names[@]} -gt 0 ] || die "SETTINGS is empty"

if [ $# -gt 0 ]; then
	trees=("$@")
else
	trees=("$DATA/rootfs" "$DATA/src")
	if [ ! -d "${trees[0]}" ] || [ ! -d "${trees[1]}" ]; then
		[ "$(id -u)" = 0 ] || die "no data sets in $DATA: run bench/datasets.sh as root"
		say "building the data sets with bench/datasets.sh ..."
		bash "$here/datasets.sh" "$DATA" >&2
	fi
fi
for t in "${trees[@]}"; do
	[ -d "$t" ] || die "no tree at $t"
done
[ -x "$EROFSKIT" ] || die "no $EROFSKIT: build erofskit first"
command -v mksquashfs >/dev/null || die "needs mksquashfs (squashfs-tools)"
[ -x /usr/bin/time ] || die "needs /usr/bin/time (GNU time)"

# Images go to a scratch directory on /tmp's filesystem, removed at the end.
work=$(mktemp -d /tmp/erofskit-mkfs.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- measuring ------------------------------------------------------------

# warm TREE: read every file once, so that every timed run reads the tree
# from the page cache.  (Through a pipe: GNU tar, for one, skips reading
# when it writes to /dev/null.)
warm() {
	find "$1" -xdev -type f -print0 | xargs -0 -r cat -- 2>/dev/null | cksum >/dev/null || true
}

# resident TREE: the share of the tree's pages in the page cache.
resident() {
	command -v fincore >/dev/null || { echo "unknown (no fincore)"; return; }
	{ find "$1" -xdev -type f -size +0 -print0 |
		xargs -0 -r fincore -b -n -r -o PAGES,SIZE 2>/dev/null || true; } |
		awk -v p="$(getconf PAGESIZE)" '
			{ have += $1; want += int(($2 + p - 1) / p) }
			END { printf "%.0f%%", want ? 100 * have / want : 100 }'
}

# run SAMPLES IMAGE CMD...: one timed run of CMD, which writes IMAGE;
# appends "seconds peak-RSS-KiB image-bytes" to SAMPLES.  A failed run
# ends the script.
run() {
	local samples=$1 img=$2 t0 t1
	shift 2
	rm -f "$img"
	t0=$EPOCHREALTIME
	/usr/bin/time -f %M -o "$work/rss" "$@" >"$work/log" 2>&1 ||
		{ cat "$work/log" >&2; die "failed: $*"; }
	t1=$EPOCHREALTIME
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')" \
	     "$(tail -1 "$work/rss")" "$(stat -c %s "$img")" >>"$samples"
	# Untimed: the next run must not pay for this one's writeback.
	sync
}

# median FILE COLUMN: the median of a column of numbers.
median() {
	sort -n -k"$2" "$1" | awk -v c="$2" '{v[NR] = $c} END {print v[int((NR + 1) / 2)]}'
}

# summary SAMPLES: "median-seconds MiB highest-RSS-MiB bytes" (the image's
# size is the median too, though it should not vary).
summary() {
	local bytes
	bytes=$(median "$1" 3)
	echo "$(median "$1" 1) $(awk -v b="$bytes" 'BEGIN {printf "%.2f", b / 1048576}')" \
	     "$(sort -n -k2 "$1" | awk 'END {printf "%.0f", $2 / 1024}') $bytes"
}

# row TREE CLUSTER ALG: REPS alternating runs of every setting and of
# mksquashfs, fsck of each erofskit image; appends to $work/rows the line
# "ALG|seconds MiB RSS bytes|..." (the settings in order, mksquashfs last).
row() {
	local tree=$1 C=$2 alg=$3 sq r i line
	sq=$(squash_comp "$alg")
	rm -f "$work"/*.samples
	for r in $(seq "$REPS"); do
		say "$(basename "$tree") -C$C -z$alg: rep $r/$REPS"
		for i in "${!names[@]}"; do
			# shellcheck disable=SC2086  # OPTIONS: a word, or none
			run "$work/e$i.samples" "$work/e$i.img" \
				"$EROFSKIT" mkfs -q -z"$alg" -C"$C" --workers "$WORKERS" \
				${opts[i]} "$work/e$i.img" "$tree"
		done
		# shellcheck disable=SC2086
		run "$work/sq.samples" "$work/sq.img" \
			mksquashfs "$tree" "$work/sq.img" -b "$C" -processors "$WORKERS" \
			-noappend -quiet -no-progress $sq
	done
	line=$alg
	for i in "${!names[@]}"; do
		"$EROFSKIT" fsck -q "$work/e$i.img" >"$work/log" 2>&1 ||
			{ cat "$work/log" >&2; die "fsck failed: ${names[i]} image, -z$alg -C$C, $tree"; }
		line+="|$(summary "$work/e$i.samples")"
	done
	echo "$line|$(summary "$work/sq.samples")" >>"$work/rows"
	rm -f "$work"/*.img
}

# table: the markdown table of $work/rows.  A cell is "seconds / MiB /
# RSS", with a check mark where the setting is at most mksquashfs in both
# time and size; the ratios are those of the setting with the smallest
# image.
table() {
	local head="| algorithm |" rule="|---|" n
	for n in "${names[@]}"; do
		head+=" erofskit $n s / MiB / RSS |"
		rule+="---|"
	done
	echo "$head mksquashfs s / MiB / RSS | size ratio (smallest erofskit / squashfs) | time ratio (same / squashfs) |"
	echo "$rule---|---|---|"
	awk -F'|' -v names="${names[*]}" '
	BEGIN { split(names, name, " ") }
	{
		split($NF, s, " ")
		out = "| " $1 " |"; best = 0
		for (i = 2; i < NF; i++) {
			split($i, e, " ")
			mark = (e[1] <= s[1] && e[4] <= s[4]) ? " ✓" : ""
			out = out sprintf(" %.2f / %.2f / %d%s |", e[1], e[2], e[3], mark)
			if (!best || e[4] < bytes) { best = i; bytes = e[4]; secs = e[1] }
		}
		out = out sprintf(" %.2f / %.2f / %d |", s[1], s[2], s[3])
		printf "%s %.3f (%s) | %.2f |\n", out, bytes / s[4], name[best - 1], secs / s[1]
	}' "$work/rows"
}

# --- the report -----------------------------------------------------------
started=$SECONDS
sqver=$(mksquashfs -version 2>&1 | head -1)
echo "# erofskit mkfs against mksquashfs"
echo
echo "$(date '+%F %T %Z'); $(nproc) cores ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, kernel $(uname -r)."
echo "Tools: $("$EROFSKIT" --version) ($EROFSKIT); $sqver."
echo
echo "Timed, REPS=$REPS runs of each per row, alternating within a rep (every erofskit setting, then mksquashfs):"
echo
echo '```'
echo "erofskit mkfs -q -zALG -CCLUSTER --workers $WORKERS [OPTIONS] IMAGE TREE"
echo "mksquashfs TREE IMAGE -b CLUSTER -processors $WORKERS -noappend -quiet -no-progress COMP"
echo '```'
echo
echo "Checked once per row, untimed: \`erofskit fsck -q IMAGE\` (every erofskit image)."
echo
echo "| erofskit setting | OPTIONS |"
echo "|---|---|"
for i in "${!names[@]}"; do
	echo "| ${names[i]} | ${opts[i]:-(none)} |"
done
echo
echo "| ALG | COMP |"
echo "|---|---|"
for alg in $ALGS; do
	echo "| $alg | $(squash_comp "$alg") |"
done
echo
echo "| data set | path | regular files | directories | symlinks | MiB in files |"
echo "|---|---|---|---|---|---|"
for t in "${trees[@]}"; do
	find "$t" -xdev -printf '%y %s\n' | awk -v n="$(basename "$t")" -v p="$t" '
		{ c[$1]++ } $1 == "f" { b += $2 }
		END { printf "| %s | %s | %d | %d | %d | %.1f |\n", n, p, c["f"], c["d"], c["l"], b / 1048576 }'
done
echo
echo "Each tree is read once before its runs, so that every run reads it from the page"
echo "cache (no caches are dropped).  Images go to a scratch directory in /tmp, removed at"
echo "the end, and are \`sync\`ed after each run, untimed.  erofskit fsyncs its image before"
echo "it exits and mksquashfs does not: mksquashfs's seconds leave out its image's writeback."
echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "A cell: median wall seconds / image MiB / peak RSS MiB (the highest of the runs)."
echo "✓: that setting's image is no larger than mksquashfs's and was built in no more time."
echo "Size ratio: the smallest erofskit image over mksquashfs's (its setting in brackets);"
echo "time ratio: that setting's seconds over mksquashfs's."

wins=0 total=0
for t in "${trees[@]}"; do
	ds=$(basename "$t")
	say "$ds: reading the tree into the page cache"
	warm "$t"
	for C in $CLUSTERS; do
		before=$(resident "$t")
		: >"$work/rows"
		for alg in $ALGS; do
			row "$t" "$C" "$alg"
		done
		echo
		echo "## $ds, -C $C / -b $C"
		echo
		echo "The tree's pages in the page cache: $before before these runs, $(resident "$t") after."
		echo
		out=$(table)
		echo "$out"
		total=$((total + $(wc -l <"$work/rows")))
		# (only erofskit cells carry marks; a row counts once)
		wins=$((wins + $(grep -c '✓' <<<"$out" || true)))
	done
done
echo
echo "Rows with an erofskit setting at most mksquashfs in both time and size: $wins of $total."
echo "Run time: $((SECONDS - started)) s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
