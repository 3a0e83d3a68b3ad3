# Every algorithm at every cluster size from 4 KiB to 1 MiB, and a few
# levels: build the generated tree, mount it with the kernel, compare the
# whole manifest; erofskit fsck --extract agrees too.  Then 512-byte blocks.
. "$(dirname "$0")/lib.sh"

make_compact_tree "$T/src" "$T/src.json"

build_and_check() {   # label, extract?, mkfs options...
	local label=$1 extract=$2
	shift 2
	note "$label"
	"$EROFSKIT" mkfs -q "$@" "$T/img" "$T/src" || fail "mkfs $label"
	"$EROFSKIT" fsck -q "$T/img" || fail "fsck $label"
	kernel_check "$T/img" "$T/src.json" "$label"
	[ "$extract" = yes ] && extract_check "$T/img" "$T/src.json" "$label"
	return 0
}

for alg in lz4 lz4hc deflate zstd lzma; do
	for C in $(normal_or_sanitized "4096 16384 65536 131072 262144 1048576" "4096 65536 1048576"); do
		x=no
		[ $C = 65536 ] && x=yes
		build_and_check "$alg -C$C" $x -z$alg -C$C
	done
done
# Levels at one cluster size.
for spec in $(normal_or_sanitized "lz4hc,1 lz4hc,12 deflate,level=1 deflate,9 zstd,1 zstd,19 lzma,0 lzma,9 lzma,109" "lz4hc,12 deflate,9 zstd,19 lzma,109"); do
	build_and_check "$spec -C65536" no -z$spec -C65536
done
# 512-byte blocks (sub-page blocks: the kernel here mounts them).
for alg in lz4 lz4hc deflate zstd lzma; do
	for C in $(normal_or_sanitized "512 4096 65536" "512 65536"); do
		build_and_check "$alg -b512 -C$C" no -b 512 -z$alg -C$C
	done
done
echo PASS
