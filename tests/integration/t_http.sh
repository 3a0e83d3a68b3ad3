#!/bin/bash
# Images at http:// and https:// URLs, served by nginx and by a server that
# misbehaves on purpose (faulty_http.py): fsck, --extract and the FUSE
# mount read every byte right; the block cache serves a second run without
# a byte of the image from the network, survives corruption, a full disk
# and a bound; faults give a clear error or a correct read.
. "$(dirname "$0")/lib.sh"
. "$HERE/http_lib.sh"
export XDG_CACHE_HOME=$T/xdg

# Image bytes the server sent for ranged GETs (nginx log: field 5).  nginx
# logs a request once its last byte is sent, a moment after the client may
# have it: the log is read once it has stopped growing.
fetched_bytes() {
	settle_log "$NGINX_LOG"
	awk '$1 == "GET" { s += $5 } END { print s + 0 }' "$NGINX_LOG"
}

mkdir -p "$T/tree" "$T/www/private"
cp -R "$EROFSKIT_SRC/src" "$T/tree/src"
head -c 6000000 /dev/urandom | base64 >"$T/tree/big.txt"
head -c 3000000 /dev/urandom >"$T/tree/random.bin"
ln "$T/tree/big.txt" "$T/tree/big-link.txt"
ln -s src/io "$T/tree/io-link"
setfattr -n user.origin -v http "$T/tree/random.bin"
manifest "$T/tree" "$T/tree.json"
"$EROFSKIT" mkfs -q -zzstd -C65536 "$T/www/img.erofs" "$T/tree" || fail "mkfs"
cp "$T/www/img.erofs" "$T/www/private/img.erofs"

start_nginx "$T/www"
H=http://127.0.0.1:$HTTP_PORT
S=https://127.0.0.1:$HTTPS_PORT
CA=cacert=$T/http/ca.pem

note "fsck and --extract over HTTP and HTTPS (HTTP/2) equal the source"
"$EROFSKIT" fsck -q -o cache_dir=none "$H/img.erofs" || fail "fsck over http"
"$EROFSKIT" fsck -q --extract "$T/x" -o "$CA" "$S/img.erofs" || fail "fsck --extract over https"
tree_is "$T/x" "$T/tree.json" "extraction over https"
grep -q ' HTTP/2.0$' "$NGINX_LOG" || fail "https was not HTTP/2"
"$EROFSKIT" dump -o "$CA" --cat /src/io/http.c "$S/img.erofs" | cmp - "$T/tree/src/io/http.c" ||
	fail "dump --cat over https"

note "libcurl is loaded only for a URL, and its absence is a clear error"
opens_none libcurl "$EROFSKIT" fsck -q "$T/www/img.erofs"
expect_exit 2 without_libs '^libcurl.*\\.so\\.4$' "$EROFSKIT" fsck -q -o cache_dir=none "$H/img.erofs" 2>"$T/err"
grep -q "libcurl.*libcurl4" "$T/err" || fail "no libcurl error: $(cat "$T/err")"

note "the server's certificate is verified unless -o insecure"
expect_exit 2 "$EROFSKIT" fsck -q -o cache_dir=none "$S/img.erofs" 2>"$T/err"
grep -q "$S/img.erofs: .*certificate" "$T/err" || fail "no certificate error: $(cat "$T/err")"
"$EROFSKIT" fsck -q -o insecure,cache_dir=none "$S/img.erofs" || fail "fsck -o insecure"

note "FUSE mount of a URL equals the source; a second mount fetches no image byte"
fmount "$S/img.erofs" "$T/m" "$CA,cache_dir=$T/c1"
manifest "$T/m" "$T/m.json"
fumount "$T/m"
same_manifest "$T/tree.json" "$T/m.json" "FUSE mount over https"
: >"$NGINX_LOG"
fmount "$S/img.erofs" "$T/m" "$CA,cache_dir=$T/c1"
manifest "$T/m" "$T/m.json"
fumount "$T/m"
same_manifest "$T/tree.json" "$T/m.json" "FUSE mount over https, warm cache"
[ "$(fetched_bytes)" = 0 ] || fail "warm cache: $(fetched_bytes) image bytes fetched"
grep -q '^HEAD ' "$NGINX_LOG" || fail "warm cache: the object was not checked"

note "a URL with commas in its query mounts (FUSE's option list escapes them)"
fmount "$H/img.erofs?a=1,b=2" "$T/m" "cache_dir=none"
cmp "$T/m/src/io/http.c" "$T/tree/src/io/http.c" || fail "read through a URL with commas"
grep -qF "img.erofs?a=1,b=2 $T/m fuse.erofskit" /proc/mounts || fail "fsname: $(grep "$T/m" /proc/mounts)"
fumount "$T/m"

note "a damaged cache is a miss, never a wrong byte"
data=$(ls "$T/c1"/*.data)
dd if=/dev/urandom of="$data" bs=64K seek=2 count=8 conv=notrunc status=none
: >"$NGINX_LOG"
rm -rf "$T/x"
"$EROFSKIT" fsck -q --extract "$T/x" -o "$CA,cache_dir=$T/c1" "$S/img.erofs" ||
	fail "fsck over a damaged cache"
tree_is "$T/x" "$T/tree.json" "extraction over a damaged cache"
[ "$(fetched_bytes)" -ge $((8 * 65536)) ] || fail "damaged chunks were not fetched again"

note "a cache on a full disk, and a bounded cache, still read right"
mkdir -p "$T/small"
mount -t tmpfs -o size=256k tmpfs "$T/small"
_mounts+=("$T/small")
for opts in "cache_dir=$T/small/c" "cache_dir=$T/c2,cache_max=1M"; do
	rm -rf "$T/x"
	"$EROFSKIT" fsck -q --extract "$T/x" -o "$opts" "$H/img.erofs" || fail "fsck -o $opts"
	tree_is "$T/x" "$T/tree.json" "extraction with -o $opts"
done
kb=$(du -k "$T/c2"/*.data | cut -f1)
[ "$kb" -le 1100 ] || fail "cache_max=1M: the cache holds $kb KiB"

note "the cache directory is bounded as a whole, and forgets replaced images"
# Two images in one directory bounded to 1M: the one not in use goes.
cp "$T/www/img.erofs" "$T/www/copy.erofs"
echo "another version" >>"$T/www/copy.erofs"
"$EROFSKIT" fsck -q -o "cache_dir=$T/c6,cache_max=1M" "$H/img.erofs" || fail "fsck (c6)"
"$EROFSKIT" fsck -q -o "cache_dir=$T/c6,cache_max=1M" "$H/copy.erofs" || fail "fsck copy (c6)"
[ "$(ls "$T/c6"/*.map | wc -l)" = 1 ] || fail "two images kept past cache_max: $(ls "$T/c6")"
kb=$(du -k -c "$T/c6"/*.data | tail -1 | cut -f1)
[ "$kb" -le 1100 ] || fail "cache_max=1M: the directory holds $kb KiB"
# The same URL with new contents (another ETag): the old version goes.
"$EROFSKIT" fsck -q -o "cache_dir=$T/c7" "$H/copy.erofs" || fail "fsck copy (c7)"
cp "$T/www/img.erofs" "$T/www/copy.erofs.new"
mv "$T/www/copy.erofs.new" "$T/www/copy.erofs"
"$EROFSKIT" fsck -q -o "cache_dir=$T/c7" "$H/copy.erofs" || fail "fsck replaced copy (c7)"
[ "$(ls "$T/c7"/*.map | wc -l)" = 1 ] || fail "a replaced image's old blocks were kept: $(ls "$T/c7")"

note "a cache directory others may write is refused"
mkdir -p "$T/shared-cache"
chmod 1777 "$T/shared-cache"
expect_exit 2 "$EROFSKIT" fsck -q -o "cache_dir=$T/shared-cache" "$H/img.erofs" 2>"$T/err"
grep -q "only it may write" "$T/err" || fail "shared cache dir: $(cat "$T/err")"

note "concurrent readers share one cache"
pids=()
for i in 1 2 3; do
	"$EROFSKIT" fsck -q -o "cache_dir=$T/c3" "$H/img.erofs" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a concurrent fsck failed"; done
: >"$NGINX_LOG"
"$EROFSKIT" fsck -q -o "cache_dir=$T/c3" "$H/img.erofs" || fail "fsck after concurrent runs"
[ "$(fetched_bytes)" = 0 ] || fail "after concurrent runs: $(fetched_bytes) bytes fetched"

note "authentication: a bearer token from a file, or a header"
expect_exit 2 "$EROFSKIT" fsck -q -o cache_dir=none "$H/private/img.erofs" 2>"$T/err"
grep -q "HTTP status 401" "$T/err" || fail "no 401 reported: $(cat "$T/err")"
echo s3cret >"$T/token"
"$EROFSKIT" fsck -q -o "token=$T/token,cache_dir=none" "$H/private/img.erofs" || fail "token="
"$EROFSKIT" fsck -q -o "header=Authorization: Bearer s3cret,cache_dir=none" "$H/private/img.erofs" ||
	fail "header="

note "missing images and servers: clear errors"
expect_exit 2 "$EROFSKIT" fsck -o cache_dir=none "$H/nope.erofs" 2>"$T/err"
grep -q "$H/nope.erofs: HTTP status 404" "$T/err" || fail "404: $(cat "$T/err")"
expect_exit 2 "$EROFSKIT" fsck -o cache_dir=none,retries=0 "http://127.0.0.1:$(free_port)/x" 2>"$T/err"
grep -qi "connect" "$T/err" || fail "no server: $(cat "$T/err")"
expect_exit 2 "$EROFSKIT" fsck -o bogus "$H/img.erofs" 2>"$T/err"
grep -q "unknown option 'bogus'" "$T/err" || fail "-o bogus: $(cat "$T/err")"

note "a server that drops, fails, stalls: retried; one that lies: refused"
for mode in drop error500 stall noetag norange liar; do
	: >"$T/faulty.log"
	start_faulty "$mode" "$T/www/img.erofs"
	U=http://127.0.0.1:$FAULTY_PORT/img.erofs
	rm -rf "$T/x" "$T/c4"
	got=0
	"$EROFSKIT" fsck -q --extract "$T/x" -o "timeout=1,cache_dir=$T/c4" "$U" 2>"$T/err" || got=$?
	stop_faulty
	case $mode in
	norange | liar)
		[ "$got" = 2 ] || fail "$mode: exit $got"
		want=$([ $mode = norange ] && echo "ignores Range" || echo "asked for bytes")
		grep -q "$want" "$T/err" || fail "$mode: $(cat "$T/err")"
		;;
	*)
		[ "$got" = 0 ] || fail "$mode: exit $got: $(cat "$T/err")"
		tree_is "$T/x" "$T/tree.json" "extraction through a server that does $mode"
		;;
	esac
	case $mode in
	error500) grep -q ' 500 ' "$T/faulty.log" || fail "error500: no 500 sent" ;;
	drop) grep -q '^GET bytes=0-65535 206 32768$' "$T/faulty.log" || fail "drop: nothing dropped" ;;
	noetag) [ -z "$(ls -A "$T/c4")" ] || fail "noetag: an object without a validator was cached" ;;
	esac
done
start_faulty error500 "$T/www/img.erofs"
expect_exit 2 "$EROFSKIT" fsck -q -o retries=0,cache_dir=none "http://127.0.0.1:$FAULTY_PORT/img.erofs" 2>"$T/err"
grep -q "HTTP status 500 (gave up after retries)" "$T/err" || fail "retries=0: $(cat "$T/err")"
stop_faulty

note "prefetch=all: the whole image cached in the background, read with the server gone"
: >"$NGINX_LOG"
fmount "$H/img.erofs" "$T/m" "cache_dir=$T/c5,prefetch=all"
size=$(stat -c %s "$T/www/img.erofs")
for _ in $(seq 200); do
	[ "$(fetched_bytes)" -ge "$size" ] && break
	sleep 0.1
done
[ "$(fetched_bytes)" -ge "$size" ] || fail "prefetch=all fetched $(fetched_bytes) of $size bytes"
stop_servers
manifest "$T/m" "$T/m.json"
fumount "$T/m"
same_manifest "$T/tree.json" "$T/m.json" "FUSE mount after prefetch=all, server gone"

note "an image replaced on the server while mounted: EIO, never a mix"
mkdir -p "$T/tree2"
cp -R "$T/tree/src" "$T/tree2/src"
head -c 6000000 /dev/urandom | base64 >"$T/tree2/big.txt"
"$EROFSKIT" mkfs -q -zzstd -C65536 "$T/www/img2.erofs" "$T/tree2" || fail "mkfs 2"
start_faulty change "$T/www/img.erofs"
fmount "http://127.0.0.1:$FAULTY_PORT/img.erofs" "$T/m" "cache_dir=none,retries=0"
cmp "$T/m/src/io/io.h" "$T/tree/src/io/io.h" || fail "read before the change"
cp "$T/www/img2.erofs" "$T/www/img.erofs.next"
if cat "$T/m/big.txt" >"$T/big.out" 2>"$T/err"; then
	cmp -s "$T/big.out" "$T/tree/big.txt" || fail "a changed image gave bytes of neither"
	fail "a changed image was read without an error"
fi
grep -q "Input/output error" "$T/err" || fail "not EIO: $(cat "$T/err")"
fumount "$T/m"
echo "PASS"
