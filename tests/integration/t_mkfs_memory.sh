# mkfs's memory does not grow with a file's size: a 384 MiB file goes
# whole into the packed inode (-Eall-fragments) from a directory and from
# a tar on standard input, and into ordinary pclusters, each build within
# 128 MiB of peak RSS (issue 18's bound for tar input; held whole, such a
# file took twice its size).  The kernel shows the file's bytes.
. "$(dirname "$0")/lib.sh"

LIMIT_MIB=128
# The sanitizer keeps up to 256 MiB of freed memory in quarantine by
# default: resident, but not the build's own.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"

# 384 variants of one MiB of words: compressible, but not by repeats a
# pcluster apart.
python3 - "$T/src" <<'PY'
import os, random, sys
root = sys.argv[1]
os.makedirs(root)
r = random.Random(5)
words = [bytes(r.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 9)))
         for _ in range(2000)]
out = bytearray()
while len(out) < 1 << 20:
    out += r.choice(words) + b" "
base = bytes(out[:1 << 20])
with open(os.path.join(root, "large"), "wb") as f:
    for i in range(384):
        f.write(base[i * 997:] + base[:i * 997])
for i in range(20):
    open(os.path.join(root, "small-%d" % i), "wb").write(base[i * 100:i * 100 + 5000 + i])
PY
manifest "$T/src" "$T/src.json"
tar --format=posix -cf "$T/src.tar" -C "$T/src" .

# peak_rss_mib STDIN COMMAND...: run it, fail if it fails, print its peak.
peak_rss_mib() {
	python3 - "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "rb") as stdin:
    r = subprocess.run(sys.argv[2:], stdin=stdin)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
sys.exit(r.returncode)
PY
}

within_limit() {   # label, stdin, mkfs arguments...
	local label=$1 stdin=$2 peak
	shift 2
	peak=$(peak_rss_mib "$stdin" "$EROFSKIT" mkfs -q "$@") || fail "mkfs $label"
	note "$label: peak RSS $peak MiB"
	[ "$peak" -le $LIMIT_MIB ] || fail "$label: peak RSS $peak MiB, over $LIMIT_MIB MiB"
	kernel_check "$T/img" "$T/src.json" "$label"
}

within_limit "directory, -Eall-fragments" /dev/null -zlz4 -Eall-fragments "$T/img" "$T/src"
within_limit "tar on stdin, -Eall-fragments" "$T/src.tar" \
	--tar -zlz4 -Eall-fragments "$T/img" -
within_limit "directory, -C1048576" /dev/null -zlz4 -C1048576 "$T/img" "$T/src"
echo PASS
