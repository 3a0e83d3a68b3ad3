# The image is byte-identical whatever the number of workers, for every
# algorithm; and building twice gives the same bytes.
. "$(dirname "$0")/lib.sh"

make_fixture_tree "$T/src"
# A large file, so that it is cut into several segments.
python3 - "$T/src/big.bin" <<'PY'
import sys, random
r = random.Random(7)
words = [bytes(r.choice(b"abcdefghij") for _ in range(r.randint(2, 9))) for _ in range(500)]
with open(sys.argv[1], "wb") as f:
    for i in range(1500000):
        f.write(r.choice(words) + (b"\n" if i % 11 == 0 else b" "))
PY
for spec in "lz4 -C4096" "lz4hc,9 -C65536" "deflate,6 -C16384" "zstd,3 -C131072" "lzma,3 -C65536"; do
	set -- $spec
	note "$spec"
	"$EROFSKIT" mkfs -q --workers 1 -z$1 $2 "$T/w1.img" "$T/src"
	"$EROFSKIT" mkfs -q --workers 8 -z$1 $2 "$T/w8.img" "$T/src"
	"$EROFSKIT" mkfs -q --workers 3 -z$1 $2 "$T/w3.img" "$T/src"
	cmp "$T/w1.img" "$T/w8.img" || fail "$spec: --workers 1 and 8 differ"
	cmp "$T/w1.img" "$T/w3.img" || fail "$spec: --workers 1 and 3 differ"
	"$EROFSKIT" fsck -q "$T/w8.img" || fail "$spec: fsck"
done
echo PASS
