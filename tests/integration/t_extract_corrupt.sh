# Corruption met by several workers at once is reported once per problem,
# in the same order whatever the number of workers; exit 1; no deadlock
# when a worker fails in the middle of a file (with a timeout, and under
# the sanitized build).
. "$(dirname "$0")/lib.sh"

PATCH="python3 $HERE/imgpatch.py"
mkdir -p "$T/src/d1" "$T/src/d2"
python3 - "$T/src" <<'PY'
import os, random, sys
r = random.Random(5)
words = [bytes(r.choice(b"abcdefgh") for _ in range(r.randint(2, 9))) for _ in range(400)]
def text(n):
    return b" ".join(r.choice(words) for _ in range(n))
for d in ("d1", "d2"):
    for i in range(40):
        open(os.path.join(sys.argv[1], d, "f%02d" % i), "wb").write(text(3000 + 500 * i))
open(os.path.join(sys.argv[1], "huge"), "wb").write(text(3000000))
open(os.path.join(sys.argv[1], "big2"), "wb").write(text(3000000))
os.link(os.path.join(sys.argv[1], "d1", "f05"), os.path.join(sys.argv[1], "d2", "hardlink-to-f05"))
PY
"$EROFSKIT" mkfs -q -zlz4hc -C16384 -E^fragments,^dedupe "$T/good.img" "$T/src"

# Damage a pcluster of several files and two places of the big one.
cp "$T/good.img" "$T/bad.img"
n=0
for f in /d1/f03 /d1/f05 /d2/f10 /d2/f39 /huge; do
	for i in 0 3; do
		phys=$("$EROFSKIT" dump --json --path $f "$T/good.img" | python3 -c "
import json, sys
e = [x for x in json.load(sys.stdin)['extents'] if x['kind'] == 'compressed']
i = int(sys.argv[1])
print(e[i]['physical'] if i < len(e) else '')" $i)
		[ -n "$phys" ] || continue
		$PATCH "$T/bad.img" "$phys" --random 16384 $((n += 1))
	done
done

# And /big2 (cut into 4 MiB ranges by the workers) late in its first range
# and early in its third: the third range's damage is usually met first,
# yet it is the first range's that is reported, and the extracted file
# ends where that damage starts, whatever the number of workers.
extent_at() {   # FILE OFFSET: "logical physical" of the compressed extent there
	"$EROFSKIT" dump --json --path "$1" "$T/good.img" | python3 -c "
import json, sys
off = int(sys.argv[1])
for x in json.load(sys.stdin)['extents']:
    if x['kind'] == 'compressed' and x['logical'] <= off < x['logical'] + x['length']:
        print(x['logical'], x['physical'])" "$2"
}
read -r cut phys < <(extent_at /big2 $(((4 << 20) - 40000)))
[ -n "$phys" ] || fail "no compressed extent near the end of /big2's first range"
$PATCH "$T/bad.img" "$phys" --random 64 21
read -r _ phys < <(extent_at /big2 $(((8 << 20) + 40000)))
$PATCH "$T/bad.img" "$phys" --random 64 22

for w in 1 2 8; do
	rc=0
	timeout 120 "$EROFSKIT" fsck --workers $w "$T/bad.img" 2>"$T/err$w" >/dev/null || rc=$?
	[ $rc -eq 1 ] || { cat "$T/err$w"; fail "--workers $w: exit $rc, expected 1"; }
	rc=0
	timeout 120 "$EROFSKIT" fsck --workers $w --extract "$T/x$w" "$T/bad.img" \
		2>"$T/xerr$w" >/dev/null || rc=$?
	[ $rc -eq 1 ] || { cat "$T/xerr$w"; fail "--workers $w --extract: exit $rc"; }
done
cmp "$T/err1" "$T/err2" || fail "reports differ between 1 and 2 workers"
cmp "$T/err1" "$T/err8" || fail "reports differ between 1 and 8 workers"
cmp "$T/xerr1" "$T/xerr2" || fail "extraction reports differ between 1 and 2 workers"
cmp "$T/xerr1" "$T/xerr8" || fail "extraction reports differ between 1 and 8 workers"
grep -q "^erofskit fsck: /big2 .*: extent at offset $cut " "$T/xerr1" ||
	{ grep /big2 "$T/xerr1"; fail "/big2's first damage (extent at $cut) is not the one reported"; }
for w in 2 8; do
	cmp "$T/x1/big2" "$T/x$w/big2" || fail "damaged /big2 extracted differently by 1 and $w workers"
done
[ "$(stat -c %s "$T/x1/big2")" -eq "$cut" ] ||
	fail "damaged /big2 extracted as $(stat -c %s "$T/x1/big2") bytes, not cut at its damage ($cut)"
cmp -n "$cut" "$T/src/big2" "$T/x1/big2" || fail "the intact start of /big2 was not extracted"
# Once per problem: no line twice; each damaged file named; the hard link's
# damage reported under one name only (the smaller, /d1/f05).
[ "$(sort "$T/err8" | uniq -d | wc -l)" -eq 0 ] || fail "a problem was reported twice"
for f in /d1/f03 /d1/f05 /d2/f10 /d2/f39 /huge; do
	grep -q "^erofskit fsck: $f " "$T/err8" || fail "$f not reported"
done
! grep -q "hardlink-to-f05" "$T/err8" || fail "the hard link was reported besides /d1/f05"
grep -q "/d1/f00" "$T/err8" && fail "an intact file was reported"
# The intact files were extracted whole.
cmp "$T/src/d1/f00" "$T/x8/d1/f00" || fail "intact file damaged by the extraction"
echo PASS
