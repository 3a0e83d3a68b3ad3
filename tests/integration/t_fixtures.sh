# Reading images erofskit did not write: every fixture image made by
# upstream mkfs.erofs 1.9.3 (every compressed layout: full and compact
# indexes, big pclusters, ztailpacking, fragments, dedupe, interlaced
# extents, 48-bit encoded extents, metabox, compressed directories, long
# xattr prefixes) must extract to exactly the manifest the kernel showed,
# and with every deflate engine for the deflate images, and both lzma
# decoders (ours and liblzma's) for the lzma images.
. "$(dirname "$0")/lib.sh"

IMAGES=$FIXTURES/images
count=0
for img in "$IMAGES"/*.img; do
	name=$(basename "$img" .img)
	engines=default
	case $name in
	*deflate*) engines="libdeflate isal zlib" ;;
	*lzma*) engines="builtin liblzma" ;;
	esac
	for engine in $engines; do
		note "$name ($engine)"
		out=$T/$name-$engine
		choice=(--engine "$engine")
		[ "$engine" = default ] && choice=()
		"$EROFSKIT" fsck -q "${choice[@]}" --extract "$out" "$img" ||
			fail "$name: fsck --extract failed with the $engine decoder"
		tree_is "$out" "$IMAGES/$name.manifest.json" "$name ($engine)"
		rm -rf "$out"
	done
	count=$((count + 1))
done
[ "$count" -ge 21 ] || fail "expected at least 21 fixture images, found $count"
echo PASS
