# mkfs --chunksize (mkfs.erofs's): uncompressed files chunk-based.
# - The kernel reads every file of the fixture tree (every type, boundary
#   sizes, holes, hard links, xattrs) plus files made to share chunks back
#   exactly, at 4 KiB and 512-byte blocks, from a directory and from a tar,
#   beside compression (the files left uncompressed are chunked); our
#   fsck is clean and fsck.erofs 1.5 takes the uncompressed 4 KiB images
#   (it knows no compressed dedupe, nor 512-byte blocks).
# - A chunk equal to one stored before (another file's, the same file's,
#   a last partial chunk) is stored once: the copies' extents point at the
#   same bytes; -E^dedupe stores each again; a chunk of zeros is a hole.
# - Files that fit beside their inode stay there; a file none of whose
#   chunks is shared or zeros is stored flat, its tail inline (here only
#   chunks of up to the copy buffer, 1 MiB, are looked at so).
# - -Eforce-chunk-indexes: the chunk format mkfs.erofs writes, 8-byte
#   indexes after xattrs too; -Eforce-inode-blockmap undoes it.
# - One worker or two: the same bytes.  The drop-in name: the same bytes.
# - Bad chunk sizes and --tar=i are refused, naming the problem.
# - mkfs.erofs 1.5's chunked image reads back equal through erofskit.
. "$(dirname "$0")/lib.sh"

command -v mkfs.erofs >/dev/null || fail "mkfs.erofs (Debian erofs-utils) is not installed"
command -v fsck.erofs >/dev/null || fail "fsck.erofs (Debian erofs-utils) is not installed"
E=$EROFSKIT
cd "$T"

make_compact_tree src base.json
mkdir -p src/chunks/sub
head -c 1000000 /dev/urandom >src/chunks/a
cp src/chunks/a src/chunks/sub/a-copy
cp src/chunks/a src/chunks/a2
# three copies of a file of one partial chunk
head -c 10000 /dev/urandom >src/chunks/p1
cp src/chunks/p1 src/chunks/p2
cp src/chunks/p1 src/chunks/p3
# a, then a again from a chunk boundary (65536 * 16): its chunks repeat.
{ cat src/chunks/a; head -c $((1048576 - 1000000)) /dev/zero; cat src/chunks/a; } >src/chunks/twice
dd if=/dev/zero of=src/chunks/zeros bs=65536 count=40 status=none
head -c 100 /dev/urandom >src/chunks/small
# data, four chunks' worth of zeros, data, zeros to the end
{ head -c 70000 /dev/urandom; head -c 262144 /dev/zero; head -c 5000 /dev/urandom
  head -c 200000 /dev/zero; } >src/chunks/gappy
# xattrs before the chunk table: -Eforce-chunk-indexes aligns it to 8
setfattr -n user.note -v chunked src/chunks/sub/a-copy
manifest src tree.json

# extents IMAGE PATH: "logical kind physical" per extent, from dump --json.
extents() {
	"$E" dump --json --path "$2" "$1" >extent.json || fail "dump $2 of $1"
	python3 -c '
import json, sys
d = json.load(open("extent.json"))
print(d["layout"])
for e in d["extents"]:
    print(e["logical"], e["kind"], e.get("physical", "-"))' || fail "dump --json $2 of $1"
}

# check NAME MKFS_OPTION...: build from src, then the kernel, our fsck
# and extraction agree with the tree.
check() {
	local name=$1
	shift
	"$E" mkfs -q "$@" "$name.img" src 2>err.txt || fail "mkfs $*: $(cat err.txt)"
	"$E" fsck -q "$name.img" || fail "mkfs $*: our fsck finds the image unclean"
	kernel_check "$name.img" tree.json "mkfs $*"
}

note "--chunksize 65536: the kernel reads the tree back, fsck.erofs 1.5 takes it"
check c64k --chunksize 65536
fsck.erofs c64k.img >fsck.txt 2>&1 || fail "fsck.erofs 1.5 refuses the --chunksize image: $(cat fsck.txt)"
extract_check c64k.img tree.json "--chunksize 65536"

note "equal chunks stored once, zeros are holes, new files flat, small files inline"
# a's chunks are all new: it is stored flat, its tail after its inode.
extents c64k.img /chunks/a >a.ext
[ "$(head -1 a.ext)" = "flat inline" ] || fail "a file of new chunks is $(head -1 a.ext), not flat"
start=$(awk 'NR == 2 { print $3 }' a.ext)
# Its copy, and twice's second half, point at a's blocks chunk by chunk
# (15 whole chunks); their last, partial chunk (a's is inline) once.
extents c64k.img /chunks/sub/a-copy >copy.ext
[ "$(head -1 copy.ext)" = "chunk based" ] || fail "a's copy is $(head -1 copy.ext)"
extents c64k.img /chunks/twice >twice.ext
for i in $(seq 0 14); do echo $((start + i * 65536)); done >a.phys
awk 'NR > 1 && NR <= 16 { print $3 }' copy.ext >copy.phys
diff a.phys copy.phys >&2 || fail "a copy's chunks are not a's blocks (left: a's)"
awk 'NR > 1 && $1 >= 1048576 { print $3 }' twice.ext >twice.phys
[ "$(wc -l <twice.phys)" = 16 ] || fail "twice's second half is not 16 chunks: $(cat twice.ext)"
head -15 twice.phys | diff a.phys - >&2 || fail "twice's second half is stored again (left: a's)"
[ "$(tail -1 twice.phys)" = "$(awk 'NR == 17 { print $3 }' copy.ext)" ] ||
	fail "the partial last chunk of a's copy and of twice is stored twice"
# p1 is flat, its tail inline, so its chunk is not one to point at; p2
# stores it (flat too, all its chunks new); p3 points at p2's.
for p in p1 p2 p3; do extents c64k.img /chunks/$p >$p.ext; done
[ "$(head -1 p1.ext)" = "flat inline" ] || fail "p1 is $(head -1 p1.ext)"
[ "$(head -1 p2.ext)" = "flat plain" ] || fail "p2 is $(head -1 p2.ext), not flat with its chunk whole"
[ "$(head -1 p3.ext)" = "chunk based" ] || fail "p3 is $(head -1 p3.ext)"
[ "$(awk 'NR == 2 { print $3 }' p2.ext)" = "$(awk 'NR == 2 { print $3 }' p3.ext)" ] ||
	fail "p3's chunk is not p2's blocks: $(cat p2.ext p3.ext)"
extents c64k.img /chunks/zeros >zeros.ext
[ "$(awk 'NR > 1 { print $2 }' zeros.ext | sort -u)" = hole ] ||
	fail "a file of zeros takes blocks: $(cat zeros.ext)"
extents c64k.img /chunks/small >small.ext
[ "$(head -1 small.ext)" = "flat inline" ] || fail "a 100-byte file is $(head -1 small.ext)"

note "holes: erofskit mount seeks over them as the kernel's mount does"
# SEEK_DATA and SEEK_HOLE from every extent boundary, a byte either side,
# the last byte, the end and past it: the same answers (offsets or errno)
# for every regular file.
kmount c64k.img km
fmount c64k.img fm
python3 - km fm <<'PY' || fail "SEEK_DATA/SEEK_HOLE through erofskit mount differ from the kernel's"
import errno, os, sys

def seek(fd, off, whence):
    try:
        return os.lseek(fd, off, whence)
    except OSError as e:
        return errno.errorcode[e.errno]

def answers(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        probes = {0, max(size - 1, 0), size, size + 1}
        off = 0
        while off < size:   # the kernel's own extents give the probes
            data = seek(fd, off, os.SEEK_DATA)
            if not isinstance(data, int):
                break
            off = seek(fd, data, os.SEEK_HOLE)
            probes |= {data - 1, data, data + 1, off - 1, off, off + 1}
        return [(p, seek(fd, p, os.SEEK_DATA), seek(fd, p, os.SEEK_HOLE))
                for p in sorted(x for x in probes if x >= 0)]
    finally:
        os.close(fd)

kroot, froot = sys.argv[1:]
files = holey = 0
for d, _, names in os.walk(kroot):
    for name in names:
        k = os.path.join(d, name)
        if os.path.islink(k) or not os.path.isfile(k):
            continue
        rel = os.path.relpath(k, kroot)
        want = answers(k)
        got = answers(os.path.join(froot, rel))
        if got != want:
            print("%s: kernel %s, erofskit mount %s" % (rel, want, got))
            sys.exit(1)
        files += 1
        size = os.path.getsize(k)
        holey += any(isinstance(h, int) and h < size for _, _, h in want)
print("%d files, %d with holes" % (files, holey))
sys.exit(0 if holey >= 2 else 1)   # chunks/zeros and chunks/gappy at least
PY
fumount fm
kumount km

note "-E^dedupe: every chunk stored; the image grows by the copies"
check nodedupe --chunksize 65536 -E^dedupe
extents nodedupe.img /chunks/sub/a-copy >copy2.ext
[ "$(head -1 copy2.ext)" = "flat inline" ] || fail "-E^dedupe: a's copy is $(head -1 copy2.ext), not flat"
grew=$(($(stat -c %s nodedupe.img) - $(stat -c %s c64k.img)))
[ "$grew" -ge 2000000 ] || fail "-E^dedupe grew the image by only $grew bytes (two copies of 1 MB)"

note "4 KiB chunks: smaller than the flat image, and than mkfs.erofs 1.5's"
check c4k --chunksize 4096
fsck.erofs c4k.img >fsck.txt 2>&1 || fail "fsck.erofs 1.5 refuses the 4 KiB chunk image: $(cat fsck.txt)"
"$E" mkfs -q flat.img src
[ "$(stat -c %s c4k.img)" -lt "$(stat -c %s flat.img)" ] ||
	fail "--chunksize 4096: $(stat -c %s c4k.img) bytes, flat $(stat -c %s flat.img)"
# mkfs.erofs 1.5 fails on the whole fixture tree with --chunksize ("Could
# not format the device"): the files made here are its part that counts.
"$E" mkfs -q --chunksize 4096 ours.img src/chunks
mkfs.erofs --chunksize=4096 theirs.img src/chunks >/dev/null 2>&1 ||
	fail "mkfs.erofs --chunksize=4096 failed"
[ "$(stat -c %s ours.img)" -le "$(stat -c %s theirs.img)" ] ||
	fail "--chunksize 4096: $(stat -c %s ours.img) bytes, mkfs.erofs $(stat -c %s theirs.img)"

note "mkfs.erofs 1.5's chunked image reads back through erofskit"
manifest src/chunks chunks.json
"$E" fsck -q theirs.img || fail "our fsck finds mkfs.erofs's chunked image unclean"
extract_check theirs.img chunks.json "mkfs.erofs --chunksize=4096"

note "chunks larger than erofskit's copy buffer (4 MiB): the same rules"
check big --chunksize 4M
extents big.img /chunks/a >biga.ext
extents big.img /chunks/sub/a-copy >bigcopy.ext
diff biga.ext bigcopy.ext >&2 || fail "--chunksize 4M: a copy's chunk is not a's (left: a)"
[ "$(head -1 biga.ext)" = "chunk based" ] || fail "--chunksize 4M: a is $(head -1 biga.ext)"
extents big.img /chunks/zeros >bigzeros.ext
[ "$(awk 'NR > 1 { print $2 }' bigzeros.ext | sort -u)" = hole ] ||
	fail "--chunksize 4M: a file of zeros takes blocks: $(cat bigzeros.ext)"

# chunk_format IMAGE PATH: the chunk format (i_u's low 16 bits) in hex.
chunk_format() {
	"$E" dump --json --path "$2" "$1" >inode.json || fail "dump $2 of $1"
	python3 - "$1" <<'PY'
import json, struct, sys
d = json.load(open("inode.json"))
with open(sys.argv[1], "rb") as f:
    f.seek(d["inode_offset"] + 16)
    print("%#x" % struct.unpack("<H", f.read(2))[0])
PY
}

note "-Eforce-chunk-indexes: 8-byte indexes, as mkfs.erofs 1.5 writes them"
check idx --chunksize 8192 -Eforce-chunk-indexes
fsck.erofs idx.img >fsck.txt 2>&1 || fail "fsck.erofs 1.5 refuses chunk indexes: $(cat fsck.txt)"
mkfs.erofs --chunksize=8192 -Eforce-chunk-indexes theirs-idx.img src/chunks >/dev/null 2>&1 ||
	fail "mkfs.erofs -Eforce-chunk-indexes failed"
want=$(chunk_format theirs-idx.img /a)
[ "$want" = 0x21 ] || fail "mkfs.erofs's chunk format at 8 KiB with indexes: $want (the oracle changed?)"
for p in /chunks/sub/a-copy /chunks/twice; do
	got=$(chunk_format idx.img $p)
	[ "$got" = "$want" ] || fail "-Eforce-chunk-indexes: $p has chunk format $got, mkfs.erofs $want"
done
[ "$(chunk_format c64k.img /chunks/twice)" = 0x4 ] || fail "the default is not a block map of 64 KiB chunks"
"$E" mkfs -q --chunksize 65536 -Eforce-chunk-indexes,force-inode-blockmap undone.img src
cmp undone.img c64k.img || fail "-Eforce-inode-blockmap did not undo -Eforce-chunk-indexes"

note "512-byte blocks, and chunks beside compression"
check c512 -b 512 --chunksize 512
check zchunks -zlz4hc -E^fragments --chunksize 8192 --workers 2
# a does not compress: it is stored as it is, flat; a2, its copy right
# after it, is stored chunk-based over a's blocks.
extents zchunks.img /chunks/a >za.ext
extents zchunks.img /chunks/a2 >za2.ext
[ "$(head -1 za2.ext)" = "chunk based" ] ||
	fail "-zlz4hc --chunksize: a's copy a2 is $(head -1 za2.ext), not chunk-based"
[ "$(awk 'NR == 2 { print $3 }' za.ext)" = "$(awk 'NR == 2 { print $3 }' za2.ext)" ] ||
	fail "-zlz4hc --chunksize: a2's chunks are not a's blocks"
"$E" mkfs -q -zlz4hc -E^fragments --chunksize 8192 --workers 1 one.img src
cmp one.img zchunks.img || fail "--workers 1 and 2 give different images"

note "the drop-in name: the same image"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet --chunksize=65536 drop.img src ||
	fail "mkfs.erofs (drop-in) --chunksize failed"
cmp drop.img c64k.img || fail "the drop-in's --chunksize image differs"

note "bad chunk sizes are refused"
for bad in 3000 2048 0 4G x; do
	expect_exit 2 "$E" mkfs -q --chunksize "$bad" bad.img src 2>err.txt
	grep -q "chunk size" err.txt || fail "--chunksize $bad: $(cat err.txt)"
done
[ ! -e bad.img ] || fail "a refused build left an image"
tar -C src/chunks -cf small.tar small
expect_exit 2 "$E" mkfs -q --tar=i -b 512 --chunksize 4096 bad.img small.tar 2>err.txt
grep -q "tar=i.*chunk size" err.txt || fail "--tar=i --chunksize: $(cat err.txt)"

note "a tar source: the same files, the same bytes from a pipe"
# (last: a tar holds no socket, so the tree loses its one)
rm src/special/socket
manifest src tree.json
tar --format=posix --xattrs --acls -C src -cf src.tar .
"$E" mkfs -q --tar --chunksize 16384 tar.img src.tar || fail "mkfs --tar --chunksize failed"
"$E" fsck -q tar.img || fail "the tar's chunked image is not clean"
kernel_check tar.img tree.json "mkfs --tar --chunksize 16384"
"$E" mkfs -q --tar --chunksize 16384 pipe.img - <src.tar || fail "mkfs --tar - --chunksize failed"
cmp tar.img pipe.img || fail "a tar from a pipe gives other bytes"
