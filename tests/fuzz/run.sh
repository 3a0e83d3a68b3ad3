#!/bin/bash
# Run every fuzz target for SECONDS each on its seed corpus, FUZZ_JOBS
# (the number of processors by default) at a time.
#   run.sh BUILD_DIR [SECONDS]
# A crash, leak or sanitizer report fails the run, the reproducer saved as
# BUILD_DIR/findings/TARGET-crash-* (or -leak-*, -timeout-*).
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
corpus_of() {   # TARGET: the directory its seeds live in
	case $1 in
	fuzz_codec) echo "$corpus/codec" ;;
	fuzz_tar) echo "$corpus/tar" ;;
	fuzz_oci) echo "$corpus/oci" ;;
	fuzz_net) echo "$corpus/net" ;;
	fuzz_check | fuzz_extract) echo "$corpus/check" ;;
	*) echo "$corpus/image" ;;
	esac
}
# As many targets at once as there are processors: each fuzzer is one
# process on one core, and the run takes SECONDS per round, not per target.
jobs=${FUZZ_JOBS:-$(nproc)}
targets="fuzz_image fuzz_check fuzz_extract fuzz_codec fuzz_tar fuzz_oci fuzz_net fuzz_rebuild"
running=0
for target in $targets; do
	dir=$(corpus_of $target)
	echo "== $target: $seconds s on $(ls "$dir" | wc -l) seeds"
	rm -f "$build/findings/$target.rc"
	( rc=0
	  "$build/$target" -max_total_time="$seconds" -max_len=2097152 -timeout=30 \
		-rss_limit_mb=3072 -print_final_stats=1 \
		-artifact_prefix="$build/findings/$target-" \
		"$dir" > "$build/findings/$target.log" 2>&1 || rc=$?
	  echo $rc > "$build/findings/$target.rc" ) &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
done
wait
failed=0
for target in $targets; do
	echo "== $target"
	grep -E "^(stat::|#[0-9]+ *DONE|==[0-9]+==|SUMMARY|INFO: Running)" "$build/findings/$target.log" |
		grep -v "INFO: Running with" || true
	if compgen -G "$build/findings/$target-[clt]*-*" >/dev/null; then
		echo "FUZZ FAILURE in $target: reproducers in $build/findings/" >&2
		failed=1
		continue
	fi
	# A target that could not start (fuzz_extract without root, say)
	# leaves no reproducer; its exit status still fails the run.
	rc=$(cat "$build/findings/$target.rc" 2>/dev/null || echo "unknown")
	if [ "$rc" != 0 ]; then
		tail -n 5 "$build/findings/$target.log" >&2
		echo "FUZZ FAILURE in $target: exit status $rc (log: $build/findings/$target.log)" >&2
		failed=1
	fi
done
exit $failed
