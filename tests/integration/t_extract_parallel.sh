# Extraction with 1, 2 and 8 workers gives identical trees, for every
# algorithm at several cluster sizes and for every fixture image; the
# problem-free walk reports the same counts; --workers 1 starts no thread.
. "$(dirname "$0")/lib.sh"

make_compact_tree "$T/src" "$T/src.json"
# A large file, so that files are cut into ranges for several workers.
python3 - "$T/src/big.txt" <<'PY'
import random, sys
r = random.Random(11)
words = [bytes(r.choice(b"etaoinshrdlu") for _ in range(r.randint(2, 8))) for _ in range(2000)]
with open(sys.argv[1], "wb") as f:
    for i in range(2500000):
        f.write(r.choice(words) + b" ")
PY
manifest "$T/src" "$T/src.json"

extract_all() {   # image expected what [worker counts]
	local w
	for w in ${4:-1 2 8}; do
		rm -rf "$T/x$w"
		"$EROFSKIT" fsck -q --workers $w --extract "$T/x$w" "$1" >"$T/out$w" ||
			fail "$3: --workers $w failed"
		tree_is "$T/x$w" "$2" "$3 with $w workers"
		rm -rf "$T/x$w"
	done
}

for spec in "lz4 -C4096" "lz4hc -C65536" "deflate -C16384" "deflate -C262144" "zstd -C131072" "lzma -C65536" "lzma -C1048576"; do
	set -- $spec
	note "$spec"
	"$EROFSKIT" mkfs -q -z$1 $2 "$T/img" "$T/src"
	extract_all "$T/img" "$T/src.json" "$spec"
done
note "uncompressed"
"$EROFSKIT" mkfs -q "$T/img" "$T/src"
extract_all "$T/img" "$T/src.json" "uncompressed"

for img in "$FIXTURES"/images/*.img; do
	name=$(basename "$img" .img)
	note "fixture $name"
	# (t_fixtures extracts each with the default, all CPUs)
	extract_all "$img" "$FIXTURES/images/$name.manifest.json" "fixture $name" \
		"$(normal_or_sanitized "1 8" "8")"
done

# Files wait open for their data job; a directory of thousands of small
# files must not run the process out of descriptors (RLIMIT_NOFILE is often
# 1024; 64 here).  Big files' ranges hold descriptors too.
note "a wide directory under a low descriptor limit"
mkdir -p "$T/wide/d"
for i in $(seq 1 1500); do echo "small file $i" > "$T/wide/d/f$i"; done
for i in 1 2 3; do head -c 5000000 "$T/src/big.txt" > "$T/wide/big$i"; done
manifest "$T/wide" "$T/wide.json"
"$EROFSKIT" mkfs -q -zlz4 "$T/wide.img" "$T/wide"
for w in 1 2 8; do
	rm -rf "$T/xw"
	(ulimit -n 64; "$EROFSKIT" fsck -q --workers $w --extract "$T/xw" "$T/wide.img") \
		2>"$T/err" || { cat "$T/err"; fail "--workers $w ran out of descriptors"; }
	tree_is "$T/xw" "$T/wide.json" "wide directory with $w workers"
done
rm -rf "$T/xw" "$T/wide"

# One worker is the single-threaded path: no thread is ever created.
# (LeakSanitizer cannot run under ptrace: off for these two runs.)
ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=clone,clone3 -o "$T/trace" \
	"$EROFSKIT" fsck -q --workers 1 --extract "$T/st" "$T/img"
! grep -q clone "$T/trace" || fail "--workers 1 created threads"
ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=clone,clone3 -o "$T/trace" \
	"$EROFSKIT" fsck -q --workers 2 "$T/img"
grep -q clone "$T/trace" || fail "--workers 2 created no threads"
echo PASS
