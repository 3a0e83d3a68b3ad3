#!/bin/bash
# Run every fuzz target for SECONDS each on its seed corpus.
#   run.sh BUILD_DIR [SECONDS]
# A crash, leak or sanitizer report stops the run with the reproducer
# saved as BUILD_DIR/crash-*.
set -euo pipefail
build=$1 seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
corpus=$build/corpus
# The seeds are made by the sanitized erofskit: undefined behaviour there
# stops the run as it does in the suite.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The upstream fixture images seed the corpus too: EROFSKIT_FIXTURES, or
# tests/fixtures/images.tar.xz unpacked into BUILD_DIR/fixtures.
fixtures=${EROFSKIT_FIXTURES:-}
if [ -z "$fixtures" ]; then
	fixtures=$build/fixtures
	if [ ! -d "$fixtures/images" ]; then
		rm -rf "$fixtures" "$fixtures.new"
		mkdir -p "$fixtures.new"
		tar -C "$fixtures.new" -xJf "$here/../fixtures/images.tar.xz"
		mv "$fixtures.new" "$fixtures"
	fi
fi
compgen -G "$fixtures/images/*.img" >/dev/null ||
	{ echo "no fixture images in $fixtures/images" >&2; exit 1; }
if [ ! -d "$corpus/net" ]; then
	bash "$here/make-seeds.sh" "$build/erofskit" "$corpus" "$fixtures/images"
fi
mkdir -p "$corpus/check" "$build/findings"
cp -n "$corpus"/image/* "$corpus/check/" 2>/dev/null || true
for target in fuzz_image fuzz_check fuzz_extract fuzz_codec fuzz_tar fuzz_oci fuzz_net; do
	case $target in
	fuzz_codec) dir=$corpus/codec ;;
	fuzz_tar) dir=$corpus/tar ;;
	fuzz_oci) dir=$corpus/oci ;;
	fuzz_net) dir=$corpus/net ;;
	fuzz_check | fuzz_extract) dir=$corpus/check ;;
	*) dir=$corpus/image ;;
	esac
	echo "== $target: $seconds s on $(ls "$dir" | wc -l) seeds"
	rc=0
	"$build/$target" -max_total_time="$seconds" -max_len=2097152 -timeout=30 \
		-rss_limit_mb=3072 -print_final_stats=1 -artifact_prefix="$build/findings/" \
		"$dir" > "$build/findings/$target.log" 2>&1 || rc=$?
	grep -E "^(stat::|#[0-9]+ *DONE|==[0-9]+==|SUMMARY|INFO: Running)" "$build/findings/$target.log" |
		grep -v "INFO: Running with" || true
	if ls "$build/findings/"crash-* "$build/findings/"leak-* "$build/findings/"timeout-* >/dev/null 2>&1; then
		echo "FUZZ FAILURE in $target: reproducers in $build/findings/" >&2
		exit 1
	fi
	# A target that could not start (fuzz_extract without root, say)
	# leaves no reproducer; its exit status still fails the run.
	if [ "$rc" != 0 ]; then
		tail -n 5 "$build/findings/$target.log" >&2
		echo "FUZZ FAILURE in $target: exit status $rc (log: $build/findings/$target.log)" >&2
		exit 1
	fi
done
