#!/bin/bash
# Images read over HTTP(S) against the same image read from a local file,
# through erofskit mount:
#   1. the seeds' fio jobs (4 KiB sequential, random over the whole file,
#      random 14 MiB) on a deflate-9 image of the ~285 MiB file, served by
#      nginx on 127.0.0.1: local file, http://, https:// (HTTP/2), and
#      https:// through bench/delay_relay.py, which holds the first byte of
#      every response 20 ms (this kernel has no netem).  Each run: a fresh
#      mount, an empty block cache, dropped caches; REPS runs alternating
#      the rows, medians quoted.
#   2. time to first byte: a 1 GiB image (uncompressed: the three data
#      sets and the file again) mounted over the 20 ms link, then `cat` of
#      one small file, then the first 4 KiB of the image's last file:
#      requests (nginx's log), image bytes fetched and wall time of each.
#   3. a second mount with the warm cache: image bytes fetched (must be 0)
#      and fio sequential against the local mount.
#   4. the Debian root filesystem image over https: every file through
#      the mount equals the kernel's mount of the local file; fsck and
#      fsck --extract of the URL equal those of the file.
# Prints markdown.  Needs root, nginx, fio.
#
#   bench/remote.sh            data: $BENCH_DATA (default /tmp/data, made
#                              by bench/datasets.sh)
#   REPS=3  DELAY_MS=20
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EROFSKIT=${EROFSKIT:-$top/build/erofskit}
REPS=${REPS:-3}
DELAY_MS=${DELAY_MS:-20}
DATA=${BENCH_DATA:-/tmp/data}

[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
for t in fio nginx openssl; do
	command -v $t >/dev/null || { echo "needs $t (scripts/deps.sh --bench)" >&2; exit 1; }
done
[ -f "$DATA/one/testfile" ] && [ -d "$DATA/rootfs" ] && [ -d "$DATA/src" ] ||
	bash "$here/datasets.sh" "$DATA" >&2

# The tests' server helpers (nginx with a certificate of its own).
T=$(mktemp -d /tmp/erofskit-remote.XXXXXX)
HERE=$top/tests/integration
mnt=$T/mnt
fail() { echo "bench/remote.sh: $*" >&2; exit 1; }
cleanup() {
	mountpoint -q "$mnt" && { fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; }
	rm -rf "$T"
}
# shellcheck source=../tests/integration/http_lib.sh
. "$HERE/http_lib.sh"
trap 'stop_servers; cleanup' EXIT
mkdir -p "$mnt" "$T/www" "$T/one" "$T/big"

drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
. "$here/lib.sh"
# Image bytes sent for ranged GETs since the log was emptied.
log_bytes() { awk '$1 == "GET" { s += $5 } END { print s + 0 }' "$NGINX_LOG"; }
log_requests() { wc -l <"$NGINX_LOG"; }

fio_bw() {
	local extra
	case $2 in
	seq) extra=(-rw=read) ;;
	rand) extra=(-rw=randread) ;;
	small) extra=(-rw=randread --io_size=14m) ;;
	esac
	fio -filename="$1" -bs=4k "${extra[@]}" -name=job1 --output-format=json 2>/dev/null |
		python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["jobs"][0]["read"]["bw"] / 1024))'
}

unmount_now() {
	fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt"
	for _ in $(seq 50); do
		pgrep -f "erofskit mount .* $mnt\$" >/dev/null || break
		sleep 0.1
	done
}

# mount_row ROW: erofskit mount of the deflate image as ROW reads it, with
# an empty cache.
mount_row() {
	rm -rf "$T/cache"
	case $1 in
	local) "$EROFSKIT" mount "$T/www/d9.img" "$mnt" ;;
	http) "$EROFSKIT" mount -o "cache_dir=$T/cache" "http://127.0.0.1:$HTTP_PORT/d9.img" "$mnt" ;;
	https) "$EROFSKIT" mount -o "cacert=$T/http/ca.pem,cache_dir=$T/cache" \
		"https://127.0.0.1:$HTTPS_PORT/d9.img" "$mnt" ;;
	https+delay) "$EROFSKIT" mount -o "cacert=$T/http/ca.pem,cache_dir=$T/cache" \
		"https://127.0.0.1:$RELAY_PORT/d9.img" "$mnt" ;;
	esac
}

ln "$DATA/one/testfile" "$T/one/testfile" 2>/dev/null || cp "$DATA/one/testfile" "$T/one/testfile"
"$EROFSKIT" mkfs -q -zdeflate,level=9 -C65536 "$T/www/d9.img" "$T/one"
start_nginx "$T/www"
RELAY_PORT=$(free_port)
python3 "$here/delay_relay.py" --listen "$RELAY_PORT" --to "$HTTPS_PORT" --delay-ms "$DELAY_MS" &
_servers+=($!)
wait_port "$RELAY_PORT" $!

rows="local http https https+delay"
echo "## Images over HTTP(S): erofskit mount, $(($(stat -c %s "$T/one/testfile") >> 20)) MiB file, deflate level 9, -C 65536"
echo
echo "Machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), kernel $(uname -r)."
echo "nginx on 127.0.0.1; https+delay: every response's first byte held ${DELAY_MS} ms."
echo "MiB/s, median of $REPS runs alternating the rows; a fresh mount, an empty"
echo "block cache and dropped caches before each run."
echo
echo "| reader | seq 4k | randread 4k | randread 4k, 14 MiB |"
echo "|---|---|---|---|"
declare -A res
for rep in $(seq "$REPS"); do
	for mode in seq rand small; do
		for row in $rows; do
			mount_row "$row"
			drop
			res[$row.$mode]+="$(fio_bw "$mnt/testfile" $mode) "
			unmount_now
		done
	done
done
for row in $rows; do
	printf "| %s |" "$row"
	for mode in seq rand small; do
		printf " %s |" "$(echo "${res[$row.$mode]}" | tr ' ' '\n' | grep . | median)"
	done
	echo
done
loc=$(echo "${res[local.seq]}" | tr ' ' '\n' | grep . | median)
for row in http https https+delay; do
	s=$(echo "${res[$row.seq]}" | tr ' ' '\n' | grep . | median)
	echo
	printf "%s sequential: %.2fx local" "$row" "$(echo "$s / $loc" | bc -l)"
done
echo
printf "https+delay sequential: %.2fx https\n" "$(echo "$(echo "${res[https+delay.seq]}" | tr ' ' '\n' | grep . | median) / $(echo "${res[https.seq]}" | tr ' ' '\n' | grep . | median)" | bc -l)"

echo
echo "### Time to first byte over the ${DELAY_MS} ms link"
echo
# Uncompressed, to be 1 GiB: the data sets (hard links where they share
# the file system, else copies) and a copy of the file.
mkdir -p "$T/big/one2"
cp -al "$DATA/rootfs" "$DATA/src" "$DATA/one" "$T/big/" 2>/dev/null ||
	cp -a "$DATA/rootfs" "$DATA/src" "$DATA/one" "$T/big/"
# A copy, not a link: a link would be stored once.
cp "$DATA/one/testfile" "$T/big/one2/testfile"
echo x >>"$T/big/one2/testfile"
"$EROFSKIT" mkfs -q "$T/www/big.img" "$T/big"
rm -rf "$T/cache"
: >"$NGINX_LOG"
t0=$(date +%s.%N)
"$EROFSKIT" mount -o "cacert=$T/http/ca.pem,cache_dir=$T/cache" "https://127.0.0.1:$RELAY_PORT/big.img" "$mnt"
t1=$(date +%s.%N)
mreq=$(log_requests)
mbytes=$(log_bytes)
: >"$NGINX_LOG"
cat "$mnt/rootfs/etc/debian_version" >/dev/null
t2=$(date +%s.%N)
creq=$(log_requests)
cbytes=$(log_bytes)
# One far from the metadata: the first 4 KiB of the last file's data.
: >"$NGINX_LOG"
head -c 4096 "$mnt/one2/testfile" >/dev/null
t3=$(date +%s.%N)
freq=$(log_requests)
fbytes=$(log_bytes)
unmount_now
echo "| image | step | requests | image bytes fetched | wall time |"
echo "|---|---|---|---|---|"
printf "| %d MiB | mount | %d | %d | %.3f s |\n" $(($(stat -c %s "$T/www/big.img") >> 20)) "$mreq" "$mbytes" "$(echo "$t1 - $t0" | bc -l)"
printf "| | cat /rootfs/etc/debian_version | %d | %d | %.3f s |\n" "$creq" "$cbytes" "$(echo "$t2 - $t1" | bc -l)"
printf "| | head -c 4096 /one2/testfile | %d | %d | %.3f s |\n" "$freq" "$fbytes" "$(echo "$t3 - $t2" | bc -l)"

echo
echo "### A second mount with the warm cache (https)"
echo
"$EROFSKIT" mount -o "cacert=$T/http/ca.pem,cache_dir=$T/warm" "https://127.0.0.1:$HTTPS_PORT/d9.img" "$mnt"
cat "$mnt/testfile" >/dev/null
unmount_now
warm=() loc=()
for rep in $(seq "$REPS"); do
	: >"$NGINX_LOG"
	"$EROFSKIT" mount -o "cacert=$T/http/ca.pem,cache_dir=$T/warm" "https://127.0.0.1:$HTTPS_PORT/d9.img" "$mnt"
	drop
	warm+=("$(fio_bw "$mnt/testfile" seq)")
	unmount_now
	wbytes=$(log_bytes)
	wreq=$(log_requests)
	mount_row local
	drop
	loc+=("$(fio_bw "$mnt/testfile" seq)")
	unmount_now
done
w=$(printf '%s\n' "${warm[@]}" | median)
l=$(printf '%s\n' "${loc[@]}" | median)
echo "| reader | seq 4k MiB/s | requests | image bytes fetched |"
echo "|---|---|---|---|"
echo "| local | $l | | |"
echo "| https, warm cache | $w | $wreq | $wbytes |"
echo
printf "warm / local: %.2fx\n" "$(echo "$w / $l" | bc -l)"

echo
echo "### The Debian root filesystem over https equals the local image"
echo
"$EROFSKIT" mkfs -q -zdeflate,level=9 "$T/www/rootfs.img" "$DATA/rootfs"
U=https://127.0.0.1:$HTTPS_PORT/rootfs.img
O=cacert=$T/http/ca.pem,cache_dir=$T/rootfs-cache
mkdir -p "$T/kmnt"
mount -t erofs -o loop,ro "$T/www/rootfs.img" "$T/kmnt"
python3 "$HERE/manifest.py" "$T/kmnt" -o "$T/kernel.json"
umount "$T/kmnt"
"$EROFSKIT" mount -o "$O" "$U" "$mnt"
python3 "$HERE/manifest.py" "$mnt" -o "$T/remote.json"
unmount_now
python3 "$HERE/manifest.py" --compare "$T/kernel.json" "$T/remote.json" >/dev/null &&
	mount_same=yes || mount_same=NO
local_fsck=$("$EROFSKIT" fsck "$T/www/rootfs.img" | sed 's/.*: clean: //; s/ in [0-9.]* s$//')
remote_fsck=$("$EROFSKIT" fsck -o "$O" "$U" | sed 's/.*: clean: //; s/ in [0-9.]* s$//')
"$EROFSKIT" fsck -q --extract "$T/x-local" "$T/www/rootfs.img"
"$EROFSKIT" fsck -q --extract "$T/x-remote" -o "$O" "$U"
python3 "$HERE/manifest.py" "$T/x-local" -o "$T/x-local.json"
python3 "$HERE/manifest.py" "$T/x-remote" -o "$T/x-remote.json"
python3 "$HERE/manifest.py" --compare "$T/x-local.json" "$T/x-remote.json" >/dev/null &&
	extract_same=yes || extract_same=NO
[ "$local_fsck" = "$remote_fsck" ] && fsck_same=yes || fsck_same=NO
echo "| check | equal |"
echo "|---|---|"
echo "| every file through \`erofskit mount URL\` = kernel mount of the file ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["entries"]))' "$T/kernel.json") entries) | $mount_same |"
echo "| \`fsck URL\` = \`fsck FILE\` ($remote_fsck) | $fsck_same |"
echo "| \`fsck --extract DIR URL\` = \`fsck --extract DIR FILE\` | $extract_same |"
