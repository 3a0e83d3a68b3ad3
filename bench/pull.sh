#!/bin/bash
# mkfs --oci from a registry against the same image from its layout on
# disk: what pulling costs.  Each data set (the Debian root filesystem and
# the small-files tree) becomes a one-layer image (tar.gz) in an OCI
# layout, and the root filesystem also a three-layer one (usr/; var/; the
# rest), flattened as a runtime stacks it; each is pushed to Debian's
# docker-registry on 127.0.0.1 (plain HTTP);
# then REPS alternating runs of
#     erofskit mkfs --oci LAYOUT:v1      [-z ALG] IMAGE
#     erofskit mkfs --oci oci://127.0.0.1:PORT/bench/SET:v1 -o plain_http [-z ALG] IMAGE
# uncompressed and with lz4hc, the layout's blobs in the page cache; and
# the registry through a relay that gives each connection RATE bytes a
# second (tests/integration/slow_relay.py; a CDN's limit is per connection
# too), the layers fetched one at a time (-o downloads=1) and three at
# once (the default).  There the download alone takes the layers / RATE
# one at a time, and the largest layer's / RATE three at once (up to
# three layers): the floor a build that overlaps it can reach is the
# larger of that and the layout's time.  Medians of the wall times, and
# the images compared (they must be the same bytes).  Prints markdown.
#
#   bench/pull.sh              data: $BENCH_DATA (default /tmp/data, made
#                              by bench/datasets.sh)
#   REPS=3  RATE=26214400 (25 MiB/s)  SETS="rootfs src rootfs-3"
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
REPS=${REPS:-3}
SETS=${SETS:-rootfs src rootfs-3}
RATE=${RATE:-26214400}
DATA=${BENCH_DATA:-/tmp/data}
OCI="python3 $top/tests/integration/oci_layout.py"

command -v docker-registry >/dev/null || { echo "needs docker-registry (scripts/deps.sh)" >&2; exit 1; }
need_trees "$DATA/rootfs" "$DATA/src"
work=$(mktemp -d "${TMPDIR:-/tmp}/erofskit-pull-bench.XXXXXX")
registry='' relay=''
cleanup() {
	local pid
	for pid in $registry $relay; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}
port=$(free_port)
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
relay_port=$(free_port)
python3 "$top/tests/integration/slow_relay.py" --listen "$relay_port" --to "$port" \
	--rate "$RATE" >"$work/relay.log" 2>&1 &
relay=$!
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$port/v2/" >/dev/null &&
		curl -sf "http://127.0.0.1:$relay_port/v2/" >/dev/null && break
	sleep 0.1
done
rate_mib=$(echo "scale=1; $RATE / 1048576" | bc)

# seconds CMD...: the wall time of one run.
seconds() {
	local t0
	t0=$(date +%s.%N)
	"$@" >/dev/null
	echo "$(date +%s.%N) - $t0" | bc
}

echo "# mkfs --oci: from a registry against from the layout"
echo
echo "One layer (tar.gz) per data set, and the root filesystem in three"
echo "(rootfs-3: usr/, var/, the rest), docker-registry on 127.0.0.1 over plain"
echo "HTTP, directly and through a relay that gives each connection $rate_mib MiB/s,"
echo "the layers one at a time (-o downloads=1) and three at once (the default);"
echo "$(nproc) processors, median of $REPS alternating runs (s).  Floor: the larger"
echo "of the layout's time and the download's alone (the layers / rate one at"
echo "a time, the largest layer / rate three at once)."
echo
echo "| data | layers | -z | from the layout | from the registry | ratio |" \
	"one at a time | floor | / floor | three at once | floor | / floor |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
# layer_tars SET: the set's layers as tar.gz files in $work, bottom first.
layer_tars() {
	local tree=$DATA/${1%-3}
	if [ "$1" = rootfs-3 ]; then
		tar --sort=name -C "$tree" -cf - ./usr | gzip -6 >"$work/$1.1.tar.gz"
		tar --sort=name -C "$tree" -cf - ./var | gzip -6 >"$work/$1.2.tar.gz"
		tar --sort=name -C "$tree" --exclude=./usr --exclude=./var -cf - . |
			gzip -6 >"$work/$1.3.tar.gz"
		echo "$work/$1.1.tar.gz" "$work/$1.2.tar.gz" "$work/$1.3.tar.gz"
	else
		tar --sort=name -C "$tree" -cf - . | gzip -6 >"$work/$1.tar.gz"
		echo "$work/$1.tar.gz"
	fi
}
for set in $SETS; do
	layers=$(layer_tars "$set")
	# shellcheck disable=SC2086
	$OCI fromtars "$work/$set" v1 $layers
	$OCI push "$work/$set:v1" "http://127.0.0.1:$port" "bench/$set:v1"
	# shellcheck disable=SC2086
	size=$(stat -c %s $layers | paste -sd+ | bc)
	# shellcheck disable=SC2086
	largest=$(stat -c %s $layers | sort -n | tail -n 1)
	layer_mib=$(echo "scale=1; $size / 1048576" | bc)
	for z in none lz4hc; do
		zopt=()
		[ $z = none ] || zopt=(-z "$z")
		: >"$work/local.t"
		: >"$work/remote.t"
		: >"$work/link.t"
		: >"$work/link1.t"
		for ((i = 0; i < REPS; i++)); do
			seconds "$EROFSKIT" mkfs -q -T0 --oci "$work/$set:v1" "${zopt[@]}" \
				"$work/local.img" >>"$work/local.t"
			seconds "$EROFSKIT" mkfs -q -T0 --oci "oci://127.0.0.1:$port/bench/$set:v1" \
				-o plain_http "${zopt[@]}" "$work/remote.img" >>"$work/remote.t"
			seconds "$EROFSKIT" mkfs -q -T0 --oci \
				"oci://127.0.0.1:$relay_port/bench/$set:v1" \
				-o plain_http,downloads=1 "${zopt[@]}" "$work/link1.img" \
				>>"$work/link1.t"
			seconds "$EROFSKIT" mkfs -q -T0 --oci \
				"oci://127.0.0.1:$relay_port/bench/$set:v1" -o plain_http \
				"${zopt[@]}" "$work/link.img" >>"$work/link.t"
		done
		for img in remote link1 link; do
			cmp -s "$work/local.img" "$work/$img.img" || {
				echo "$set -z $z: the $img image differs from the layout's" >&2
				exit 1
			}
		done
		l=$(median <"$work/local.t")
		r=$(median <"$work/remote.t")
		k1=$(median <"$work/link1.t")
		k=$(median <"$work/link.t")
		floor1=$(echo "d = $size / $RATE; if (d > $l) d else $l" | bc -l)
		floor=$(echo "d = $largest / $RATE; if (d > $l) d else $l" | bc -l)
		printf '| %s | %s MiB | %s | %.2f | %.2f | %.2fx' \
			"$set" "$layer_mib" "$z" "$l" "$r" "$(echo "$r / $l" | bc -l)"
		printf ' | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2fx |\n' \
			"$k1" "$floor1" "$(echo "$k1 / $floor1" | bc -l)" \
			"$k" "$floor" "$(echo "$k / $floor" | bc -l)"
	done
done
