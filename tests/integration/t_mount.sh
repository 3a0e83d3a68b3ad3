# erofskit mount shows exactly the tree: every algorithm at several cluster
# sizes, both I/O back ends, every decoder, and every fixture image made by
# upstream.
. "$(dirname "$0")/lib.sh"

make_compact_tree "$T/src" "$T/src.json"
check_mount() {   # image expected what options
	fmount "$1" "$T/m" "$4"
	tree_is "$T/m" "$2" "FUSE view of $3 ($4)"
	fumount "$T/m"
}
# The third word, when there is one, chooses the decoders (engine= once
# per algorithm); the default decoders are in the other rows.
for spec in "lz4 -C4096" "lz4hc -C65536" "deflate -C16384" \
	    "deflate -C262144 engine=isal" "deflate -C65536 engine=zlib,engine=liblzma" \
	    "zstd -C131072" "lzma -C65536" "lzma -C1048576 engine=liblzma,engine=isal"; do
	set -- $spec
	note "$spec"
	"$EROFSKIT" mkfs -q -z$1 $2 "$T/img" "$T/src"
	check_mount "$T/img" "$T/src.json" "$spec" "io=pread${3:+,$3}"
	[ "${EROFSKIT_SANITIZED:-0}" = 1 ] && continue   # uring: once below
	check_mount "$T/img" "$T/src.json" "$spec" "io=uring,cache=8M${3:+,$3}"
done
note "uncompressed, -b 512"
"$EROFSKIT" mkfs -q -b 512 "$T/img" "$T/src"
check_mount "$T/img" "$T/src.json" "uncompressed 512" "io=uring"
for img in "$FIXTURES"/images/*.img; do
	name=$(basename "$img" .img)
	note "fixture $name"
	check_mount "$img" "$FIXTURES/images/$name.manifest.json" "fixture $name" "cache=32M"
done
echo PASS
