# Damaged compressed data and damaged indexes: fsck exits 1 and names the
# file and the offset; no crash, no hang (the sanitized build runs this too).
# The decoder named by --engine or its variable is the one that reports.
. "$(dirname "$0")/lib.sh"

PATCH="python3 $HERE/imgpatch.py"
mkdir -p "$T/src"
python3 - "$T/src" <<'PY'
import os, random, sys
r = random.Random(3)
words = [bytes(r.choice(b"abcdefghijklmnop") for _ in range(r.randint(2, 10))) for _ in range(300)]
for name in ("victim.txt", "bystander.txt"):
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        for i in range(60000):
            f.write(r.choice(words) + b" ")
PY

# field PATH KEY: a value from `dump --path --json`.
field() {
	"$EROFSKIT" dump --json --path "$2" "$1" | python3 -c "
import json, sys
d = json.load(sys.stdin)
key = sys.argv[1]
if key.startswith('extent'):
    i, k = key.split('.')[1:]
    print(d['extents'][int(i)][k])
else:
    print(d[key])" "$3"
}

# expect_corrupt IMAGE WHAT PATTERN: fsck exits 1 and prints PATTERN.
expect_corrupt() {
	local rc=0
	timeout 120 "$EROFSKIT" fsck "$1" 2>"$T/err" >/dev/null || rc=$?
	[ $rc -eq 1 ] || { cat "$T/err" >&2; fail "$2: fsck exit $rc, expected 1"; }
	grep -q -- "$3" "$T/err" || { cat "$T/err" >&2; fail "$2: no message matching '$3'"; }
	grep -q "bystander" "$T/err" && fail "$2: an intact file was reported"
	return 0
}

# decoder_says TAG CMD...: CMD exits 1 and the problem names the decoder
# that found it, "ALG (TAG)": the decoder chosen is the one that ran.
decoder_says() {
	local tag=$1 rc=0
	shift
	timeout 120 "$@" 2>"$T/err" >/dev/null || rc=$?
	[ $rc -eq 1 ] || { cat "$T/err" >&2; fail "$*: exit $rc, expected 1"; }
	grep -qF -- "$alg ($tag)" "$T/err" ||
		{ cat "$T/err" >&2; fail "$*: the problem does not come from $alg ($tag)"; }
}

for alg in lz4 lz4hc deflate zstd lzma; do
	for C in 4096 65536; do
		"$EROFSKIT" mkfs -q -z$alg -C$C -E^fragments,^dedupe "$T/good.img" "$T/src"
		"$EROFSKIT" fsck -q "$T/good.img" || fail "$alg: clean image rejected"
		phys=$(field "$T/good.img" /victim.txt extent.1.physical)
		plen=$(field "$T/good.img" /victim.txt extent.1.physical_length)
		kind=$(field "$T/good.img" /victim.txt extent.1.kind)
		[ "$kind" = compressed ] || fail "$alg: second extent is $kind"
		logical=$(field "$T/good.img" /victim.txt extent.1.logical)

		note "$alg -C$C: garbage pcluster"
		cp "$T/good.img" "$T/bad.img"
		$PATCH "$T/bad.img" "$phys" --random "$plen" 42
		expect_corrupt "$T/bad.img" "$alg garbage" "/victim.txt.*offset $logical"
		case $alg in
		deflate)
			note "$alg -C$C: each decoder, chosen by option or variable"
			decoder_says libdeflate "$EROFSKIT" fsck "$T/bad.img"
			decoder_says isa-l "$EROFSKIT" fsck --engine isal "$T/bad.img"
			decoder_says zlib "$EROFSKIT" fsck --engine liblzma --engine zlib "$T/bad.img"
			decoder_says zlib env EROFSKIT_ENGINE=zlib "$EROFSKIT" fsck "$T/bad.img"
			decoder_says isa-l env EROFSKIT_ENGINE=zlib "$EROFSKIT" fsck --engine isal "$T/bad.img"
			decoder_says isa-l "$EROFSKIT" dump --engine isal --cat /victim.txt "$T/bad.img" ;;
		lzma)
			note "$alg -C$C: each decoder, chosen by option or variable"
			decoder_says builtin "$EROFSKIT" fsck --engine isal "$T/bad.img"
			decoder_says liblzma "$EROFSKIT" fsck --engine liblzma "$T/bad.img"
			decoder_says liblzma env EROFSKIT_LZMA_ENGINE=liblzma "$EROFSKIT" fsck "$T/bad.img"
			decoder_says builtin env EROFSKIT_LZMA_ENGINE=liblzma "$EROFSKIT" fsck --engine builtin "$T/bad.img"
			decoder_says liblzma "$EROFSKIT" dump --engine liblzma --cat /victim.txt "$T/bad.img" ;;
		esac

		note "$alg -C$C: zeroed first block of a pcluster"
		cp "$T/good.img" "$T/bad.img"
		$PATCH "$T/bad.img" "$phys" --zero 4096
		expect_corrupt "$T/bad.img" "$alg zeros" "/victim.txt.*zeros"

		note "$alg -C$C: damaged compact index"
		cp "$T/good.img" "$T/bad.img"
		ioff=$(field "$T/good.img" /victim.txt inode_offset)
		ext=$(field "$T/good.img" /victim.txt extended)
		xs=$(field "$T/good.img" /victim.txt xattr_size)
		core=32; [ "$ext" = True ] && core=64
		idx=$(( ((ioff + core + xs + 7) / 8) * 8 + 8 ))
		$PATCH "$T/bad.img" "$idx" ffffffffffffffffffffffffffffffff
		expect_corrupt "$T/bad.img" "$alg index" "/victim.txt.*index"
	done
done

note "truncated image"
"$EROFSKIT" mkfs -q -zlz4hc -E^fragments,^dedupe "$T/good.img" "$T/src"
cp "$T/good.img" "$T/bad.img"
size=$(stat -c %s "$T/good.img")
$PATCH "$T/bad.img" --truncate $((size / 2))
rc=0
timeout 60 "$EROFSKIT" fsck "$T/bad.img" 2>"$T/err" >/dev/null || rc=$?
[ $rc -eq 1 ] || { cat "$T/err"; fail "truncated image: exit $rc"; }
echo PASS
