# OCI image layouts: an image made by umoci (layers that add, delete,
# replace and bring back), built with mkfs --oci, must mount with the
# kernel as exactly the tree umoci's own unpack gives; the same layers
# recompressed (zstd, none, gzip) behind a multi-platform index give the
# same image, and --platform picks an index's entry; --oci-layers gives
# images that stack in overlayfs to that tree, and --oci-layer one of
# them alone.  Damaged layouts (a blob that does not match its digest, a digest
# that would leave the layout, ...) fail with a message naming what is
# wrong, exit 1 or 2, and leave no image.
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
TREECMP="python3 $HERE/treecmp.py"
OCI="python3 $HERE/oci_layout.py"
cd "$T"

note "an image made by umoci, three layers"
umoci init --layout L
umoci new --image L:app
umoci unpack --image L:app B >/dev/null
R=B/rootfs
# layer 1: every file type, hard links, xattrs, owners, a larger file
mkdir -p $R/etc/app $R/usr/lib/old $R/var/cache $R/srv/data
echo base >$R/etc/app/conf
echo keep >$R/etc/keep
ln $R/etc/keep $R/etc/keep.hard
echo lib >$R/usr/lib/old/lib.so
echo tmp >$R/var/cache/a
echo tmp2 >$R/var/cache/b
ln -s conf $R/etc/app/link
mkfifo $R/srv/fifo
mknod $R/srv/null c 1 3
setfattr -n user.note -v hello $R/etc/app/conf
head -c 300000 /dev/urandom >$R/srv/data/blob
chown -R 1000:1001 $R/srv/data
umoci repack --refresh-bundle --image L:app B
# layer 2: deletes a file (one of two links), a directory, and a
# directory's contents; changes a file
rm $R/etc/keep $R/usr/lib/old/lib.so
rmdir $R/usr/lib/old
echo changed >$R/etc/app/conf
rm -r $R/var/cache
mkdir $R/var/cache
echo fresh >$R/var/cache/c
umoci repack --refresh-bundle --image L:app B
# layer 3: a deleted name comes back as a directory, a directory becomes a
# file, a symlink goes
mkdir $R/etc/keep
echo again >$R/etc/keep/inside
rm -r $R/srv/data
echo now-a-file >$R/srv/data
rm $R/etc/app/link
umoci repack --image L:app B
umoci new --image L:empty
umoci unpack --image L:app want >/dev/null   # umoci's own flattening
[ -d want/rootfs/etc/keep ] && [ ! -e want/rootfs/usr/lib/old ] ||
	fail "umoci's unpack does not show the layers as made"

note "mkfs --oci equals umoci's unpack, through the kernel"
"$E" mkfs --oci L:app -zlz4hc -q app.erofs || fail "mkfs --oci failed"
"$E" fsck -q app.erofs || fail "the --oci image is not clean"
kmount app.erofs m
$TREECMP want/rootfs m || fail "the --oci image differs from umoci's unpack"
kumount m
"$E" mkfs --oci L:app -zlz4hc -q --workers 1 app1.erofs
cmp app.erofs app1.erofs || fail "--workers 1 gives another image"

note "the same layers as zstd, plain and gzip behind a multi-platform index"
$OCI remake L:app N zstd,none,gzip --nested
"$E" mkfs --oci N:app -zlz4hc -q n.erofs || fail "mkfs --oci of the nested layout failed"
cmp app.erofs n.erofs || fail "recompressed layers give another image"
"$E" mkfs --oci N -zlz4hc -q n2.erofs || fail "a layout of one tag needs no tag"
cmp app.erofs n2.erofs || fail "without the tag, another image"

note "--platform picks the index's entry: this machine's by name, another's, one it lacks"
ARCH=$(python3 -c 'import platform; m = platform.machine(); print({"x86_64": "amd64", "aarch64": "arm64"}.get(m, m))')
OTHER=$([ "$ARCH" = s390x ] && echo amd64 || echo s390x)
"$E" mkfs --oci N:app --platform "linux/$ARCH" -zlz4hc -q n3.erofs || fail "--platform linux/$ARCH"
cmp app.erofs n3.erofs || fail "--platform linux/$ARCH: another image"
# The other platform's manifest has one layer (not a tar) against its
# config's three diff_ids: the build reads it, so it took that entry.
expect_exit 1 "$E" mkfs --oci N:app --platform "linux/$OTHER" -q x.erofs 2>err
grep -q "diff_ids is not a list of 1 digests" err || fail "--platform linux/$OTHER: $(cat err)"
expect_exit 2 "$E" mkfs --oci N:app --platform linux/riscv64/v9 -q x.erofs 2>err
grep -q "names no image for linux/riscv64/v9 (it has: linux/$OTHER, linux/$ARCH)" err ||
	fail "a platform the index lacks: $(cat err)"
expect_exit 2 "$E" mkfs --oci N:app --platform arm64 -q x.erofs 2>err
grep -q "expected OS/ARCH or OS/ARCH/VARIANT" err || fail "a platform without its OS: $(cat err)"
expect_exit 2 "$E" mkfs --platform linux/arm64 -q x.erofs want 2>err
grep -q "needs --oci" err || fail "--platform without --oci: $(cat err)"
[ ! -e x.erofs ] || fail "an image was left"

note "a layout of two images needs a tag; an image of no layers is an empty root"
expect_exit 2 "$E" mkfs --oci L -q x.erofs 2>err
grep -q "name one as DIR:TAG" err && grep -q "app" err || fail "no list of tags: $(cat err)"
[ ! -e x.erofs ] || fail "an image was left"
expect_exit 2 "$E" mkfs --oci L:nope -q x.erofs 2>err
grep -q "no image is tagged 'nope'" err || fail "unknown tag: $(cat err)"
"$E" mkfs --oci L:empty -q empty.erofs || fail "an image of no layers failed"
kmount empty.erofs me
[ -z "$(ls -A me)" ] || fail "the image of no layers is not empty"
kumount me

note "--oci-layers: one image per layer, stacked by overlayfs"
"$E" mkfs --oci L:app --oci-layers layers -zlz4hc >out || fail "--oci-layers failed"
[ "$(ls layers | wc -l)" = 3 ] && grep -q "^layer 3 of 3: layers/003-" out ||
	fail "not three layer images: $(ls layers)"
lower=""
for img in layers/*.erofs; do
	"$E" fsck -q "$img" || fail "$img is not clean"
	kmount "$img" "m-$(basename "$img" .erofs)"
	lower="$T/m-$(basename "$img" .erofs)${lower:+:$lower}"
done
mkdir -p merged
mount -t overlay overlay -o "lowerdir=$lower" "$T/merged" ||
	fail "overlayfs refused the stacked layer images"
_mounts=("$T/merged" "${_mounts[@]}")
# overlayfs gives directories its own link counts: compare the rest
listing() { (cd "$1" && find . -mindepth 1 -printf '%p %y %m %U:%G %l\n' | sort); }
diff <(listing want/rootfs) <(listing merged) || fail "the stacked layers list other names"
(cd want/rootfs && find . -type f) | while read -r p; do
	cmp "want/rootfs/$p" "merged/$p" || fail "$p: other contents in the stack"
done
umount "$T/merged"

note "--oci-layer: one layer alone, by number or by digest, is --oci-layers' image of it"
"$E" mkfs --oci L:app --oci-layer 2 -zlz4hc -q two.erofs || fail "--oci-layer 2"
two=$(ls layers/002-*.erofs)
cmp "$two" two.erofs || fail "--oci-layer 2 is not $two"
three=$(basename layers/003-*.erofs .erofs)
"$E" mkfs --oci L:app --oci-layer "sha256:${three#003-}" -zlz4hc -q three.erofs ||
	fail "--oci-layer sha256:"
cmp "layers/$three.erofs" three.erofs || fail "--oci-layer sha256:... is not $three"
expect_exit 2 "$E" mkfs --oci L:app --oci-layer 4 -q x.erofs 2>err
grep -q "no layer 4: the image has 3" err || fail "--oci-layer 4: $(cat err)"
expect_exit 2 "$E" mkfs --oci L:app --oci-layer "sha256:$(printf '%064d' 0)" -q x.erofs 2>err
grep -q "none of its 3 layers is sha256:0000" err || fail "--oci-layer of no layer: $(cat err)"
expect_exit 2 "$E" mkfs --oci L:app --oci-layer 2 --oci-layers lay3 2>err
grep -q "picks one layer" err || fail "--oci-layer with --oci-layers: $(cat err)"
[ ! -e x.erofs ] && [ ! -e lay3 ] || fail "a refused --oci-layer left something"

note "whiteouts hide only what the layers below hold (OCI layer rules)"
python3 - <<'PY'
import io, tarfile
def layer(path, entries):
    with tarfile.open(path, "w") as t:
        for name, kind, data in entries:
            i = tarfile.TarInfo(name)
            i.mtime = 1700000000
            if kind == "dir":
                i.type = tarfile.DIRTYPE
                i.mode = 0o755
                t.addfile(i)
            else:
                i.size = len(data)
                i.mode = 0o644
                t.addfile(i, io.BytesIO(data))
layer("w1.tar", [("a", "dir", b""), ("a/old", "file", b"1"), ("b", "dir", b""),
                 ("b/lower", "file", b"1"), ("c", "dir", b""), ("c/lower", "file", b"1"),
                 ("d", "file", b"1")])
# opaque after a same-layer entry; a whiteout of a same-layer file; a
# whiteout of a lower directory this layer also writes into
layer("w2.tar", [("a/new", "file", b"2"), ("a/.wh..wh..opq", "file", b""),
                 ("d2", "file", b"2"), (".wh.d2", "file", b""),
                 ("b/mine", "file", b"2"), (".wh.b", "file", b""),
                 ("c/.wh.lower", "file", b""), (".wh.d", "file", b""),
                 ("gone/.wh.nothing", "file", b"")])
PY
$OCI fromtars W w w1.tar w2.tar
"$E" mkfs --oci W -q w.erofs || fail "mkfs --oci of the whiteout layers failed"
kmount w.erofs mw
got=$(cd mw && find . -mindepth 1 | sort | tr '\n' ' ')
[ "$got" = "./a ./a/new ./b ./b/mine ./c ./d2 " ] ||
	fail "whiteouts applied wrongly: $got"
kumount mw

note "what later layers delete or replace takes no room in the flattened image"
head -c 1048576 /dev/urandom >del.bin
head -c 1048576 /dev/urandom >rep.bin
head -c 1048576 /dev/urandom >kept.bin
echo small >rep.new
tar -cf d1.tar --transform 's,^,x/,' del.bin rep.bin kept.bin
ln -s del.bin dlink && tar -cf d2.tar --transform 's,^,x/,' dlink && rm dlink
mkdir -p d3/x && : >d3/x/.wh.del.bin && : >d3/x/.wh.dlink && cp rep.new d3/x/rep.bin
tar -cf d3.tar -C d3 x
$OCI fromtars DL dl d1.tar d2.tar d3.tar
"$E" mkfs --oci DL -q dl.erofs || fail "mkfs --oci of the deleting layers failed"
size=$(stat -c %s dl.erofs)
# kept.bin (1 MiB) and metadata; del.bin and the first rep.bin are not there
[ "$size" -lt $((1048576 + 65536)) ] || fail "the flattened image holds deleted data: $size bytes"
kmount dl.erofs mdl
got=$(cd mdl && find . -mindepth 1 | sort | tr '\n' ' ')
[ "$got" = "./x ./x/kept.bin ./x/rep.bin " ] || fail "deleting layers flattened to: $got"
cmp mdl/x/kept.bin kept.bin || fail "kept.bin differs"
cmp mdl/x/rep.bin rep.new || fail "rep.bin is not the later layer's"
kumount mdl
"$E" mkfs --oci DL -q --workers 1 dl1.erofs && cmp dl.erofs dl1.erofs ||
	fail "--workers 1 gave other bytes"
"$E" mkfs --oci DL -q -zlz4hc dlz.erofs && "$E" fsck -q dlz.erofs ||
	fail "compressed flattening of the deleting layers"

note "damaged layouts: a clear error, exit 1 (bad data) or 2, no image"
damaged() {
	local what=$1 code=$2 msg=$3
	rm -rf D
	$OCI remake L:app D gzip
	$OCI break D "$what"
	expect_exit "$code" "$E" mkfs --oci D:app -q bad.erofs 2>err
	grep -q -- "$msg" err || fail "$what: the message does not say '$msg': $(cat err)"
	[ ! -e bad.erofs ] || fail "$what: an image was left"
	[ -z "$(ls -A . | grep -E '^bad|^\.bad')" ] || fail "$what: a temporary file was left"
}
damaged flip-layer 1 "layer 3 of 3 (sha256:.*its content's digest is sha256:"
damaged grow-layer 1 "layer 3 of 3 .*bytes, where its descriptor says"
damaged flip-manifest 1 "does not match its digest"
damaged traversal-digest 1 "is not 64 lower-case hex digits"
damaged sha512-digest 1 "only sha256 digests are supported"
damaged missing-layer 1 "layer 3 of 3"
damaged bad-json 1 "index.json: not valid JSON"
damaged bad-layer-type 1 "layer 3 is a 'application/vnd.example.not-a-layer'"
damaged bad-diff-id 1 "layer 3 of 3 (sha256:.*its tar's digest is sha256:.*the image config names (diff_id)"
damaged no-oci-layout 2 "not an OCI image layout"

note "--oci-layers with a bad last layer leaves none of the others"
rm -rf D lay && $OCI remake L:app D gzip && $OCI break D flip-layer
expect_exit 1 "$E" mkfs --oci D:app --oci-layers lay -q 2>err
[ -z "$(ls -A lay)" ] || fail "--oci-layers left images of a failed run: $(ls lay)"

note "usage errors"
expect_exit 2 "$E" mkfs --oci L:app 2>err
expect_exit 2 "$E" mkfs --oci L:app --tar x.erofs 2>err
expect_exit 2 "$E" mkfs --oci-layers lay x.erofs dir 2>err
grep -q "needs --oci" err || fail "--oci-layers alone: $(cat err)"
expect_exit 2 "$E" mkfs --oci L:app --oci-layers lay2 --chunksize 4096 --blobdev b.blob 2>err
grep -q "not with --oci-layers (one blob, an image per layer)" err || fail "--oci-layers --blobdev: $(cat err)"
[ ! -e b.blob ] || fail "--oci-layers --blobdev left a blob"
echo PASS
