# The space-saving layouts erofskit writes (tail packing, fragments in the
# packed inode, dedupe) for every algorithm, at one-block and 1 MiB
# clusters, with 4096- and 512-byte blocks: the kernel mounts each image
# and shows exactly the source tree; erofskit fsck finds it clean;
# Debian's fsck.erofs 1.5 checks the lz4/lz4hc images it can read (tail
# packing, no fragments); and one worker or three (in turn) make the
# bytes of the default number.
. "$(dirname "$0")/lib.sh"

make_compact_tree "$T/src" "$T/base.json"
# What dedupe and fragments work on: copies of whole files, files that
# share a prefix or a tail, zeros, files whose tails are one fragment,
# and an incompressible file among compressible ones.
python3 - "$T/src/dedupe" <<'PY'
import os, random, sys
root = sys.argv[1]
os.makedirs(root)
r = random.Random(17)
words = [bytes(r.choice(b"abcdefghijklmnop") for _ in range(r.randint(2, 9))) for _ in range(300)]
def text(n):
    out = bytearray()
    while len(out) < n:
        out += r.choice(words) + b" "
    return bytes(out[:n])
big = text(700000)
for name in ("copy-a", "copy-b", "sub/copy-c"):
    os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
    open(os.path.join(root, name), "wb").write(big)
open(os.path.join(root, "prefix"), "wb").write(big[:400000] + text(9000))
open(os.path.join(root, "tail-1"), "wb").write(text(150000) + big[-30000:])
open(os.path.join(root, "tail-2"), "wb").write(text(70000) + big[-30000:])
open(os.path.join(root, "zeros"), "wb").write(bytes(3000000))
open(os.path.join(root, "random"), "wb").write(os.urandom(200000))
open(os.path.join(root, "random-copy"), "wb").write(open(os.path.join(root, "random"), "rb").read())
for i in range(30):
    open(os.path.join(root, "small-%02d" % i), "wb").write(text(100 + 700 * i))
# Whole fragments over 1 MiB are read piece by piece as they commit: one
# and its copy, a twin of its size that differs in its last byte, one
# that does not compress, and one whose first MiB does not but whose end
# does (judged on all of it, as a file held whole is).
os.makedirs(os.path.join(root, "large"))
large = text(1300000)
for name, data in (("text", large), ("text-copy", large),
                   ("text-twin", large[:-1] + b"!"),
                   ("random", os.urandom(1100000)),
                   ("random-then-text", os.urandom(1 << 20) + text(100000))):
    open(os.path.join(root, "large", name), "wb").write(data)
PY
manifest "$T/src" "$T/src.json"

# Every layout and combination with 4 KiB blocks; a few with 512-byte ones.
all="-Eztailpacking,^dedupe -Efragments,^dedupe -Eall-fragments -Efragments,dedupe -Eztailpacking,dedupe -Eall-fragments=16384,fragdedupe=inode -Efragments,^fragdedupe"
some="-Eztailpacking,dedupe -Eall-fragments=16384,fragdedupe=inode -Efragments,dedupe"

# The default image (a worker per processor) against one worker or
# three, in turn: each combination checked once, both counts over the
# matrix (both for each took a fifth of this test's time).
workers_turn=0
check() {   # label, workers-too?, mkfs options...
	local label=$1 workers=$2 w
	shift 2
	"$EROFSKIT" mkfs -q "$@" "$T/img" "$T/src" || fail "mkfs $label"
	"$EROFSKIT" fsck -q "$T/img" || fail "erofskit fsck of $label"
	kernel_check "$T/img" "$T/src.json" "$label"
	[ "$workers" = yes ] || return 0
	w=$((workers_turn % 2 ? 3 : 1)) workers_turn=$((workers_turn + 1))
	"$EROFSKIT" mkfs -q --workers $w "$@" "$T/imgw" "$T/src" || fail "mkfs --workers $w $label"
	cmp -s "$T/img" "$T/imgw" || fail "$label: --workers $w makes another image"
}

for bs in 4096 512; do
	# The largest cluster a block size allows (2047 blocks of 512 bytes).
	big=1048576 layouts=$(normal_or_sanitized "$all" "$some")
	[ $bs = 512 ] && layouts=$some
	for alg in lz4 lz4hc deflate zstd lzma; do
		# Linux takes lz4 clusters of 256 blocks at most.
		[ $bs = 512 ] && case $alg in lz4*) big=131072 ;; *) big=524288 ;; esac
		for C in $bs $big; do
			for layout in $layouts; do
				# lzma at its default level took three quarters of
				# this test's time, and a layout does not depend on
				# the level (only the match finder does): level 1
				# here; t_compress_kernel builds the default level
				# with the default layouts at every cluster size.
				spec=$alg
				[ $alg = lzma ] && spec=lzma,1
				label="$spec -b$bs -C$C $layout"
				note "$label"
				# Same bytes for any number of workers: checked at the
				# large clusters, where segments hold several.
				check "$label" $([ $C = $big ] && echo yes || echo no) \
					-b $bs -z$spec -C$C $layout
				# Debian's 1.5 knows tail packing, not fragments or
				# dedupe, and only 4 KiB blocks.
				case $bs,$alg,$layout in
				4096,lz4*,-Eztailpacking,^dedupe)
					fsck.erofs "$T/img" >"$T/fsck.out" 2>&1 ||
						{ cat "$T/fsck.out" >&2; fail "fsck.erofs 1.5 rejects $label"; } ;;
				esac
			done
		done
	done
done

note "uncompressed, with dedupe: copies share their blocks"
check "-Ededupe" yes -Ededupe
plain=$(stat -c %s "$T/img")
"$EROFSKIT" mkfs -q "$T/img-plain" "$T/src" || fail "mkfs without dedupe"
[ "$plain" -lt "$(stat -c %s "$T/img-plain")" ] || fail "dedupe saved nothing on copies"

note "-Eall-fragments: the packed inode holds one copy of files alike"
# copy-a, copy-b and sub/copy-c are alike (700,000 bytes each), so two
# of them add nothing, nor does large/text-copy (1,300,000 bytes, read
# in pieces); the kernel check above shows every file's bytes.
"$EROFSKIT" mkfs --json -zlz4 -Eall-fragments "$T/img" "$T/src" >"$T/af.json" ||
	fail "mkfs -Eall-fragments --json"
python3 - "$T/af.json" "$T/src" <<'PY' || fail "-Eall-fragments stored copies of a file twice"
import json, os, sys
packed = json.load(open(sys.argv[1]))["layouts"]["packed_bytes"]
total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(sys.argv[2])
            for f in fs if os.path.isfile(os.path.join(d, f)) and not os.path.islink(os.path.join(d, f)))
print("packed %d bytes of %d" % (packed, total))
sys.exit(0 if 0 < packed <= total - 2 * 700000 - 1300000 else 1)
PY

note "-E48bit: compact inodes keep mtimes of their own"
# Files a second to decades apart (0 ns) take compact inodes; one with
# other nanoseconds and one more than 2^32 s after the earliest keep
# extended ones.  The kernel must show every mtime.
python3 - "$T/t48" <<'PY'
import os, sys
root = sys.argv[1]
os.makedirs(os.path.join(root, "d"))
base = 1000000000
for i in range(40):
    p = os.path.join(root, "d", "f%02d" % i)
    open(p, "wb").write(b"x" * (i * 300))
    t = (base + i * 86400 * 97 + i) * 10**9
    os.utime(p, ns=(t, t))
odd = {"nsec": (base + 5) * 10**9 + 123, "late": (base + 2**32 + 9) * 10**9}
for name, ns in odd.items():
    p = os.path.join(root, name)
    open(p, "wb").write(name.encode())
    os.utime(p, ns=(ns, ns))
for d in (os.path.join(root, "d"), root):
    os.utime(d, ns=(base * 10**9, base * 10**9))
PY
manifest "$T/t48" "$T/t48.json"
# Read off the image (a dump per file took a tenth of the sanitized
# test's time): bit 0 of a core's i_format, at meta_blkaddr's block plus
# 32 bytes a nid, tells an extended core from a compact one.
compact_count() {   # IMAGE: regular files of / and /d (the t48 tree) with a compact core
	"$EROFSKIT" dump --json "$1" >"$T/sb.json" &&
		"$EROFSKIT" dump --json --ls / "$1" >"$T/ls-root.json" &&
		"$EROFSKIT" dump --json --ls /d "$1" >"$T/ls-d.json" ||
		fail "dump of $1"
	python3 - "$1" "$T/sb.json" "$T/ls-root.json" "$T/ls-d.json" <<'PY'
import json, struct, sys
sb = json.load(open(sys.argv[2]))
n = 0
with open(sys.argv[1], "rb") as img:
    for ls in sys.argv[3:]:
        for e in json.load(open(ls)):
            if e["type"] != "regular":
                continue
            img.seek(sb["meta_blkaddr"] * sb["block_size"] + e["nid"] * 32)
            n += struct.unpack("<H", img.read(2))[0] & 1 == 0
print(n)
PY
}
for opts in "-zlz4hc -E48bit" "-E48bit"; do
	"$EROFSKIT" mkfs -q $opts "$T/img48" "$T/t48" || fail "mkfs $opts"
	"$EROFSKIT" fsck -q "$T/img48" || fail "erofskit fsck of $opts"
	"$EROFSKIT" dump "$T/img48" | grep -q "48bit" || fail "$opts: no 48bit feature"
	kernel_check "$T/img48" "$T/t48.json" "$opts"
	[ "$(compact_count "$T/img48")" = 40 ] ||
		fail "$opts: $(compact_count "$T/img48") compact files, expected the 40 of d/"
	"$EROFSKIT" mkfs -q --workers 1 $opts "$T/img48-1" "$T/t48" || fail "mkfs --workers 1 $opts"
	cmp -s "$T/img48" "$T/img48-1" || fail "$opts: the image depends on the number of workers"
	"$EROFSKIT" mkfs -q ${opts%-E48bit} "$T/img48-no" "$T/t48" || fail "mkfs $opts without -E48bit"
	[ "$(compact_count "$T/img48-no")" -le 1 ] ||
		fail "compact inodes with other mtimes without -E48bit ($opts)"
done

note "-E48bit: encoded extents where they are smaller than the lcluster index"
# h_advise of a compressed inode (not in a metabox): its map header is
# the 8 bytes after the core and xattrs, rounded up to 8.
advise_of() {   # IMAGE, dump selector (--nid N or --path P)
	"$EROFSKIT" dump --json "$2" "$3" "$1" | python3 -c '
import json, struct, sys
d = json.load(sys.stdin)
off = (d["inode_offset"] + (64 if d["extended"] else 32) + d["xattr_size"] + 7) // 8 * 8
with open(sys.argv[1], "rb") as f:
    f.seek(off + 4)
    print(struct.unpack("<H", f.read(2))[0])' "$1"
}
for alg in lz4hc deflate zstd lzma; do
	for layout in -Efragments,dedupe,48bit -Eall-fragments=1048576,48bit; do
		# lzma at level 1 here too (its default level took a tenth
		# of this test's time).
		spec=$alg
		[ $alg = lzma ] && spec=lzma,1
		label="$spec -C65536 $layout"
		note "$label"
		check "$label" yes -z$spec -C65536 $layout
		packed=$("$EROFSKIT" dump --json "$T/img" | python3 -c 'import json, sys; print(json.load(sys.stdin)["packed_nid"])')
		# EXTENTS (bit 0) with 16-byte records (bits 1-2: 2).
		[ $(( $(advise_of "$T/img" --nid "$packed") & 7 )) = 5 ] ||
			fail "$label: the packed inode has no 16-byte encoded extents"
		case $layout in
		-Efragments*)
			# Text of several 64 KiB pclusters, some with a fragment
			# tail (lzma: every last pcluster takes the rest whole).
			n=0
			for f in copy-a prefix tail-1; do
				a=$(advise_of "$T/img" --path /dedupe/$f)
				[ $((a & 7)) = 5 ] || fail "$label: /dedupe/$f: no encoded extents"
				[ $((a & 0x20)) = 0 ] || n=$((n + 1))
			done
			[ $n -gt 0 ] || [ $alg = lzma ] ||
				fail "$label: no encoded extents with a fragment tail" ;;
		esac
	done
done

note "-m: inodes in a compressed metabox (Linux 6.17+)"
# Every algorithm, both block sizes, metabox clusters of one block and
# of many, beside each layout whose bytes may live in a record (inline
# tails, compressed tails after the inode, the packed inode's index).
i=0
for bs in 4096 512; do
	for alg in lz4 lz4hc deflate zstd lzma; do
		set -- "-Eztailpacking,dedupe" "-Efragments" "-Eall-fragments=16384" "-Enoinline_data"
		shift $((i % 4))
		layout=$1 i=$((i + 1))
		m=$bs
		[ $((i % 2)) = 0 ] && m=$([ $bs = 512 ] && echo 65536 || echo 1048576)
		label="$alg -b$bs -m$m $layout"
		note "$label"
		check "$label" $([ $alg = zstd ] && echo yes || echo no) -b $bs -z$alg -C16384 -m$m $layout
		"$EROFSKIT" dump "$T/img" >"$T/sb" || fail "dump of $label"
		grep -q "metabox" "$T/sb" && grep -q "48bit" "$T/sb" ||
			fail "$label: no metabox or 48bit feature"
	done
done
"$EROFSKIT" mkfs -q -zlzma,1 -C65536 -Efragments "$T/img-plain" "$T/src" || fail "mkfs without -m"
"$EROFSKIT" mkfs -q -zlzma,1 -C65536 -Efragments -m65536 "$T/img-mb" "$T/src" || fail "mkfs -m65536"
[ "$(stat -c %s "$T/img-mb")" -lt "$(stat -c %s "$T/img-plain")" ] ||
	fail "the metabox saved nothing"
note "-m: the records of identical files lie together in the metabox"
# Incompressible files stay uncompressed, their tails inline in their
# records: copies in 30 directories apart, placed together, let the
# metabox's compression store such a tail once.
python3 - "$T/copies" <<'PY'
import os, random, sys
root = sys.argv[1]
r = random.Random(5)
same = bytes(r.getrandbits(8) for _ in range(1500))
for i in range(30):
    d = os.path.join(root, "d%02d" % i)
    os.makedirs(d)
    for name, data in (("filler", os.urandom(3000)), ("same", same), ("unique", os.urandom(6000))):
        open(os.path.join(d, name), "wb").write(data)
PY
manifest "$T/copies" "$T/copies.json"
"$EROFSKIT" mkfs -q -zlz4hc -m4096 "$T/img" "$T/copies" || fail "mkfs -m4096 of the copies"
kernel_check "$T/img" "$T/copies.json" "copies in a metabox"
nids=$(for i in $(seq -w 0 29); do
	"$EROFSKIT" dump --json --path "/d$i/same" "$T/img" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["nid"] & (2**63 - 1))'
done | sort -n)
# 30 records of 1,532 bytes, two to a block: together they span some 46
# KB; spread over the tree, five times that.
[ $(( ($(echo "$nids" | tail -1) - $(echo "$nids" | head -1)) * 32 )) -lt $((2 * 30 * 1532)) ] ||
	fail "the copies' records are not together: nids $(echo $nids)"

note "-m refuses what it cannot do, by name"
for bad in "-m4096" "-zlz4 -m3000" "-zlz4 -m2M" "-zlz4 -m4096:zstd" \
	   "-zlz4hc,9 -m4096:lz4hc,12" "-zlz4 -m4096:nope"; do
	expect_exit 2 "$EROFSKIT" mkfs -q $bad "$T/x.img" "$T/src"
	"$EROFSKIT" mkfs -q $bad "$T/x.img" "$T/src" 2>"$T/err" || true
	grep -q -- "-m\|metabox" "$T/err" || { cat "$T/err" >&2; fail "mkfs $bad: the error names neither -m nor the metabox"; }
	[ ! -e "$T/x.img" ] || fail "mkfs $bad left an image"
done
"$EROFSKIT" mkfs -q -zlz4hc,9 -m4096:lz4hc "$T/x.img" "$T/src" || fail "-m naming -z's algorithm again"
rm -f "$T/x.img"

note "-Edot-omitted: no \".\" stored; the kernel and erofskit's readers list one, last"
for opts in "-Edot-omitted" "-zlz4hc -Edot-omitted -m4096" \
	    "-b 512 -zzstd -Efragments,dot-omitted"; do
	label="dot-omitted ($opts)"
	check "$label" no $opts
	"$EROFSKIT" dump "$T/img" | grep -q "48bit" || fail "$label: no 48bit feature"
	for d in / /dedupe /dedupe/sub; do
		"$EROFSKIT" dump --path $d "$T/img" | grep -q '"\." not stored' ||
			fail "$label: $d stores its \".\""
	done
	"$EROFSKIT" dump --path /dedupe/. "$T/img" | grep -q "^Type: *directory" ||
		fail "$label: /dedupe/. does not resolve"
	kmount "$T/img" "$T/dots"
	ls -f "$T/dots/dedupe" >"$T/kernel.ls"
	kumount "$T/dots"
	"$EROFSKIT" dump --ls /dedupe "$T/img" | awk '{ print $NF }' >"$T/ours.ls"
	[ "$(tail -n 1 "$T/kernel.ls")" = . ] || fail "$label: the kernel lists . elsewhere"
	diff "$T/kernel.ls" "$T/ours.ls" >&2 || fail "$label: erofskit lists another order"
done

note "the layouts need a compressor, and bad -E options name themselves"
expect_exit 2 "$EROFSKIT" mkfs -q -b 512 -zlz4 -C262144 "$T/x.img" "$T/src"
expect_exit 2 "$EROFSKIT" mkfs -q -Efragments "$T/x.img" "$T/src"
expect_exit 2 "$EROFSKIT" mkfs -q -zlz4 -Ebogus "$T/x.img" "$T/src"
"$EROFSKIT" mkfs -q -zlz4 -Ebogus "$T/x.img" "$T/src" 2>"$T/err" || true
grep -q "Ebogus" "$T/err" || fail "an unknown -E option is not named"
[ ! -e "$T/x.img" ] || fail "a refused mkfs left an image"
echo PASS
