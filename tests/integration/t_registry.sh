#!/bin/bash
# OCI registries: erofskit push stores an image as an artifact in Debian's
# docker-registry (HTTPS; no authentication, htpasswd Basic, and token
# authentication with anonymous or Basic token requests), and fsck,
# --extract and the FUSE mount read it back by tag and by digest; the
# blob is checked against its digest; clear errors for what is missing.
. "$(dirname "$0")/lib.sh"
. "$HERE/http_lib.sh"
export XDG_CACHE_HOME=$T/xdg

mkdir -p "$T/tree" "$T/www"
cp -R "$EROFSKIT_SRC/src/io" "$T/tree/io"
head -c 2000000 /dev/urandom | base64 >"$T/tree/big.txt"
ln -s io/http.c "$T/tree/link"
manifest "$T/tree" "$T/tree.json"
"$EROFSKIT" mkfs -q -zlz4hc "$T/img.erofs" "$T/tree" || fail "mkfs"
start_nginx "$T/www"   # for its certificate
echo alice:wonderland >"$T/cred"
CA=cacert=$T/http/ca.pem

for mode in open basic token token-basic; do
	note "registry with $mode authentication: push, then fsck --extract by tag and by digest"
	start_registry "$mode"
	R=oci://127.0.0.1:$REGISTRY_PORT/erofskit/test
	creds=
	case $mode in
	basic | token-basic)
		expect_exit 2 "$EROFSKIT" push -o "$CA" "$T/img.erofs" "$R:v1" 2>"$T/err"
		grep -qE "user and password|credentials" "$T/err" || fail "$mode: $(cat "$T/err")"
		creds=",credentials=$T/cred"
		;;
	esac
	ref=$("$EROFSKIT" push -o "$CA$creds,header=X-Erofskit-Test: push" \
		"$T/img.erofs" "$R:v1") || fail "$mode: push"
	[[ $ref == "$R@sha256:"* ]] || fail "$mode: push printed '$ref'"
	for r in "$R:v1" "$ref"; do
		rm -rf "$T/x"
		"$EROFSKIT" fsck -q --extract "$T/x" -o "$CA,cache_dir=none$creds" "$r" ||
			fail "$mode: fsck --extract $r"
		tree_is "$T/x" "$T/tree.json" "extraction of $r ($mode)"
	done
	case $mode in
	token) grep -q '^anonymous repository:erofskit/test:pull 200$' "$TOKEN_LOG" ||
		fail "token: no anonymous pull token: $(cat "$TOKEN_LOG")" ;;
	# The registry names the actions in either order (a Go map's).
	token-basic) grep -qE '^basic repository:erofskit/test:(pull,push|push,pull) 200$' "$TOKEN_LOG" ||
		fail "token-basic: no push token for the user: $(cat "$TOKEN_LOG")" ;;
	esac
	# header= goes with every request, the registry's (its token's) too.
	case $mode in
	token*) grep -qx 'header push' "$TOKEN_LOG" ||
		fail "$mode: push -o header= was not sent: $(cat "$TOKEN_LOG")" ;;
	esac
	stop_registry
done

note "FUSE mount of an oci:// reference equals the source"
start_registry open
R=oci://127.0.0.1:$REGISTRY_PORT/erofskit/test
ref=$("$EROFSKIT" push -o "$CA" "$T/img.erofs" "$R:v1") || fail "push"
fmount "$R:v1" "$T/m" "$CA,cache_dir=$T/c1"
manifest "$T/m" "$T/m.json"
fumount "$T/m"
same_manifest "$T/tree.json" "$T/m.json" "FUSE mount of $R:v1"
"$EROFSKIT" dump -o "$CA" --cat /io/http.c "$ref" | cmp - "$T/tree/io/http.c" || fail "dump --cat"

note "a token that expires while mounted is renewed"
stop_registry
TOKEN_LIFETIME=3 start_registry token
R2=oci://127.0.0.1:$REGISTRY_PORT/erofskit/test
"$EROFSKIT" push -o "$CA" "$T/img.erofs" "$R2:v1" >/dev/null || fail "push (token)"
fmount "$R2:v1" "$T/m" "$CA,cache_dir=none"
cmp "$T/m/io/io.h" "$T/tree/io/io.h" || fail "a read with the first token"
before=$(grep -c ' 200$' "$TOKEN_LOG")
sleep 4
cmp "$T/m/big.txt" "$T/tree/big.txt" || fail "a read after the token expired"
fumount "$T/m"
[ "$(grep -c ' 200$' "$TOKEN_LOG")" -gt "$before" ] || fail "no new token was asked for"
stop_registry
start_registry open
R=oci://127.0.0.1:$REGISTRY_PORT/erofskit/test
ref=$("$EROFSKIT" push -o "$CA" "$T/img.erofs" "$R:v1") || fail "push"

note "push without a tag: latest, and the reference by digest keeps the registry's port"
noref=$("$EROFSKIT" push -o "$CA" "$T/img.erofs" "$R") || fail "push without a tag"
[ "$noref" = "$ref" ] || fail "push without a tag printed '$noref', not '$ref'"

note "missing tags, repositories and layers: clear errors"
expect_exit 2 "$EROFSKIT" fsck -o "$CA" "$R:nope" 2>"$T/err"
grep -q "HTTP status 404" "$T/err" || fail "unknown tag: $(cat "$T/err")"
expect_exit 2 "$EROFSKIT" fsck -o "$CA" "oci://127.0.0.1:$REGISTRY_PORT" 2>"$T/err"
grep -q "expected oci://REGISTRY/REPO" "$T/err" || fail "no repository: $(cat "$T/err")"
expect_exit 2 "$EROFSKIT" fsck -o "$CA" "oci://127.0.0.1:$REGISTRY_PORT/Bad/Name:v1" 2>"$T/err"
grep -q "bad repository name" "$T/err" || fail "bad name: $(cat "$T/err")"
expect_exit 2 "$EROFSKIT" push -o "$CA" "$T/img.erofs" "$R@sha256:$(printf '%064d' 0)" 2>"$T/err"
grep -q "push needs a tag" "$T/err" || fail "push by digest: $(cat "$T/err")"
# An image manifest whose layer is not an EROFS image.
base=https://127.0.0.1:$REGISTRY_PORT/v2/erofskit/test
cfg=$(printf '{}' | sha256sum | cut -d' ' -f1)
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:%s","size":2},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":2}]}' \
	"$cfg" "$cfg" >"$T/tar-manifest.json"
curl -sf --cacert "$T/http/ca.pem" -X PUT -H "Content-Type: application/vnd.oci.image.manifest.v1+json" \
	--data-binary @"$T/tar-manifest.json" "$base/manifests/tarball" >/dev/null || fail "PUT a tar manifest"
expect_exit 2 "$EROFSKIT" fsck -o "$CA" "$R:tarball" 2>"$T/err"
grep -q "no layer of media type application/vnd.erofs" "$T/err" || fail "no erofs layer: $(cat "$T/err")"

note "the blob is checked against its digest: a changed byte in the registry's store"
blob=$(find "$T/registry/data" -path "*/blobs/sha256/*/$(sha256sum <"$T/img.erofs" | cut -c1-64)/data")
[ -f "$blob" ] || fail "the blob is not in the registry's store"
size=$(stat -c %s "$blob")
printf 'X' | dd of="$blob" bs=1 seek=$((size - 1)) conv=notrunc status=none
expect_exit 1 "$EROFSKIT" fsck -q -o "$CA,cache_dir=$T/c2" "$ref" 2>"$T/err"
grep -q "not to its digest sha256:" "$T/err" || fail "digest mismatch not reported: $(cat "$T/err")"
# Dropped from the cache: the next reader fetches it again (and fails
# again, the store being still wrong).
expect_exit 1 "$EROFSKIT" fsck -q -o "$CA,cache_dir=$T/c2" "$ref" 2>"$T/err"
# Whether reading FILE fails within 10 s (the whole blob is checked in
# the background), each try past the page cache; its error in $T/err.
read_fails_soon() {
	local _
	for _ in $(seq 100); do
		echo 1 >/proc/sys/vm/drop_caches
		cat "$1" >/dev/null 2>"$T/err" || return 0
		sleep 0.1
	done
	return 1
}
# A mount checks the blob once all of it is here (prefetch=all brings it):
# then reads fail.  The whole blob may be here before the server has read
# the root inode: then the mount itself fails, saying why.
mkdir -p "$T/m"
if "$EROFSKIT" mount -o "$CA,cache_dir=$T/c3,prefetch=all,cache=0" "$ref" "$T/m" 2>"$T/err"; then
	_mounts+=("$T/m")
	mountpoint -q "$T/m" || fail "erofskit mount said yes and $T/m is not a mount point"
	failed=no
	read_fails_soon "$T/m/io/io.h" && failed=yes
	fumount "$T/m"
	[ $failed = yes ] || fail "a mount of a blob that does not match its digest kept reading"
	grep -q "Input/output error" "$T/err" || fail "not EIO: $(cat "$T/err")"
else
	grep -q "not to its digest sha256:" "$T/err" || fail "mount refused, not for the digest: $(cat "$T/err")"
	! mountpoint -q "$T/m" || fail "a refused mount left $T/m mounted"
fi
# So do reads of a file read before the blob was whole, whose bytes the
# packed inode's own cache holds decoded: here the readers bring the
# last chunks.
fmount "$ref" "$T/m" "$CA,cache_dir=$T/c4,cache=0"
cat "$T/m/io/io.h" >/dev/null || fail "a read before the blob is whole"
find "$T/m" -type f -exec cat {} + >/dev/null 2>&1 || true
failed=no
read_fails_soon "$T/m/io/io.h" && failed=yes
fumount "$T/m"
[ $failed = yes ] || fail "a file read before the blob was found bad is still served"
stop_registry
echo PASS
