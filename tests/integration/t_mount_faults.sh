# Faults while mounted: a corrupt cluster gives EIO for its file while the
# others still read; readers killed in the middle of reads and an unmount
# with reads in flight leave no hang and no crash.
. "$(dirname "$0")/lib.sh"

PATCH="python3 $HERE/imgpatch.py"
mkdir -p "$T/src"
python3 - "$T/src" <<'PY'
import os, random, sys
r = random.Random(9)
words = [bytes(r.choice(b"zxcvbnm") for _ in range(r.randint(2, 9))) for _ in range(800)]
for name in ("victim", "good1", "good2"):
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        for i in range(400000):
            f.write(r.choice(words) + b" ")
PY
"$EROFSKIT" mkfs -q -zlz4hc -C16384 "$T/good.img" "$T/src"
cp "$T/good.img" "$T/bad.img"
phys=$("$EROFSKIT" dump --json --path /victim "$T/good.img" | python3 -c "
import json, sys
print([x for x in json.load(sys.stdin)['extents'] if x['kind'] == 'compressed'][2]['physical'])")
$PATCH "$T/bad.img" "$phys" --random 16384 77

note "corrupt cluster: EIO for its file, the rest reads"
fmount "$T/bad.img" "$T/m"
if timeout 60 cat "$T/m/victim" > /dev/null 2>"$T/err"; then
	fail "reading the damaged file succeeded"
fi
grep -q "Input/output error" "$T/err" || { cat "$T/err"; fail "no EIO for the damaged file"; }
timeout 60 cmp "$T/m/good1" "$T/src/good1" || fail "an intact file did not read back"
timeout 60 cmp "$T/m/good2" "$T/src/good2" || fail "an intact file did not read back"
pid=$(fmount_pid "$T/m")
server_running "$pid" || fail "the server died"
fumount "$T/m"

note "readers killed in the middle of reads"
fmount "$T/good.img" "$T/m" "cache=4M"
pid=$(fmount_pid "$T/m")
for i in $(seq 1 6); do
	( while :; do cat "$T/m/good1" "$T/m/good2" > /dev/null; done ) &
	readers[$i]=$!
done
sleep 2
for r in "${readers[@]}"; do kill -9 "$r" 2>/dev/null || true; done
wait 2>/dev/null || true
server_running "$pid" || fail "the server died when its readers were killed"
timeout 60 cmp "$T/m/good2" "$T/src/good2" || fail "reads broken after killed readers"

note "unmount with reads in flight"
for i in $(seq 1 4); do
	( for _ in $(seq 20); do cat "$T/m/good1" > /dev/null 2>&1 || break; done ) &
done
sleep 0.5
umount -l "$T/m"
wait 2>/dev/null || true
for _ in $(seq 100); do server_running "$pid" || break; sleep 0.1; done
server_running "$pid" && fail "the server is still running after a lazy unmount"
echo PASS
