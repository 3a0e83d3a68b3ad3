# The fixture tree (build_fixture_tree in lib.sh: the tree the fixture
# images were made from, copied out of a kernel mount of chunked-64k and
# checked against manifest.json).
#   fixture_tree.sh make      into BUILD/fixture-tree, the CTest fixture of
#                             the tests that copy it (make_fixture_tree)
#   fixture_tree.sh remove    delete BUILD/fixture-tree when they are done
#   fixture_tree.sh copy DIR  a tree at DIR, to build a new fixture image from
# (as root, with EROFSKIT and EROFSKIT_BUILD or EROFSKIT_FIXTURES set).
. "$(dirname "$0")/lib.sh"

case ${1:-} in
make | remove)
	: "${EROFSKIT_BUILD:?EROFSKIT_BUILD must name the build directory}"
	rm -rf "$FIXTURE_TREE" "$FIXTURE_TREE.ok"
	if [ "$1" = make ]; then
		build_fixture_tree "$FIXTURE_TREE"
		fixture_tree_stamp >"$FIXTURE_TREE.ok"
		note "fixture tree ready in $FIXTURE_TREE"
	fi
	;;
copy)
	[ $# -eq 2 ] || fail "usage: fixture_tree.sh copy DIR"
	build_fixture_tree "$2"
	;;
*) fail "usage: fixture_tree.sh make|remove|copy DIR" ;;
esac
echo PASS
