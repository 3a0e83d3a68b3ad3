# mkfs's memory does not grow with a file's size: a 384 MiB file goes
# whole into the packed inode (-Eall-fragments) from a directory and from
# a tar on standard input, and into ordinary pclusters, each build within
# 128 MiB of peak RSS (issue 18's bound for tar input; held whole, such a
# file took twice its size).  Nor by a block or more per file stored
# uncompressed, each with its tail inline: 24,000 small random files
# within 64 MiB (their tails all in memory took 145 MiB; the metadata
# area whole in memory, and every file's extents kept to the end, 104).
# The kernel shows the files' bytes.  And what each entry of a tar costs
# while the image is built (its inode, name and digest) stays within
# PER_ENTRY_LIMIT bytes: the difference between tars of 20,000 and
# 60,000 small files, over 40,000.
. "$(dirname "$0")/lib.sh"

LIMIT_MIB=128
MANY_LIMIT_MIB=64
# 412-480 bytes measured with -zlz4; 646 while every compressed file's
# pipeline record was kept to the end and an inode took 328 bytes where
# its fields need 256.
PER_ENTRY_LIMIT=560
# Under the sanitizers each of the 24,000 files' allocations carries
# redzones and shadow, and the quarantine below holds freed ones: 125
# MiB where the plain build peaks at 37 (175 with the metadata area
# whole; 95-110 while a 1 MiB buffer per file, freed, went through the
# quarantine and pushed the small ones out).
[ -n "${EROFSKIT_SANITIZED:-}" ] && MANY_LIMIT_MIB=144
# And every allocation a redzone: 961-1041 bytes an entry measured; the
# plain build's figure is the one that tells a regression.
[ -n "${EROFSKIT_SANITIZED:-}" ] && PER_ENTRY_LIMIT=1536
# The sanitizer keeps up to 256 MiB of freed memory in quarantine by
# default: resident, but not the build's own.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"

# 384 variants of one MiB of words: compressible, but not by repeats a
# pcluster apart.
PYTHONPATH="$HERE" python3 - "$T/src" <<'PY'
import os, random, sys, wordtext
root = sys.argv[1]
os.makedirs(root)
r = random.Random(5)
base = wordtext.text(r, wordtext.words(r, 2000), 1 << 20)
with open(os.path.join(root, "large"), "wb") as f:
    for i in range(384):
        f.write(base[i * 997:] + base[:i * 997])
for i in range(20):
    open(os.path.join(root, "small-%d" % i), "wb").write(base[i * 100:i * 100 + 5000 + i])
PY
manifest "$T/src" "$T/src.json"
tar --format=posix -cf "$T/src.tar" -C "$T/src" .

# 24 directories of 1,000 files of 1,000-4,000 random bytes: 60 MiB of
# inline tails.
python3 - "$T/many" <<'PY'
import os, random, sys
root = sys.argv[1]
r = random.Random(11)
for d in range(24):
    os.makedirs(os.path.join(root, "d%02d" % d))
    for i in range(1000):
        with open(os.path.join(root, "d%02d" % d, "r%04d" % i), "wb") as f:
            f.write(r.randbytes(r.randint(1000, 4000)))
PY
manifest "$T/many" "$T/many.json"
tar --format=posix -cf "$T/many.tar" -C "$T/many" .

# peak_rss_kib STDIN COMMAND...: run it, fail if it fails, print its peak
# resident set in KiB (ru_maxrss's unit); peak_rss_mib, in MiB.
peak_rss_kib() {
	python3 - "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "rb") as stdin:
    r = subprocess.run(sys.argv[2:], stdin=stdin)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r.returncode)
PY
}
peak_rss_mib() {
	local kib
	kib=$(peak_rss_kib "$@") || return 1
	echo $((kib / 1024))
}

within_limit() {   # limit, label, manifest, stdin, mkfs arguments...
	local limit=$1 label=$2 want=$3 stdin=$4 peak
	shift 4
	peak=$(peak_rss_mib "$stdin" "$EROFSKIT" mkfs -q "$@") || fail "mkfs $label"
	note "$label: peak RSS $peak MiB"
	[ "$peak" -le "$limit" ] || fail "$label: peak RSS $peak MiB, over $limit MiB"
	kernel_check "$T/img" "$want" "$label"
}

within_limit $LIMIT_MIB "directory, -Eall-fragments" "$T/src.json" /dev/null \
	-zlz4 -Eall-fragments "$T/img" "$T/src"
within_limit $LIMIT_MIB "tar on stdin, -Eall-fragments" "$T/src.json" "$T/src.tar" \
	--tar -zlz4 -Eall-fragments "$T/img" -
within_limit $LIMIT_MIB "directory, -C1048576" "$T/src.json" /dev/null -zlz4 -C1048576 "$T/img" "$T/src"
within_limit $MANY_LIMIT_MIB "24,000 small random files, tar on stdin" "$T/many.json" "$T/many.tar" \
	--tar -zlz4 "$T/img" -
within_limit $MANY_LIMIT_MIB "24,000 small random files, uncompressed" "$T/many.json" /dev/null \
	"$T/img" "$T/many"

note "memory per tar entry"
# N text files of 500-3,000 bytes, 1,000 to a directory.
small_text_tar() {   # TAR, N
	PYTHONPATH="$HERE" python3 - "$@" <<'PY'
import io, random, sys, tarfile, wordtext
n = int(sys.argv[2])
r = random.Random(3)
text = wordtext.text(r, wordtext.words(r, 3000), 1 << 20)
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for d in range(n // 1000):
        ti = tarfile.TarInfo("d%03d" % d)
        ti.type, ti.mode = tarfile.DIRTYPE, 0o755
        t.addfile(ti)
        for i in range(1000):
            want = r.randint(500, 3000)
            at = r.randrange(len(text) - want)
            ti = tarfile.TarInfo("d%03d/f%04d" % (d, i))
            ti.size, ti.mode = want, 0o644
            t.addfile(ti, io.BytesIO(text[at:at + want]))
PY
}
small_text_tar "$T/e20k.tar" 20000
small_text_tar "$T/e60k.tar" 60000
rm -rf "$T/src" "$T/many" "$T/src.tar" "$T/many.tar"
for z in -zlz4 ""; do
	# In KiB, for a per-entry figure in bytes.
	few=$(peak_rss_kib /dev/null "$EROFSKIT" mkfs -q --tar $z "$T/img" "$T/e20k.tar") ||
		fail "mkfs --tar $z of 20,000 files"
	many=$(peak_rss_kib /dev/null "$EROFSKIT" mkfs -q --tar $z "$T/img" "$T/e60k.tar") ||
		fail "mkfs --tar $z of 60,000 files"
	per=$(( (many - few) * 1024 / 40000 ))
	note "--tar ${z:-uncompressed}: $few KiB for 20,000 files, $many KiB for 60,000: $per bytes an entry"
	[ "$per" -le $PER_ENTRY_LIMIT ] ||
		fail "--tar ${z:-uncompressed}: $per bytes of memory per entry, over $PER_ENTRY_LIMIT"
done
"$EROFSKIT" fsck -q "$T/img" || fail "erofskit fsck of the 60,000 files"
echo PASS
