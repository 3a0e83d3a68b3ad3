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
	engines=EROFSKIT_ENGINE=libdeflate
	case $name in
	*deflate*) engines="EROFSKIT_ENGINE=libdeflate EROFSKIT_ENGINE=isal EROFSKIT_ENGINE=zlib" ;;
	*lzma*) engines="EROFSKIT_LZMA_ENGINE=builtin EROFSKIT_LZMA_ENGINE=liblzma" ;;
	esac
	for engine in $engines; do
		note "$name ($engine)"
		out=$T/$name-${engine#*=}
		env "$engine" "$EROFSKIT" fsck -q --extract "$out" "$img" ||
			fail "$name: fsck --extract failed with $engine"
		manifest "$out" "$out.json"
		same_manifest "$IMAGES/$name.manifest.json" "$out.json" "$name ($engine)"
		rm -rf "$out"
	done
	count=$((count + 1))
done
[ "$count" -ge 21 ] || fail "expected at least 21 fixture images, found $count"
echo PASS
