#!/bin/bash
# The main job on a built-in default: image this source tree, check it.
set -euo pipefail
tool=${1:-build/erofskit}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A copy without build output, so the image shows the project's sources.
tar -C "$src" --exclude=./build --exclude=./build-san --exclude=./build-fuzz \
    --exclude=./.git -cf - . | tar -C "$work" --one-top-level=tree -xf -
img=$work/erofskit-source.erofs

echo "== erofskit mkfs $img (source: this repository)"
"$tool" mkfs "$img" "$work/tree"
echo "== erofskit fsck $img"
"$tool" fsck "$img"
files=$(find "$work/tree" -type f | wc -l)
input=$(find "$work/tree" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')
image=$(stat -c %s "$img")
echo
echo "summary: $files files, $input input bytes, $image image bytes"
"$tool" dump "$img" | sed -n '1,4p'
