#!/usr/bin/env python3
"""Drop named fields or paths from a manifest (manifest.py format).

Usage:
    python3 manifest_filter.py [options] IN.json OUT.json

Options (each may be repeated):
    --drop-path PATH           remove the entry PATH (and nothing below it)
    --drop-field FIELD         remove FIELD from every entry
    --drop-entry-field PATH FIELD
                               remove FIELD from the entry PATH only
    --mask-mode OCTAL          clear these bits of every entry's mode
    --drop-hardlinks           empty the hard-link groups and remove nlink
                               from every non-directory entry

A test applies the same options to both manifests it compares, so that
exactly the listed fields are left out and everything else is compared.
An option that names a path or field the input does not have is an error:
a filter that no longer matches anything hides nothing and must be
noticed, not silently kept.
"""

import argparse
import json
import sys


def fail(msg):
    sys.stderr.write("manifest_filter: %s\n" % msg)
    sys.exit(2)


def main(argv):
    ap = argparse.ArgumentParser(add_help=True)
    ap.add_argument("--drop-path", action="append", default=[])
    ap.add_argument("--drop-field", action="append", default=[])
    ap.add_argument("--drop-entry-field", action="append", nargs=2, default=[],
                    metavar=("PATH", "FIELD"))
    ap.add_argument("--mask-mode", action="append", default=[])
    ap.add_argument("--drop-hardlinks", action="store_true")
    ap.add_argument("input")
    ap.add_argument("output")
    a = ap.parse_args(argv)

    with open(a.input, encoding="utf-8") as f:
        m = json.load(f)
    if m.get("format") != "erofskit-manifest-1":
        fail("%s: not a manifest" % a.input)
    entries = m["entries"]
    by_path = {e["path"]: e for e in entries}

    for p in a.drop_path:
        if p not in by_path:
            fail("--drop-path %s: no such entry in %s" % (p, a.input))
    dropped = set(a.drop_path)
    entries = [e for e in entries if e["path"] not in dropped]
    m["hardlinks"] = [[p for p in g if p not in dropped] for g in m["hardlinks"]]
    m["hardlinks"] = [g for g in m["hardlinks"] if len(g) > 1]

    for field in a.drop_field:
        if field == "path":
            fail("cannot drop the path field")
        for e in entries:
            e.pop(field, None)

    for p, field in a.drop_entry_field:
        if p not in by_path or p in dropped:
            fail("--drop-entry-field %s: no such entry in %s" % (p, a.input))
        if field not in by_path[p]:
            fail("--drop-entry-field %s %s: entry has no such field in %s"
                 % (p, field, a.input))
        del by_path[p][field]

    for mask in a.mask_mode:
        try:
            bits = int(mask, 8)
        except ValueError:
            fail("--mask-mode %s: not an octal number" % mask)
        for e in entries:
            if "mode" in e:
                e["mode"] = "%04o" % (int(e["mode"], 8) & ~bits)

    if a.drop_hardlinks:
        m["hardlinks"] = []
        for e in entries:
            if e["type"] != "dir":
                e.pop("nlink", None)

    m["entries"] = entries
    with open(a.output, "w", encoding="utf-8") as f:
        json.dump(m, f, ensure_ascii=False, sort_keys=True, indent=0)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
