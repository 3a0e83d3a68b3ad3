#!/usr/bin/env python3
"""Compare a tree extracted by Debian's fsck.erofs 1.5 with a manifest, on
what 1.5 restores: paths, types, sizes, contents, symlink targets, device
numbers, owners and mtimes.  Not compared (1.5 does not restore them):
xattrs and ACLs, set-id/sticky bits, hard links (nlink), and a chunk-based
sparse file past its first hole (1.5 truncates it, also on upstream-made
images)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import manifest as m  # noqa: E402

want = json.load(open(sys.argv[1]))
got = m.manifest(sys.argv[2])
keep = ("path", "type", "uid", "gid", "mtime", "mtime_nsec", "size", "sha256",
        "target", "rdev")
def strip(man):
    out = {}
    for e in man["entries"]:
        if e["path"] == "/sparse/sparse-5g.bin":
            continue
        out[e["path"]] = {k: e[k] for k in keep if k in e}
        if e["type"] == "dir":
            out[e["path"]].pop("mtime", None)
            out[e["path"]].pop("mtime_nsec", None)
        out[e["path"]]["perm"] = int(e["mode"], 8) & 0o777
    return out
a, b = strip(want), strip(got)
bad = [p for p in sorted(set(a) | set(b)) if a.get(p) != b.get(p)]
for p in bad[:20]:
    print("differs: %s: %r != %r" % (p, a.get(p), b.get(p)))
sys.exit(1 if bad else 0)
