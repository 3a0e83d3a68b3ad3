# io=uring: the direct path (merged aligned reads, its own readahead
# chunks) returns the right bytes to sequential and random readers at
# small and large clusters and on an image larger than its pool of
# chunks, and leaves the image out of the page cache;
# an image on a filesystem that refuses O_DIRECT (a file of a compressed
# EROFS image, mounted by the kernel) is read buffered, said once, with
# the right bytes.  It is the mount's default: with no io= the image stays
# out of the page cache, and a refusal is not mentioned.
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
TREECMP="python3 $HERE/treecmp.py"
cd "$T"

mkdir -p src/small
python3 - src <<'PY'
import os, random, sys
r = random.Random(7)
words = [bytes(r.choice(b"abcdefghij") for _ in range(r.randint(2, 9))) for _ in range(500)]
with open(os.path.join(sys.argv[1], "big"), "wb") as f:   # compresses ~3x
    for _ in range(24 << 10):
        f.write(b" ".join(r.choice(words) for _ in range(170))[:1023] + b"\n")
for i in range(200):
    with open(os.path.join(sys.argv[1], "small", "f%03d" % i), "wb") as f:
        f.write(os.urandom(r.randint(1, 9000)) if i % 3 == 0 else words[i] * r.randint(1, 900))
PY

# random_reads MOUNTED_FILE SOURCE_FILE: 3000 random 4 KiB reads agree
random_reads() {
	python3 - "$1" "$2" <<'PY' || fail "random reads of $1 differ from the source"
import os, random, sys
a, b = (os.open(p, os.O_RDONLY) for p in sys.argv[1:3])
size = os.fstat(b).st_size
r = random.Random(11)
for _ in range(3000):
    off = r.randrange(0, size) & ~4095
    if os.pread(a, 4096, off) != os.pread(b, 4096, off):
        sys.exit("differs at %d" % off)
PY
}

# cached_pages FILE: how many of its pages are in the page cache
cached_pages() { fincore -b -n -o RES "$1" | awk '{print int($1 / 4096)}'; }
drop_file_cache() {
	sync "$1"
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}

for C in 4096 65536 262144; do
	note "-C $C: io=uring reads every byte right, sequential and random"
	"$E" mkfs -q -zlz4hc -C$C "img$C" src
	drop_file_cache "img$C"
	fmount "img$C" m "io=uring" 2>err
	[ ! -s err ] || fail "io=uring on a plain file printed: $(cat err)"
	random_reads m/big src/big
	$TREECMP src m >/dev/null || { $TREECMP src m | tail -5; fail "-C $C: io=uring differs from the source"; }
	pages=$(cached_pages "img$C")
	total=$(( $(stat -c %s "img$C") / 4096 ))
	[ "$pages" -lt $((total / 100 + 1)) ] ||
		fail "-C $C: $pages of $total image pages in the page cache after io=uring"
	fumount m
done

note "an image larger than the readahead pool, which grows by half the cache: every byte right"
# 48 MiB that do not compress, cache=40M: the pool of 16 MiB grows by 20
# MiB, short of the image, so random readers reclaim its chunks for
# others and find them again by their new place.
mkdir -p noise
head -c $((48 << 20)) /dev/urandom >noise/blob
"$E" mkfs -q -zlz4 -C65536 noise.img noise
drop_file_cache noise.img
fmount noise.img m "io=uring,cache=40M" 2>err
[ ! -s err ] || fail "io=uring on the large image printed: $(cat err)"
random_reads m/blob noise/blob
cmp m/blob noise/blob || fail "io=uring read of an image larger than its pool differs"
pages=$(cached_pages noise.img)
[ "$pages" -lt $(( $(stat -c %s noise.img) / 4096 / 100 + 1)) ] ||
	fail "$pages pages of the large image in the page cache after io=uring"
fumount m

note "a file whose filesystem refuses O_DIRECT: read buffered, said once"
mkdir -p inner
cp img65536 inner/img
"$E" mkfs -q -zlz4 outer.erofs inner
kmount outer.erofs outer
python3 -c 'import os; os.open("outer/img", os.O_RDONLY | os.O_DIRECT)' 2>/dev/null &&
	fail "this kernel's EROFS takes O_DIRECT on a compressed file: the test needs another refusing filesystem"
fmount outer/img m "io=uring" 2>err
[ "$(grep -c "refuses O_DIRECT" err)" = 1 ] || fail "no single notice of the buffered fallback: $(cat err)"
random_reads m/big src/big
$TREECMP src m >/dev/null || fail "io=uring on a file refusing O_DIRECT differs from the source"
fumount m

note "the default is io=uring: the image stays out of the page cache; a refusal goes unsaid"
drop_file_cache img65536
fmount img65536 m "" 2>err
[ ! -s err ] || fail "the default mount printed: $(cat err)"
random_reads m/big src/big
$TREECMP src m >/dev/null || fail "the default mount differs from the source"
pages=$(cached_pages img65536)
[ "$pages" -lt $(( $(stat -c %s img65536) / 4096 / 100 + 1)) ] ||
	fail "$pages pages of the image in the page cache after a default mount"
fumount m
fmount outer/img m "" 2>err
[ ! -s err ] || fail "the default mount of a file refusing O_DIRECT printed: $(cat err)"
$TREECMP src m >/dev/null || fail "the default mount of a file refusing O_DIRECT differs from the source"
fumount m
echo PASS
