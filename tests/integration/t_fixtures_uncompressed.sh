# Upstream images (mkfs.erofs 1.9.3) without compression: every fixture
# image is intact (sha256 from INDEX.md), erofskit fsck --extract accepts
# it, and the extracted tree equals the kernel's view recorded beside the
# image, field by field.
. "$(dirname "$0")/lib.sh"

IMAGES=$FIXTURES/images
for name in plain-4k plain-512 chunked-64k; do
	note "$name"
	img=$IMAGES/$name.img
	[ -f "$img" ] || fail "fixture $img is missing"
	want=$(awk -F'|' -v n="$name" '$2 ~ "^ *" n " *$" { gsub(/[ `]/, "", $5); print $5 }' "$IMAGES/INDEX.md")
	[[ $want =~ ^[0-9a-f]{64}$ ]] || fail "no sha256 for $name in INDEX.md (got '$want')"
	got=$(sha256sum "$img" | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "fixture $name.img is damaged: sha256 $got, INDEX.md says $want"

	"$EROFSKIT" fsck -q --extract "$T/$name" "$img" || fail "erofskit fsck --extract failed on $name"
	tree_is "$T/$name" "$IMAGES/$name.manifest.json" "erofskit extraction of $name vs kernel view"
	if [ $name = chunked-64k ]; then
		# The null chunks of the 5 GiB file stay holes when extracted.
		kb=$(du -sk "$T/$name" | cut -f1)
		[ "$kb" -lt 65536 ] || fail "extracting $name took $kb KiB of disk: the sparse file was filled in"
	fi
	rm -rf "$T/$name"
done
echo PASS
