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
# - A bad rule (the file and line named), an algorithm other than 0 and
#   no compressor are refused.
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

# classes IMAGE: "PATH small|medium|large" for every regular file, by its
# largest compressed pcluster: at most 4 KiB, at most 16 KiB, more.
classes() {
	python3 - "$E" "$1" <<'PY' || fail "dump --json of $1"
import json, os, subprocess, sys
tool, image = sys.argv[1:]
for root, dirs, files in sorted(os.walk("src")):
    for name in sorted(files):
        path = os.path.join(root, name)[len("src"):]
        d = json.loads(subprocess.run([tool, "dump", "--json", "--path", path, image],
                                      capture_output=True, check=True).stdout)
        biggest = max((e["physical_length"] for e in d["extents"]
                       if e["kind"] == "compressed"), default=0)
        if not biggest:
            sys.exit(f"{path}: no compressed extent in {image}")
        print(path, "small" if biggest <= 4096 else "medium" if biggest <= 16384 else "large")
PY
}

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
refused '3000 x\n' "bad.txt:1: cluster size 3000 is not a multiple of the 4096-byte block"
refused '2097152 x\n' "bad.txt:1: cluster size 2097152"
refused '8192 1 x\n' "bad.txt:1: algorithm '1'"
refused 'big x\n' "bad.txt:1: 'big' is not a cluster size"
refused '4096 (x\n' "bad.txt:1: pattern '(x'"
refused "$(for i in $(seq 256); do printf '4096 ^f%d$\\n' "$i"; done)" "bad.txt:256: more than 255 rules"
refused '4096 x\n' "they need a compressor" -b4096
expect_exit 2 "$E" mkfs -q -zlz4 --compress-hints missing.txt bad.img src 2>err.txt
grep -qF "missing.txt: No such file or directory" err.txt || fail "a missing rules file: $(cat err.txt)"
expect_exit 2 "$E" mkfs -q -zlz4 --compress-hints src bad.img src 2>err.txt
grep -qF "src: Is a directory" err.txt || fail "a directory as the rules file: $(cat err.txt)"
echo PASS
