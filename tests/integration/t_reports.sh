# Machine-readable reports and standard input/output:
#   - mkfs --json: the documented fields, the real image size, the layout
#     counts; on failure result "error", exit 2, no image;
#   - fsck --json: counts, and every problem with path, nid, file offset,
#     image offset and decoder (a damaged pcluster found through dump);
#     exit codes as without --json; names' control bytes shown as \xNN
#     in the words on stderr;
#   - IMAGE '-': mkfs writes the image to standard output (the same bytes
#     as into a file, never onto a terminal); fsck and dump read it from
#     standard input, a file or a pipe.
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
cd "$T"
mkdir -p src/d src/e
echo hello >src/a
seq 1 40000 >src/d/b
cp src/d/b src/e/b-copy
ln -s a src/l

# field FILE EXPR: a Python expression over the JSON document `j` in FILE.
field() {
	python3 - "$1" "$2" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit("%s is not JSON: %s: %r" % (sys.argv[1], e, open(sys.argv[1]).read()[:300]))
print(eval(sys.argv[2]))
PY
}
# expect FILE EXPR VALUE
expect() {
	local got
	got=$(field "$1" "$2") || fail "$1: cannot evaluate $2"
	[ "$got" = "$3" ] || { cat "$1" >&2; fail "$1: $2 is '$got', expected '$3'"; }
}

note "mkfs --json"
"$E" mkfs --json -zlz4hc -Efragments,dedupe img.img src >mkfs.json 2>mkfs.err ||
	fail "mkfs --json failed: $(cat mkfs.err)"
[ ! -s mkfs.err ] || fail "mkfs --json wrote to stderr: $(cat mkfs.err)"
expect mkfs.json 'j["result"]' ok
expect mkfs.json 'j["error"]' None
expect mkfs.json 'j["image"]' img.img
expect mkfs.json 'j["image_bytes"]' "$(stat -c %s img.img)"
expect mkfs.json 'j["regular_files"]' 3
expect mkfs.json 'j["directories"]' 3
expect mkfs.json 'j["input_bytes"]' $((6 + 2 * $(stat -c %s src/d/b) + 1))
expect mkfs.json 'sorted(j)' "['blob_bytes', 'compressed_files', 'directories', 'error', 'image', 'image_bytes', 'inodes', 'input_bytes', 'layouts', 'regular_files', 'result', 'seconds']"
expect mkfs.json 'sorted(j["layouts"])' "['chunked_files', 'dedupe_hits', 'fragment_files', 'fragment_tails', 'inline_tails', 'packed_bytes', 'zero_chunks']"
# a.txt whole in the packed inode, b's tail there, its copy stored once
expect mkfs.json 'j["layouts"]["fragment_files"] >= 1 and j["layouts"]["fragment_tails"] >= 1' True
expect mkfs.json 'j["layouts"]["dedupe_hits"] > 0' True
expect mkfs.json 'j["layouts"]["inline_tails"]' 0
# the user's files, not the packed inode
expect mkfs.json 'j["compressed_files"]' 3
expect mkfs.json 'isinstance(j["seconds"], float)' True
expect mkfs.json 'j["layouts"]["chunked_files"] + j["layouts"]["zero_chunks"]' 0
# --chunksize: b is new, so flat; its copy points at b's whole chunks
# (b's last, partial one went inline with b, so the copy stores its own)
"$E" mkfs --json --chunksize 4096 chunks.img src >chunks.json 2>mkfs.err ||
	fail "mkfs --json --chunksize failed: $(cat mkfs.err)"
expect chunks.json 'j["layouts"]["chunked_files"]' 1
expect chunks.json 'j["layouts"]["dedupe_hits"]' $(($(stat -c %s src/d/b) / 4096))
expect chunks.json 'j["layouts"]["zero_chunks"]' 0
expect chunks.json 'j["compressed_files"]' 0

rc=0
"$E" mkfs --json out.img no-such-dir >bad.json 2>bad.err || rc=$?
[ $rc -eq 2 ] || fail "mkfs --json of a missing source: exit $rc, not 2"
expect bad.json 'j["result"]' error
expect bad.json '"no-such-dir" in j["error"]' True
grep -q "no-such-dir" bad.err || fail "mkfs --json: the error is not on stderr too"
compgen -G 'out.img*' >/dev/null && fail "mkfs --json left an image after failing"

note "fsck --json, clean"
"$E" fsck --json img.img >clean.json || fail "fsck --json of a clean image failed"
expect clean.json 'j["result"]' clean
expect clean.json 'j["problems"]' '[]'
expect clean.json 'j["problem_count"]' 0
expect clean.json 'j["regular_files"]' 3
expect clean.json 'j["bytes"]' $((6 + 2 * $(stat -c %s src/d/b)))
expect clean.json 'j["extract_dir"]' None
expect clean.json 'sorted(j)' "['bytes', 'directories', 'error', 'extract_dir', 'image', 'inodes', 'problem_count', 'problems', 'regular_files', 'result', 'seconds']"

note "fsck --json, a damaged pcluster"
"$E" dump --path /d/b --json img.img >b.json || fail "dump --path /d/b --json failed"
# the third extent: compressed, somewhere inside the file
read -r logical physical plen alg < <(field b.json \
	'" ".join(str(v) for v in (lambda x: (x["logical"], x["physical"], x["physical_length"], x["algorithm"]))(j["extents"][2]))')
[ "$(field b.json 'j["extents"][2]["kind"]')" = compressed ] || fail "/d/b's third extent is not compressed"
cp img.img bad.img
python3 - bad.img "$physical" "$plen" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    f.write(b"\xff" * int(sys.argv[3]))
PY
rc=0
"$E" fsck --json bad.img >bad.json 2>bad.err || rc=$?
[ $rc -eq 1 ] || fail "fsck --json of a damaged image: exit $rc, not 1"
[ ! -s bad.err ] || fail "fsck --json printed problems on stderr too: $(cat bad.err)"
expect bad.json 'j["result"]' corrupt
# b's copy is stored once with it (dedupe): both files are damaged there
expect bad.json 'j["problem_count"]' 2
expect bad.json '[p["path"] for p in j["problems"]]' "['/d/b', '/e/b-copy']"
expect bad.json 'j["problems"][0]["nid"]' "$(field b.json 'j["nid"]')"
for i in 0 1; do
	expect bad.json "j['problems'][$i]['offset']" "$logical"
	expect bad.json "j['problems'][$i]['image_offset']" "$physical"
	expect bad.json "j['problems'][$i]['decoder']" "$alg"
	expect bad.json "j['problems'][$i]['errno']" EUCLEAN
	expect bad.json "len(j['problems'][$i]['message']) > 0" True
done
expect bad.json 'sorted(j["problems"][0])' "['decoder', 'errno', 'image_offset', 'message', 'nid', 'offset', 'path']"
# the same problem, in words, without --json
rc=0
"$E" fsck bad.img >/dev/null 2>bad.err || rc=$?
[ $rc -eq 1 ] || fail "fsck of a damaged image: exit $rc, not 1"
grep -q "/b.*nid $(field b.json 'j["nid"]')" bad.err || fail "fsck: no problem for b: $(cat bad.err)"

note "fsck: a damaged file whose name holds terminal escapes"
mkdir esc
seq 1 40000 >"esc/$(printf 'red\033[31m\007')"
"$E" mkfs -q -zlz4hc esc.img esc || fail "mkfs of the escapes tree failed"
"$E" dump --path "/$(printf 'red\033[31m\007')" --json esc.img >esc.json || fail "dump of the escaped name failed"
python3 - esc.img "$(field esc.json 'j["extents"][1]["physical"]')" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    f.write(b"\xff" * 64)
PY
rc=0
"$E" fsck esc.img >/dev/null 2>esc.err || rc=$?
[ $rc -eq 1 ] || fail "fsck of the damaged escapes image: exit $rc, not 1"
grep -qF '/red\x1b[31m\x07 (nid' esc.err || fail "fsck does not show the name's control bytes as \\xNN: $(od -c esc.err)"
! LC_ALL=C grep -q "$(printf '[\033\007]')" esc.err || fail "a control byte of a name reached stderr as it is"

note "fsck --json, not an image"
head -c 8192 /dev/zero >zeros.img
rc=0
"$E" fsck --json zeros.img >zeros.json 2>/dev/null || rc=$?
[ $rc -eq 1 ] || fail "fsck --json of zeros: exit $rc, not 1"
expect zeros.json 'j["result"]' error
expect zeros.json 'len(j["error"]) > 0' True

note "mkfs IMAGE '-': the image on standard output"
"$E" mkfs -q -zlz4hc -Efragments,dedupe - src >stdout.img || fail "mkfs - failed"
cmp stdout.img img.img || fail "the image written to standard output differs from the file's"
"$E" mkfs -zlz4hc - src >/dev/null 2>summary.err || fail "mkfs - >/dev/null failed"
grep -q "image bytes" summary.err || fail "mkfs -: the summary is not on stderr"
"$E" mkfs -zlz4hc - src | cat >piped.img || fail "mkfs - | cat failed"
cmp piped.img img.img || fail "the image written into a pipe differs"
rc=0
TERM=xterm script -qec "$(printf '%q ' "$E" mkfs - src)" /dev/null >tty.out || rc=$?
grep -q "terminal" tty.out || { cat -v tty.out >&2; fail "mkfs - onto a terminal was not refused"; }
rc=0
TERM=xterm script -qec "$(printf '%q ' "$E" mkfs --tar tty.img)" /dev/null >tty.out || rc=$?
[ $rc -eq 2 ] && grep -q "standard input is a terminal" tty.out && [ ! -e tty.img ] ||
	{ cat -v tty.out >&2; fail "mkfs --tar reading a terminal was not refused (exit $rc)"; }
rc=0
"$E" mkfs --json - src >/dev/null 2>both.err || rc=$?
[ $rc -eq 2 ] || fail "mkfs --json - : exit $rc, not 2"
rc=0
"$E" mkfs out.img - </dev/null 2>tar.err || rc=$?
[ $rc -eq 2 ] && grep -q -- "--tar" tar.err || fail "mkfs SOURCE '-' not refused clearly (exit $rc): $(cat tar.err)"

note "fsck and dump IMAGE '-': from standard input"
"$E" fsck - <img.img >file.out || fail "fsck - <file failed"
grep -q "clean" file.out || fail "fsck - <file: not clean"
cat img.img | "$E" fsck --json - >pipe.json || fail "cat | fsck - failed"
expect pipe.json 'j["result"]' clean
expect pipe.json 'j["regular_files"]' 3
rc=0
cat bad.img | "$E" fsck - >/dev/null 2>pipe.err || rc=$?
[ $rc -eq 1 ] || fail "cat bad.img | fsck -: exit $rc, not 1"
"$E" dump --path /d/b - <img.img >dump.out || fail "dump - failed"
grep -q "$(stat -c %s src/d/b)" dump.out || fail "dump -: not /d/b's size"
rc=0
head -c 100 img.img | "$E" fsck - 2>short.err || rc=$?
[ $rc -eq 1 ] || fail "a truncated image on a pipe: exit $rc, not 1"
grep -q "standard input" short.err || fail "the error does not name standard input: $(cat short.err)"
echo "PASS"
