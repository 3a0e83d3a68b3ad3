# mkfs option combinations no other test lists, drawn from a fixed seed
# (the same ones every run): block size, algorithm, cluster size, any
# subset of the -E layouts, a metabox, sparse chunks off, 1-3 workers;
# from the directory, from a GNU tar of it, or indexing that tar (--tar=i).
# Each image must mount with the kernel and show exactly the source tree,
# pass erofskit fsck and extract to the same tree, and (every third) read
# the same through erofskit mount.  Draws of this kind found two --tar
# bugs: ACL entries that name their user, and pax times before 1970.
. "$(dirname "$0")/lib.sh"

make_compact_tree "$T/src" "$T/base.json"
rm -f "$T/src/special/socket"   # tar leaves sockets out
# What dedupe and fragments work on: copies, shared tails, zeros, noise.
PYTHONPATH="$HERE" python3 - "$T/src/more" <<'PY'
import os, random, sys
from wordtext import text, words
root = sys.argv[1]
os.makedirs(os.path.join(root, "sub"))
r = random.Random(29)
vocabulary = words(r, 300)
big = text(r, vocabulary, 400000)
for name in ("copy-a", "sub/copy-b"):
    open(os.path.join(root, name), "wb").write(big)
open(os.path.join(root, "tail"), "wb").write(text(r, vocabulary, 50000) + big[-20000:])
open(os.path.join(root, "zeros"), "wb").write(bytes(1 << 20))
open(os.path.join(root, "noise"), "wb").write(r.randbytes(100000))
for i in range(20):
    open(os.path.join(root, "small-%02d" % i), "wb").write(text(r, vocabulary, 90 + 400 * i))
PY
manifest "$T/src" "$T/src.json"
tar --format=posix --xattrs --xattrs-include='*' --acls -cf "$T/src.tar" -C "$T/src" . ||
	fail "GNU tar of the tree"

# One draw a line: SOURCE OPTIONS..., where SOURCE is dir, tar or index.
# MKFS_RANDOM_SEED and MKFS_RANDOM_DRAWS draw others, for a longer hunt
# by hand (the suite's are fixed).
python3 - "${MKFS_RANDOM_DRAWS:-$(normal_or_sanitized 14 5)}" "${MKFS_RANDOM_SEED:-5}" \
	>"$T/draws" <<'PY'
import random, sys
r = random.Random(int(sys.argv[2]))
for _ in range(int(sys.argv[1])):
    bs = r.choice([512, 1024, 2048, 4096, 4096, 4096])
    source = r.choice(["dir", "dir", "tar", "index"])
    opts = []
    if source == "index":
        opts += [o for o in ("-E48bit", "-Enoinline_data", "-Ededupe", "-Edot-omitted")
                 if r.random() < 0.5]
    else:
        opts += ["-b", str(bs)]
        alg = r.choice(["none", "lz4", "lz4hc", "deflate", "zstd", "lzma"])
        if alg == "none":
            opts += [o for o in ("-Ededupe", "-Enoinline_data", "-E48bit", "-Edot-omitted")
                     if r.random() < 0.4]
        else:
            # Linux takes lz4 clusters of 256 blocks at most; small blocks
            # fewer than 1 MiB's worth
            most = min(1 << 20, 256 * bs if alg.startswith("lz4") else 1023 * bs)
            cluster = bs * r.choice([1, 1, 2, 4, 16, most // bs, r.randint(1, most // bs)])
            opts += ["-z" + alg, "-C", str(cluster)]
            layouts = [o for o in ("ztailpacking", "fragments", "all-fragments", "dedupe",
                                   "fragdedupe=" + r.choice(["inode", "full", "off"]),
                                   "noinline_data", "48bit",
                                   "fragments=%d" % (bs * r.randint(1, 8)), "dot-omitted")
                       if r.random() < 0.33]
            if layouts:
                opts.append("-E" + ",".join(layouts))
            if r.random() < 0.2:
                opts += ["-m", str(bs * r.randint(1, 4))]
        if r.random() < 0.25:
            opts.append("--no-sparse-chunks")
        if r.random() < 0.25:
            opts += ["--chunksize", str(bs << r.randint(0, 6))]
    if r.random() < 0.33:
        opts += ["--workers", str(r.randint(1, 3))]
    print(source, *opts)
PY

n=0
while read -r source opts; do
	n=$((n + 1))
	label="$source $opts"
	note "$n: $label"
	# shellcheck disable=SC2086 # opts is several words
	case $source in
	dir) "$EROFSKIT" mkfs -q $opts "$T/img" "$T/src" ;;
	tar) "$EROFSKIT" mkfs -q --tar $opts "$T/img" "$T/src.tar" ;;
	index) "$EROFSKIT" mkfs -q --tar=i $opts "$T/index" "$T/src.tar" &&
		cat "$T/index" "$T/src.tar" >"$T/img" ;;
	esac || fail "mkfs: $label"
	"$EROFSKIT" fsck -q "$T/img" || fail "erofskit fsck: $label"
	kernel_check "$T/img" "$T/src.json" "$label"
	extract_check "$T/img" "$T/src.json" "$label"
	if [ $((n % 3)) = 0 ]; then
		fmount "$T/img" "$T/fm" "io=$([ $((n % 2)) = 0 ] && echo uring || echo pread)"
		manifest "$T/fm" "$T/fuse.json"
		fumount "$T/fm"
		same_manifest "$T/src.json" "$T/fuse.json" "erofskit mount of $label"
	fi
done <"$T/draws"
[ "$n" -gt 0 ] || fail "no draws"
echo PASS
