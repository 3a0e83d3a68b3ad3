#!/bin/bash
# mkfs --oci from a registry against the same image from its layout on
# disk: what pulling costs.  Each data set (the Debian root filesystem and
# the small-files tree) becomes a one-layer image (tar.gz) in an OCI
# layout, pushed to Debian's docker-registry on 127.0.0.1 (plain HTTP);
# then REPS alternating runs of
#     erofskit mkfs --oci LAYOUT:v1      [-z ALG] IMAGE
#     erofskit mkfs --oci oci://127.0.0.1:PORT/bench/SET:v1 -o plain_http [-z ALG] IMAGE
# uncompressed and with lz4hc, the layout's blobs in the page cache;
# medians of the wall times, and the two images compared (they must be
# the same bytes).  Prints markdown.
#
#   bench/pull.sh              data: $BENCH_DATA (default /tmp/data, made
#                              by bench/datasets.sh)
#   REPS=3
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
REPS=${REPS:-3}
DATA=${BENCH_DATA:-/tmp/data}
OCI="python3 $top/tests/integration/oci_layout.py"

command -v docker-registry >/dev/null || { echo "needs docker-registry (scripts/deps.sh)" >&2; exit 1; }
need_trees "$DATA/rootfs" "$DATA/src"
work=$(mktemp -d "${TMPDIR:-/tmp}/erofskit-pull-bench.XXXXXX")
registry=
cleanup() {
	[ -z "$registry" ] || { kill "$registry" 2>/dev/null; wait "$registry" 2>/dev/null || true; }
	rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/registry.yml" <<CONF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: 127.0.0.1:$port
CONF
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry=$!
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$port/v2/" >/dev/null && break
	sleep 0.1
done

# seconds CMD...: the wall time of one run.
seconds() {
	local t0
	t0=$(date +%s.%N)
	"$@" >/dev/null
	echo "$(date +%s.%N) - $t0" | bc
}

echo "# mkfs --oci: from a registry against from the layout"
echo
echo "One layer (tar.gz) per data set, docker-registry on 127.0.0.1 over plain"
echo "HTTP, $(nproc) processors, median of $REPS alternating runs (s)."
echo
echo "| data | layer | -z | from the layout | from the registry | ratio |"
echo "|---|---|---|---|---|---|"
for set in rootfs src; do
	tar --sort=name -C "$DATA/$set" -cf - . | gzip -6 >"$work/$set.tar.gz"
	$OCI fromtars "$work/$set" v1 "$work/$set.tar.gz"
	$OCI push "$work/$set:v1" "http://127.0.0.1:$port" "bench/$set:v1"
	layer_mib=$(echo "scale=1; $(stat -c %s "$work/$set.tar.gz") / 1048576" | bc)
	for z in none lz4hc; do
		zopt=()
		[ $z = none ] || zopt=(-z "$z")
		: >"$work/local.t"
		: >"$work/remote.t"
		for ((i = 0; i < REPS; i++)); do
			seconds "$EROFSKIT" mkfs -q -T0 --oci "$work/$set:v1" "${zopt[@]}" \
				"$work/local.img" >>"$work/local.t"
			seconds "$EROFSKIT" mkfs -q -T0 --oci "oci://127.0.0.1:$port/bench/$set:v1" \
				-o plain_http "${zopt[@]}" "$work/remote.img" >>"$work/remote.t"
		done
		cmp -s "$work/local.img" "$work/remote.img" ||
			{ echo "$set -z $z: the registry's image differs from the layout's" >&2; exit 1; }
		l=$(median <"$work/local.t")
		r=$(median <"$work/remote.t")
		printf '| %s | %s MiB | %s | %.2f | %.2f | %.2fx |\n' "$set" "$layer_mib" "$z" \
			"$l" "$r" "$(echo "$r / $l" | bc -l)"
	done
done
