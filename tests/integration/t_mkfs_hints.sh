# mkfs --compress-hints FILE (mkfs.erofs's): per-file cluster sizes.
# - Each compressed file's pclusters are at most the size of the first
#   rule whose pattern matches its path under the source (no leading
#   '/'), else -C's; comment and blank lines are skipped, "SIZE 0 REGEX"
#   is "SIZE REGEX".
# - Debian's mkfs.erofs 1.5, given the same rules, puts every file in the
#   same class (which rule's size bounds its pclusters).
# - The kernel's view of the image is the source; fsck.erofs 1.5 and our
#   fsck take it; --workers 1 and 2 give the same bytes; the drop-in name
#   takes the option for the same image.
# - From a tar or an OCI layout, a file's rule is picked by its name in
#   the archive (the same classes); the drop-in passes the option on.
# - With -z A:B:C, a rule's algorithm picks a file's (0 the first, the
#   default): each file's extents are its algorithm's, the superblock
#   lists them all; equal data under two algorithms is stored twice, once
#   under each (a pcluster of one decoded as the other would be garbage),
#   and once per algorithm with dedupe; the kernel, our fsck, fsck.erofs
#   1.5 (lz4:lz4hc) take the images; workers agree; the drop-in takes it.
# - A bad rule (the file and line named), an algorithm -z does not list,
#   a bad -z list and no compressor are refused.
. "$(dirname "$0")/lib.sh"

command -v mkfs.erofs >/dev/null || fail "mkfs.erofs (Debian erofs-utils) is not installed"
E=$EROFSKIT
cd "$T"
mkdir -p src/lib/sub src/share/doc src/data
# compressible text, different in every file (no dedupe between them)
text() {   # SEED KIB FILE
	python3 -c "import random,sys; r=random.Random($1); w=['erofs','cluster','hint','pcluster','block','tail','%d'%$1]
sys.stdout.write(' '.join(r.choice(w) for _ in range($2*180)))" >"$3"
}
text 1 300 src/lib/liba.so
text 2 300 src/lib/sub/libb.so.1.2
text 3 300 src/share/doc/readme.txt
text 4 300 src/data/table.bin
text 5 300 src/lib/liba.so.txt    # not a library: '.so' is not its end
ln src/lib/liba.so src/data/hardlink.so
printf '# libraries: read at random, small clusters\n\n4096 \\.so(\\.[0-9]+)*$\n16384 0 ^share/\n' >hints.txt
# mkfs.erofs 1.5 reads the same two rules, without the comment and the 0
printf '4096 \\.so(\\.[0-9]+)*$\n16384 ^share/\n' >hints-upstream.txt
manifest src tree.json

# per_file class|algorithm IMAGE: "PATH CLASS" for every regular file,
# its class by its largest compressed pcluster (small: at most 4 KiB,
# medium: at most 16 KiB, large: more); or "PATH ALGORITHM", the one of
# all its compressed extents.
per_file() {
	python3 - "$E" "$@" <<'PY' || fail "dump --json of $2"
import json, os, subprocess, sys
tool, what, image = sys.argv[1:]
for root, dirs, files in sorted(os.walk("src")):
    for name in sorted(files):
        path = os.path.join(root, name)[len("src"):]
        d = json.loads(subprocess.run([tool, "dump", "--json", "--path", path, image],
                                      capture_output=True, check=True).stdout)
        compressed = [e for e in d["extents"] if e["kind"] == "compressed"]
        if not compressed:
            sys.exit(f"{path}: no compressed extent in {image}")
        if what == "algorithm":
            algs = {e["algorithm"] for e in compressed}
            if len(algs) != 1:
                sys.exit(f"{path}: algorithms {sorted(algs)} in {image}")
            print(path, algs.pop())
            continue
        biggest = max(e["physical_length"] for e in compressed)
        print(path, "small" if biggest <= 4096 else "medium" if biggest <= 16384 else "large")
PY
}
classes() { per_file class "$1"; }
algorithms() { per_file algorithm "$1"; }

note "each file's clusters are its rule's size, else -C's"
"$E" mkfs -q -zlz4hc -C65536 -E^fragments,^dedupe --compress-hints hints.txt ours.img src ||
	fail "mkfs --compress-hints failed"
classes ours.img >ours.txt
cat >want.txt <<EOF
/data/hardlink.so small
/data/table.bin large
/lib/liba.so small
/lib/liba.so.txt large
/lib/sub/libb.so.1.2 small
/share/doc/readme.txt medium
EOF
diff want.txt ours.txt >&2 || fail "the files' cluster classes are not the rules'"

note "mkfs.erofs 1.5 puts every file in the same class"
mkfs.erofs --quiet -zlz4hc -C65536 --compress-hints=hints-upstream.txt theirs.img src >/dev/null 2>&1 ||
	fail "mkfs.erofs --compress-hints failed"
classes theirs.img >theirs.txt
diff theirs.txt ours.txt >&2 || fail "erofskit reads the rules otherwise than mkfs.erofs 1.5"

note "the kernel, fsck.erofs 1.5 and erofskit fsck take the image; workers agree"
kernel_check ours.img tree.json "mkfs --compress-hints"
fsck.erofs ours.img >/dev/null 2>&1 || fail "fsck.erofs 1.5 rejects the image"
"$E" fsck -q ours.img || fail "erofskit fsck rejects the image"
# the default layouts too (fragments, dedupe), with one worker and two
"$E" mkfs -q -zlz4hc -C65536 --workers 1 --compress-hints hints.txt w1.img src
"$E" mkfs -q -zlz4hc -C65536 --workers 2 --compress-hints hints.txt w2.img src
cmp w1.img w2.img || fail "--workers 1 and 2 differ with --compress-hints"
kernel_check w2.img tree.json "mkfs --compress-hints, default layouts"
"$E" fsck -q w2.img || fail "erofskit fsck rejects the default-layout image"

note "the drop-in name takes it, for the same image"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet -zlz4hc -C65536 --compress-hints=hints.txt drop.img src ||
	fail "mkfs.erofs (drop-in) --compress-hints failed"
cmp drop.img w2.img || fail "the drop-in's image differs from erofskit mkfs's"

note "an archive's files take the rules by their names in it (--tar, --oci)"
# Its names start "./" (tar -C src .): a rule sees "share/doc/readme.txt",
# as a directory source's would.  data/hardlink.so comes first in the
# archive; lib/liba.so is its hard link.
tar --format=posix --sort=name -C src -cf src.tar .
"$E" mkfs -q -zlz4hc -C65536 -E^fragments,^dedupe --tar --compress-hints hints.txt tar.img src.tar ||
	fail "mkfs --tar --compress-hints failed"
classes tar.img >tar.txt
diff want.txt tar.txt >&2 || fail "a tar's files are not in their rules' classes"
kernel_check tar.img tree.json "mkfs --tar --compress-hints"
"$E" fsck -q tar.img || fail "erofskit fsck rejects the image from the tar"
python3 "$HERE/oci_layout.py" fromtars oci hints src.tar
"$E" mkfs -q -zlz4hc -C65536 -E^fragments,^dedupe --oci oci:hints --compress-hints hints.txt oci.img ||
	fail "mkfs --oci --compress-hints failed"
classes oci.img >oci.txt
diff want.txt oci.txt >&2 || fail "an OCI image's files are not in their rules' classes"
# containerd's line with the rules, through the drop-in, default layouts
"$E" mkfs -q -zlz4hc -C65536 --tar=f --aufs -Enoinline_data --compress-hints hints.txt \
	tar2.img <src.tar || fail "mkfs --tar=f --aufs --compress-hints failed"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --tar=f --aufs --quiet -Enoinline_data -zlz4hc -C65536 \
	--compress-hints=hints.txt drop-tar.img <src.tar || fail "mkfs.erofs (drop-in) --tar=f --compress-hints failed"
cmp tar2.img drop-tar.img || fail "the drop-in's image of the tar differs from erofskit mkfs's"
classes tar2.img >tar2.txt
diff want.txt tar2.txt >&2 || fail "with the default layouts, a tar's files are not in their rules' classes"

note "-z A:B:C: a rule's algorithm is the file's"
# data/copy.bin equals share/doc/readme.txt: one is lzma, the other zstd;
# so do the two small.txt, each one block in one extent of the same
# length under either (the same sizes: only the algorithm tells them).
cp src/share/doc/readme.txt src/data/copy.bin
text 6 20 src/data/small.txt
cp src/data/small.txt src/share/small.txt
manifest src tree-algs.json
printf '4096 \\.so(\\.[0-9]+)*$\n16384 1 ^share/\n65536 2 ^data/\n' >hints-algs.txt
"$E" mkfs -q -zlz4hc:lzma,6:zstd,3 -C65536 -E^fragments,dedupe --json \
	--compress-hints hints-algs.txt algs.img src >algs.json || fail "mkfs -z A:B:C --compress-hints failed"
algorithms algs.img >algs.txt
cat >want-algs.txt <<EOF
/data/copy.bin zstd
/data/hardlink.so lz4
/data/small.txt zstd
/data/table.bin zstd
/lib/liba.so lz4
/lib/liba.so.txt lz4
/lib/sub/libb.so.1.2 lz4
/share/small.txt lzma
/share/doc/readme.txt lzma
EOF
diff want-algs.txt algs.txt >&2 || fail "the files' algorithms are not their rules'"
"$E" dump algs.img | grep -q "^Algorithms: *lz4,lzma,zstd$" ||
	fail "the superblock does not list the three algorithms: $("$E" dump algs.img)"
kernel_check algs.img tree-algs.json "mkfs -z A:B:C --compress-hints"
"$E" fsck -q algs.img || fail "erofskit fsck rejects the image of three algorithms"
# tail packing (each algorithm's inline pcluster), 512-byte blocks, the
# 48bit extents (which name the algorithm per extent) and the metabox
for opts in "-b512 -Eztailpacking,^fragments" "-E48bit,ztailpacking,^fragments" "-m4096 -E^fragments"; do
	"$E" mkfs -q -zlz4hc:lzma,6:zstd,3 -C65536 $opts --compress-hints hints-algs.txt \
		more.img src || fail "mkfs -z A:B:C $opts failed"
	algorithms more.img >more.txt
	diff want-algs.txt more.txt >&2 || fail "$opts: the files' algorithms are not their rules'"
	kernel_check more.img tree-algs.json "mkfs -z A:B:C $opts"
	"$E" fsck -q more.img || fail "erofskit fsck rejects the image of three algorithms, $opts"
done
# A copy under its own algorithm is stored once: data/table.bin twice.
cp src/data/table.bin src/data/table2.bin
manifest src tree-algs.json
"$E" mkfs -q -zlz4hc:lzma,6:zstd,3 -C65536 -E^fragments,dedupe --json \
	--compress-hints hints-algs.txt algs2.img src >algs2.json || fail "mkfs of a copy failed"
python3 - algs.json algs2.json <<'PY' || fail "a zstd file's copy is not stored once, or a copy across algorithms is"
import json, sys
one, two = (json.load(open(p)) for p in sys.argv[1:3])
# copy.bin's pclusters are the readme's, under another algorithm: none shared
assert one["layouts"]["dedupe_hits"] == 0, one
assert two["layouts"]["dedupe_hits"] > 0, two
PY
kernel_check algs2.img tree-algs.json "mkfs -z A:B:C, a copy deduplicated"
# the default layouts (fragments, dedupe): one worker and two agree
"$E" mkfs -q -zlz4hc:lzma,6:zstd,3 -C65536 --workers 1 --compress-hints hints-algs.txt aw1.img src
"$E" mkfs -q -zlz4hc:lzma,6:zstd,3 -C65536 --workers 2 --compress-hints hints-algs.txt aw2.img src
cmp aw1.img aw2.img || fail "--workers 1 and 2 differ with -z A:B:C"
kernel_check aw2.img tree-algs.json "mkfs -z A:B:C, default layouts"
"$E" fsck -q aw2.img || fail "erofskit fsck rejects the default-layout image of three algorithms"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet -zlz4hc:lzma,6:zstd,3 -C65536 \
	--compress-hints=hints-algs.txt drop-algs.img src || fail "mkfs.erofs (drop-in) -z A:B:C failed"
cmp drop-algs.img aw2.img || fail "the drop-in's image of three algorithms differs"
# lz4 and lz4hc: one algorithm on disk, which fsck.erofs 1.5 reads
expect_exit 2 "$E" mkfs -q -zlz4:lz4hc,12 -C65536 --compress-hints hints-algs.txt lz.img src 2>err.txt
grep -qF "hints-algs.txt:3: algorithm 2: -z lists 2, numbered from 0" err.txt ||
	fail "algorithm 2 of two: $(cat err.txt)"
printf '4096 1 \\.so(\\.[0-9]+)*$\n' >hints-lz.txt
# (no fragments, which 1.5 does not know)
"$E" mkfs -q -zlz4:lz4hc,12 -C65536 -E^fragments,^dedupe --compress-hints hints-lz.txt lz.img src ||
	fail "mkfs -zlz4:lz4hc failed"
"$E" mkfs -q -zlz4 -C65536 -E^fragments,^dedupe lz4.img src
cmp -s lz.img lz4.img && fail "the rule's lz4hc made the bytes of lz4"
"$E" dump lz.img | grep -q "^Algorithms: *lz4$" || fail "lz4:lz4hc: $("$E" dump lz.img)"
fsck.erofs lz.img >/dev/null 2>&1 || fail "fsck.erofs 1.5 rejects the lz4:lz4hc image"
kernel_check lz.img tree-algs.json "mkfs -zlz4:lz4hc"
rm src/data/copy.bin src/data/table2.bin src/data/small.txt src/share/small.txt

note "refused: bad rules (file and line named), no compressor"
# refused FILE_CONTENT TEXT [OPTION...]: exit 2, TEXT in the message, no image
refused() {
	local rules=$1 text=$2
	shift 2
	printf '%b' "$rules" >bad.txt
	rm -f bad.img
	expect_exit 2 "$E" mkfs -q "${@:--zlz4}" --compress-hints bad.txt bad.img src 2>err.txt
	grep -qF -- "$text" err.txt || fail "rules '$rules': the message does not say '$text': $(cat err.txt)"
	[ ! -e bad.img ] || fail "rules '$rules': an image was written"
}
refused '4096 x\n4096 a b c\n' "bad.txt:2: expected SIZE [ALGORITHM] REGEX"
refused '3000 x\n' "bad.txt:1: cluster size 3000: a cluster is whole 4096-byte blocks"
refused '2097152 x\n' "bad.txt:1: cluster size 2097152"
refused '8192 1 x\n' "bad.txt:1: algorithm 1: -z lists 1, numbered from 0"
refused '8192 3 x\n' "bad.txt:1: algorithm 3: -z lists 3, numbered from 0" -zlz4:lzma:zstd
refused '8192 -1 x\n' "bad.txt:1: algorithm '-1': a place in -z's list"
refused '8192 1x x\n' "bad.txt:1: algorithm '1x': a place in -z's list"
refused '524288 1 x\n' "lz4 clusters of more than 256 blocks" -b512 -zlzma:lz4
for z in lz4: lz4::lzma lz4:none lz4:lz4:lz4:lz4:lz4:lz4:lz4:lz4:lz4 lz4:zstd,99; do
	rm -f bad.img
	expect_exit 2 "$E" mkfs -q -z"$z" bad.img src 2>err.txt
	[ ! -e bad.img ] || fail "-z$z: an image was written"
done
refused 'big x\n' "bad.txt:1: 'big' is not a cluster size"
refused '4096 (x\n' "bad.txt:1: pattern '(x'"
refused "$(for i in $(seq 256); do printf '4096 ^f%d$\\n' "$i"; done)" "bad.txt:256: more than 255 rules"
refused '4096 x\n' "they need a compressor" -b4096
expect_exit 2 "$E" mkfs -q -zlz4 --compress-hints missing.txt bad.img src 2>err.txt
grep -qF "missing.txt: No such file or directory" err.txt || fail "a missing rules file: $(cat err.txt)"
expect_exit 2 "$E" mkfs -q -zlz4 --compress-hints src bad.img src 2>err.txt
grep -qF "src: Is a directory" err.txt || fail "a directory as the rules file: $(cat err.txt)"
echo PASS
