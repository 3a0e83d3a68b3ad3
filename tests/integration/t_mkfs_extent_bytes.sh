# mkfs --max-extent-bytes SIZE (mkfs.erofs's): no compressed extent holds
# more than SIZE bytes of data, whatever the cluster.
# - lz4hc, deflate, zstd and lzma (level 1; two of them in the sanitized
#   build) at 64 KiB clusters, with the default layouts and
#   -Eall-fragments (the packed inode's extents too): every extent's
#   length is at most SIZE, the kernel reads the tree, erofskit fsck
#   finds it clean, --workers 1 and the default give the same bytes.
# - Without the option some extent is longer (the check can fail), and
#   Debian's mkfs.erofs 1.5 cuts the same file into as many extents.
# - fsck.erofs 1.5 takes the image it can read; the drop-in passes the
#   option on; a size under a block, no compressor and a bad size are
#   refused.
. "$(dirname "$0")/lib.sh"

command -v mkfs.erofs >/dev/null || fail "mkfs.erofs (Debian erofs-utils) is not installed"
E=$EROFSKIT
cd "$T"
mkdir -p src/dir
python3 - src <<'PY'
import os, random, sys
r = random.Random(11)
words = ["erofs", "extent", "bytes", "block", "tail", "cluster", "read", "%d" % r.randint(0, 99)]
def text(n):
    return " ".join(r.choice(words) for _ in range(n)).encode()
open(os.path.join(sys.argv[1], "big.txt"), "wb").write(text(400000))
for i in range(40):
    open(os.path.join(sys.argv[1], "dir", "small-%02d" % i), "wb").write(text(300 + 500 * i))
PY
manifest src src.json

# longest IMAGE: the longest compressed extent of any file, and of the
# packed inode (0 without one): "FILES PACKED".
longest() {
	python3 - "$E" "$1" <<'PY' || fail "dump --json of $1"
import json, os, subprocess, sys
tool, image = sys.argv[1:]
def extents(*sel):
    d = json.loads(subprocess.run([tool, "dump", "--json", *sel, image],
                                  capture_output=True, check=True).stdout)
    return [e["length"] for e in d.get("extents", []) if e["kind"] == "compressed"]
files = []
for root, _, names in os.walk("src"):
    for n in names:
        files += extents("--path", os.path.join(root, n)[len("src"):])
sb = json.loads(subprocess.run([tool, "dump", "--json", image], capture_output=True,
                               check=True).stdout)
packed = extents("--nid", str(sb["packed_nid"])) if sb["packed_nid"] else []
print(max(files, default=0), max(packed, default=0))
PY
}

note "no extent over the size, every algorithm and layout; the kernel reads it"
# lzma at level 1: the cut does not depend on the level, and its default
# level took half this test's time; the sanitized build takes two
# algorithms (each encoder's fill is the same code above it).
for alg in $(normal_or_sanitized "lz4hc deflate zstd lzma,1" "lz4hc lzma,1"); do
	for layout in "" -Eall-fragments; do
		label="-z$alg -C65536 $layout --max-extent-bytes 16384"
		"$E" mkfs -q -z$alg -C65536 $layout --max-extent-bytes 16384 img src ||
			fail "mkfs $label"
		read -r files packed < <(longest img)
		[ "$files" -le 16384 ] && [ "$packed" -le 16384 ] ||
			fail "$label: extents of $files (files) and $packed (packed inode) bytes"
		[ "$files" -gt 0 ] || [ "$packed" -gt 0 ] || fail "$label: nothing compressed"
		"$E" fsck -q img || fail "erofskit fsck of $label"
		kernel_check img src.json "$label"
		"$E" mkfs -q --workers 1 -z$alg -C65536 $layout --max-extent-bytes 16384 img1 src
		cmp -s img img1 || fail "$label: --workers 1 makes another image"
	done
done

note "without it extents are longer; mkfs.erofs 1.5 cuts as many"
"$E" mkfs -q -zlz4hc -C65536 -E^fragments,^dedupe plain.img src
read -r files _ < <(longest plain.img)
[ "$files" -gt 16384 ] || fail "without --max-extent-bytes the longest extent is $files bytes"
count() {   # IMAGE: big.txt's compressed extents
	"$E" dump --json --path /big.txt "$1" |
		python3 -c 'import json, sys; print(sum(e["kind"] == "compressed" for e in json.load(sys.stdin)["extents"]))'
}
"$E" mkfs -q -zlz4hc -C65536 -E^fragments,^dedupe --max-extent-bytes 16384 ours.img src
mkfs.erofs -zlz4hc -C65536 --max-extent-bytes=16384 theirs.img src >/dev/null 2>&1 ||
	fail "mkfs.erofs 1.5 --max-extent-bytes failed"
[ "$(count ours.img)" = "$(count theirs.img)" ] ||
	fail "big.txt in $(count ours.img) extents, mkfs.erofs 1.5's in $(count theirs.img)"
fsck.erofs ours.img >/dev/null 2>&1 || fail "fsck.erofs 1.5 rejects the image"
kernel_check ours.img src.json "-zlz4hc -E^fragments,^dedupe --max-extent-bytes 16384"

note "the drop-in passes it on; refusals"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet -zlz4hc -C65536 -E^fragments,^dedupe \
	--max-extent-bytes=16384 drop.img src || fail "mkfs.erofs (drop-in) --max-extent-bytes failed"
cmp drop.img ours.img || fail "the drop-in's image differs from erofskit mkfs's"
mkfs_refused "less than a block" -zlz4 --max-extent-bytes 2048
mkfs_refused "it needs a compressor" --max-extent-bytes 65536
mkfs_refused "invalid --max-extent-bytes 'lots'" -zlz4 --max-extent-bytes lots
mkfs_refused "invalid --max-extent-bytes '0'" -zlz4 --max-extent-bytes 0
echo PASS
