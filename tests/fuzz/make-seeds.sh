#!/bin/bash
# Seed corpora for the fuzz targets: small images made by erofskit mkfs
# for every feature, the small upstream fixture images, and compressed
# streams taken out of those images for the codec target.
#   make-seeds.sh EROFSKIT OUTDIR [FIXTURES_DIR]
set -euo pipefail
tool=$1 out=$2 fixtures=${3:-}
mkdir -p "$out/image" "$out/codec" "$out/tar" "$out/oci" "$out/net"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

src=$work/src
mkdir -p "$src/d/e" "$src/empty"
python3 - "$src" <<'PY'
import os, random, sys
root = sys.argv[1]
r = random.Random(1)
words = [bytes(r.choice(b"abcdefghij") for _ in range(r.randint(2, 8))) for _ in range(100)]
open(os.path.join(root, "text"), "wb").write(b" ".join(r.choice(words) for _ in range(6000)))
open(os.path.join(root, "random"), "wb").write(bytes(r.randrange(256) for _ in range(9000)))
open(os.path.join(root, "small"), "wb").write(b"hello\n")
open(os.path.join(root, "text-copy"), "wb").write(open(os.path.join(root, "text"), "rb").read())
open(os.path.join(root, "d", "e", "deep"), "wb").write(b"x" * 5000)
os.symlink("text", os.path.join(root, "link"))
os.link(os.path.join(root, "small"), os.path.join(root, "d", "hardlink"))
for i in range(40):
    open(os.path.join(root, "d", "f%02d" % i), "wb").write(b"%d" % i * 50)
os.setxattr(os.path.join(root, "text"), "user.a", b"1" * 100)
os.setxattr(os.path.join(root, "small"), "user.shared", b"s")
os.setxattr(os.path.join(root, "random"), "user.shared", b"s")
with open(os.path.join(root, "sparse"), "wb") as f:
    f.truncate(3 << 20)
    f.seek(1 << 20)
    f.write(b"data in the middle")
PY
mkfifo "$src/fifo"
n=0
# The layouts erofskit writes too: tails after the inode, fragments in the
# packed inode (some deduplicated), shared pclusters, the 48-bit format,
# inodes in a metabox, chunk-based files (block maps and indexes), full
# lcluster indexes (-Elegacy-compress), directories without ".".
for opts in "" "-b 512" "-zlz4" "-zlz4hc -C16384" "-zdeflate" "-zzstd -C65536" \
	    "-zlzma -C8192" "-b 512 -zlz4hc -C4096" "-zdeflate,9 -b 1024" \
	    "-zlz4hc -Eztailpacking" "-zzstd -Efragments,dedupe" \
	    "-zlzma -C16384 -Eall-fragments" "-b 512 -zlz4 -C2048 -Efragments" \
	    "-zdeflate -Eztailpacking,dedupe" "-Ededupe" "-zzstd -E48bit" \
	    "-zlz4hc -m4096 -Efragments" "-zdeflate -C16384 -m16384 -Eztailpacking" \
	    "--chunksize 4096" "-b 1024 --chunksize 8192 -Eforce-chunk-indexes" \
	    "-zlz4hc -Elegacy-compress,fragments,dedupe" "-Edot-omitted" \
	    "-zlz4 -m4096 -Edot-omitted"; do
	# shellcheck disable=SC2086
	"$tool" mkfs -q -T 0 $opts "$out/image/ours-$n.img" "$src"
	n=$((n + 1))
done
# Three algorithms, each file's picked by a compress hints rule.
printf '4096 1 text\n8192 2 ^d/\n' >"$work/hints"
"$tool" mkfs -q -T 0 -zlz4hc:lzma:zstd -Eztailpacking --compress-hints "$work/hints" \
	"$out/image/ours-algorithms.img" "$src"
# Long xattr prefixes: the table after the superblock, and in the packed
# inode's data.
"$tool" mkfs -q -T 0 --xattr-prefix user.sha "$out/image/ours-prefix-plain.img" "$src"
"$tool" mkfs -q -T 0 -zlz4hc -Efragments --xattr-prefix user.sha \
	"$out/image/ours-prefix-packed.img" "$src"
# A device table (upstream --blobdev, when its mkfs.erofs is here): the
# image alone, its chunks on a device that is nowhere; and the image with
# the blob appended, its slot giving the unified address that makes it
# flat (the slot's blocks and uniaddr at 1216; the checksum bit cleared).
if command -v mkfs.erofs >/dev/null; then
	mkfs.erofs -T0 --blobdev="$work/blob" --chunksize=4096 "$out/image/blobdev.img" "$src/d" \
		>/dev/null 2>&1
	python3 - "$out/image/blobdev.img" "$work/blob" "$out/image/blobdev-flat.img" <<'PY'
import struct, sys
img = bytearray(open(sys.argv[1], "rb").read())
blob = open(sys.argv[2], "rb").read()
img[1216:1224] = struct.pack("<II", len(blob) // 4096, len(img) // 4096)
img[1032] &= ~1
open(sys.argv[3], "wb").write(bytes(img) + blob)
PY
fi
# erofskit's own --blobdev image, its blob appended (read flat).
"$tool" mkfs -q -T 0 --chunksize 4096 --blobdev "$work/ours.blob" "$work/ours-blob.img" "$src"
cat "$work/ours-blob.img" "$work/ours.blob" >"$out/image/ours-blobdev.img"
# Archives for the tar target: each dialect, compressed ones, one layer
# with whiteouts.
for fmt in gnu posix ustar v7; do
	tar --format=$fmt -C "$src" -cf "$out/tar/$fmt.tar" ./text ./small ./d ./link 2>/dev/null ||
		tar --format=$fmt -C "$src" -cf "$out/tar/$fmt.tar" ./small ./link
done
tar --format=posix --xattrs --sparse -C "$src" -cf - ./sparse ./text | gzip -n >"$out/tar/sparse.tar.gz"
# the other two streams erofskit decodes itself
xz -c "$out/tar/posix.tar" >"$out/tar/posix.tar.xz"
zstd -q -c "$out/tar/ustar.tar" >"$out/tar/ustar.tar.zst"
mkdir -p "$work/layer/dir"
: >"$work/layer/.wh.gone"
: >"$work/layer/dir/.wh..wh..opq"
echo new >"$work/layer/dir/file"
tar -C "$work/layer" -cf "$out/tar/layer.tar" .
# Layouts for the OCI target (fuzz_oci.c's input: parts, "sha256:@N" and
# "@@N" naming part N's digest and size): two layers, one with whiteouts.
mkdir -p "$out/oci"
python3 - "$out/tar/gnu.tar" "$out/tar/layer.tar" "$out/oci/layout" <<'PY'
import sys
layer = lambda n: '{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:@%d","size":@@%d}' % (n, n)
index = ('{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json",'
         '"digest":"sha256:@1","size":@@1,"annotations":{"org.opencontainers.image.ref.name":"t"}}]}')
manifest = ('{"schemaVersion":2,"config":{"mediaType":"application/vnd.oci.image.config.v1+json",'
            '"digest":"sha256:@2","size":@@2},"layers":[%s,%s]}' % (layer(3), layer(4)))
config = '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}'
parts = [index.encode(), manifest.encode(), config.encode(),
         open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()]
open(sys.argv[3], "wb").write(b"\n--\n".join(parts))
PY
# Scripts of server answers for the network target (fuzz_net.c's input:
# a client byte, then answers split by "#next" lines; "@RANGE@" serves an
# object by Range, "@HOST@" names the server): an image at a URL, with
# and without a HEAD answer of its own, behind a redirect; one in a
# registry, directly, after a token challenge, behind an index, and with
# credentials (Basic auth, a token); a container image that mkfs --oci
# pulls (client byte 5: its manifest, config and layer; behind an index).
python3 - "$out/image/ours-2.img" "$out/net" "$out/tar/layer.tar" <<'PY'
import hashlib, json, sys
img = open(sys.argv[1], "rb").read()
out = sys.argv[2]
tar = open(sys.argv[3], "rb").read()
sep = b"\n#next\n"
obj = b"@RANGE@\n" + img
def answer(status, body, ctype="application/json", extra=""):
    return ("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n"
            % (status, ctype, len(body), extra)).encode() + body
digest = "sha256:" + hashlib.sha256(img).hexdigest()
manifest = json.dumps({
    "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "artifactType": "application/vnd.erofs",
    "config": {"mediaType": "application/vnd.oci.empty.v1+json",
               "digest": "sha256:" + hashlib.sha256(b"{}").hexdigest(), "size": 2},
    "layers": [{"mediaType": "application/vnd.erofs", "digest": digest, "size": len(img)}],
}, separators=(",", ":")).encode()
mtype = "application/vnd.oci.image.manifest.v1+json"
index = json.dumps({
    "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
    "manifests": [{"mediaType": mtype, "size": len(manifest),
                   "digest": "sha256:" + hashlib.sha256(manifest).hexdigest()}],
}, separators=(",", ":")).encode()
challenge = ('WWW-Authenticate: Bearer realm="http://@HOST@/token",service="fuzz",'
             'scope="repository:fuzz/image:pull"\r\n')
seeds = {
    "url": b"\0" + obj,
    "url-head": b"\0" + ('HTTP/1.1 200 OK\r\nContent-Length: %d\r\nETag: "fuzz"\r\n'
                         'Accept-Ranges: bytes\r\n\r\n' % len(img)).encode() + sep + obj,
    "url-redirect": b"\0" + b"HTTP/1.1 302 Found\r\nLocation: http://@HOST@/moved\r\n"
                   b"Content-Length: 0\r\n\r\n" + sep + obj,
    "registry": b"\1" + answer("200 OK", manifest, mtype) + sep + obj,
    "registry-token": b"\1" + answer("401 Unauthorized", b"{}", extra=challenge) + sep +
                      answer("200 OK", b'{"token":"t0k3n","expires_in":300}') + sep +
                      answer("200 OK", manifest, mtype) + sep + obj,
    "registry-index": b"\1" + answer("200 OK", index, "application/vnd.oci.image.index.v1+json") +
                      sep + answer("200 OK", manifest, mtype) + sep + obj,
    "registry-basic": b"\3" + answer("401 Unauthorized", b"{}",
                                     extra='WWW-Authenticate: Basic realm="fuzz"\r\n') + sep +
                      answer("200 OK", manifest, mtype) + sep + obj,
    "registry-token-login": b"\3" + answer("401 Unauthorized", b"{}", extra=challenge) + sep +
                            answer("200 OK", b'{"access_token":"t0k3n"}') + sep +
                            answer("200 OK", manifest, mtype) + sep + obj,
}
def desc(media_type, blob):
    return {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(blob).hexdigest(),
            "size": len(blob)}
config = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {
    "type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(tar).hexdigest()]}}).encode()
image = json.dumps({
    "schemaVersion": 2, "mediaType": mtype,
    "config": desc("application/vnd.oci.image.config.v1+json", config),
    "layers": [desc("application/vnd.oci.image.layer.v1.tar", tar)],
}, separators=(",", ":")).encode()
platforms = json.dumps({
    "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
    "manifests": [dict(desc(mtype, image), platform={"os": "linux", "architecture": a})
                  for a in ("amd64", "arm64")],
}, separators=(",", ":")).encode()
octet = "application/octet-stream"
seeds["pull"] = (b"\5" + answer("200 OK", image, mtype) + sep + answer("200 OK", config, octet) +
                 sep + answer("200 OK", tar, octet))
seeds["pull-index"] = (b"\5" + answer("200 OK", platforms, "application/vnd.oci.image.index.v1+json") +
                       sep + answer("200 OK", image, mtype) + sep + answer("200 OK", config, octet) +
                       sep + answer("200 OK", tar, octet))
for name, data in seeds.items():
    open("%s/%s" % (out, name), "wb").write(data)
PY
if [ -n "$fixtures" ] && [ -d "$fixtures" ]; then
	for img in "$fixtures"/*.img; do
		[ "$(stat -c %s "$img")" -le $((2 << 20)) ] && cp "$img" "$out/image/"
	done
fi
# Compressed streams: the pclusters of a few files, with the codec
# target's 4-byte header (algorithm, wanted length).
for img in "$out"/image/ours-*.img; do
	"$tool" dump --json --path /text "$img" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
algs = {"lz4": 0, "lzma": 1, "deflate": 2, "zstd": 3}
img = sys.argv[1]; out = sys.argv[2]
for i, e in enumerate(d["extents"]):
    if e["kind"] != "compressed":
        continue
    with open(img, "rb") as f:
        f.seek(e["physical"]); data = f.read(e["physical_length"]).lstrip(b"\0")
    n = e["length"] - 1
    hdr = bytes([algs[e["algorithm"]], n & 255, (n >> 8) & 255, (n >> 16) & 15])
    open("%s/%s-%d.bin" % (out, img.split("/")[-1], i), "wb").write(hdr + data)
' "$img" "$out/codec"
done
