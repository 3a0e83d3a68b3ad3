# Helpers the benchmark scripts share.  Source it: . "$here/lib.sh"

# The median of the numbers on standard input, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# need_root WHY: stop unless run as root (WHY: what needs it).
need_root() { [ "$(id -u)" = 0 ] || { echo "needs root ($1)" >&2; exit 1; }; }

# need_trees TREE...: the data sets made (bench/datasets.sh) when one of
# the trees is missing.
need_trees() {
	local tree
	for tree in "$@"; do
		[ -d "$tree" ] || { bash "$(dirname "${BASH_SOURCE[0]}")/datasets.sh" >&2; return; }
	done
}

# cold_read DIR: REPS times, caches dropped, every file under DIR read
# whole; the median seconds.
cold_read() {
	local i t0
	for ((i = 0; i < REPS; i++)); do
		drop_caches
		t0=$(date +%s.%N)
		(cd "$1" && find . -type f -print0 | xargs -0 -r cat >/dev/null)
		echo "$(date +%s.%N) - $t0" | bc
	done | median
}
