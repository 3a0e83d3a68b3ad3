#!/usr/bin/env python3
"""Make and break OCI image layouts for the tests (t_oci.sh).

    oci_layout.py remake SRC:TAG DEST CODEC[,CODEC...] [--nested]
        A new layout DEST of the image SRC:TAG with its layers decompressed
        and compressed again, layer i with CODEC i (gzip, zstd or none; the
        last repeats), tagged TAG.  --nested: index.json names an image
        index with two platforms, this machine's (the image) and another
        (a manifest whose layer is not a tar, so choosing it fails).
    oci_layout.py fromtars DEST TAG TAR...
        A layout DEST of one image tagged TAG whose layers are the tars
        (any compression), in order.
    oci_layout.py break DEST WHAT
        Damage the (not nested) layout DEST one way: flip-layer,
        grow-layer, flip-manifest, traversal-digest, sha512-digest,
        missing-layer, bad-json, bad-layer-type, bad-diff-id (the config
        names another tar for the last layer), no-oci-layout.
"""
import gzip
import hashlib
import json
import os
import platform
import subprocess
import sys

ARCH = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
LAYER = "application/vnd.oci.image.layer.v1.tar"
SUFFIX = {"gzip": "+gzip", "zstd": "+zstd", "none": ""}


def blob_path(layout, digest):
    return os.path.join(layout, "blobs", *digest.split(":", 1))


def put(layout, data, media_type):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    os.makedirs(os.path.join(layout, "blobs", "sha256"), exist_ok=True)
    with open(blob_path(layout, digest), "wb") as f:
        f.write(data)
    return {"mediaType": media_type, "digest": digest, "size": len(data)}


def put_json(layout, obj, media_type):
    return put(layout, json.dumps(obj).encode(), media_type)


def read_json(layout, digest):
    with open(blob_path(layout, digest), "rb") as f:
        return json.load(f)


def tagged_manifest(layout, tag):
    with open(os.path.join(layout, "index.json")) as f:
        for m in json.load(f)["manifests"]:
            if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag:
                return m
    sys.exit(f"{layout}: no tag {tag}")


def plain_tar(data):
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return subprocess.run(["zstd", "-dc"], input=data, stdout=subprocess.PIPE,
                              check=True).stdout
    return data


def compress(data, codec):
    if codec == "gzip":
        return gzip.compress(data, mtime=0)
    if codec == "zstd":
        return subprocess.run(["zstd", "-q", "-c"], input=data, stdout=subprocess.PIPE,
                              check=True).stdout
    return data


def write_layout(dest, top, tag):
    with open(os.path.join(dest, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    top = dict(top, annotations={"org.opencontainers.image.ref.name": tag})
    with open(os.path.join(dest, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [top]}, f)


def remake(src_ref, dest, codecs, nested):
    src, tag = src_ref.rsplit(":", 1)
    manifest = read_json(src, tagged_manifest(src, tag)["digest"])
    with open(blob_path(src, manifest["config"]["digest"]), "rb") as f:
        config = put(dest, f.read(), manifest["config"]["mediaType"])
    layers = []
    for i, layer in enumerate(manifest["layers"]):
        codec = codecs[min(i, len(codecs) - 1)]
        with open(blob_path(src, layer["digest"]), "rb") as f:
            data = compress(plain_tar(f.read()), codec)
        layers.append(put(dest, data, LAYER + SUFFIX[codec]))
    new = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
           "config": config, "layers": layers}
    top = put_json(dest, new, new["mediaType"])
    if nested:
        other = dict(new, layers=[put(dest, b"not a tar at all", LAYER)])
        other_desc = put_json(dest, other, new["mediaType"])
        index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                 "manifests": [
                     dict(other_desc, platform={"os": "linux", "architecture": "s390x"
                                                if ARCH != "s390x" else "amd64"}),
                     dict(top, platform={"os": "linux", "architecture": ARCH})]}
        top = put_json(dest, index, index["mediaType"])
    write_layout(dest, top, tag)


def from_tars(dest, tag, tars):
    os.makedirs(dest, exist_ok=True)
    layers, diff_ids = [], []
    for t in tars:
        with open(t, "rb") as f:
            data = f.read()
        layers.append(put(dest, data, LAYER))
        diff_ids.append("sha256:" + hashlib.sha256(plain_tar(data)).hexdigest())
    config = put_json(dest, {"architecture": ARCH, "os": "linux", "rootfs": {
        "type": "layers", "diff_ids": diff_ids}}, "application/vnd.oci.image.config.v1+json")
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": config, "layers": layers}
    write_layout(dest, put_json(dest, manifest, manifest["mediaType"]), tag)


def damage(dest, what):
    with open(os.path.join(dest, "index.json")) as f:
        index = json.load(f)
    top = index["manifests"][0]
    manifest = read_json(dest, top["digest"])
    layer = manifest["layers"][-1]
    if what in ("flip-layer", "grow-layer"):
        path = blob_path(dest, layer["digest"])
        with open(path, "r+b") as f:
            if what == "grow-layer":
                f.seek(0, 2)
                f.write(b"\0" * 512)
            else:
                f.seek(layer["size"] // 2)
                b = f.read(1)
                f.seek(layer["size"] // 2)
                f.write(bytes([b[0] ^ 0x40]))
        return
    if what == "flip-manifest":
        with open(blob_path(dest, top["digest"]), "r+b") as f:
            f.seek(0)
            f.write(b" ")   # '{' becomes ' ': still JSON, another digest
        return
    if what == "missing-layer":
        os.unlink(blob_path(dest, layer["digest"]))
        return
    if what == "no-oci-layout":
        os.unlink(os.path.join(dest, "oci-layout"))
        return
    if what == "bad-json":
        with open(os.path.join(dest, "index.json"), "w") as f:
            f.write('{"schemaVersion": 2, "manifests": [')
        return
    if what == "traversal-digest":
        top["digest"] = "sha256:../../../../etc/passwd"
    elif what == "sha512-digest":
        top["digest"] = "sha512:" + "ab" * 64
    elif what == "bad-diff-id":
        config = read_json(dest, manifest["config"]["digest"])
        last = config["rootfs"]["diff_ids"][-1]
        config["rootfs"]["diff_ids"][-1] = last[:-1] + ("0" if last[-1] != "0" else "1")
        manifest["config"] = put_json(dest, config, manifest["config"]["mediaType"])
        desc = put_json(dest, manifest, manifest["mediaType"])
        top.update(digest=desc["digest"], size=desc["size"])
    elif what == "bad-layer-type":
        layer["mediaType"] = "application/vnd.example.not-a-layer"
        desc = put_json(dest, manifest, manifest["mediaType"])
        top.update(digest=desc["digest"], size=desc["size"])
    else:
        sys.exit(f"unknown damage {what}")
    with open(os.path.join(dest, "index.json"), "w") as f:
        json.dump(index, f)


if __name__ == "__main__":
    if sys.argv[1] == "remake":
        remake(sys.argv[2], sys.argv[3], sys.argv[4].split(","), "--nested" in sys.argv[5:])
    elif sys.argv[1] == "fromtars":
        from_tars(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "break":
        damage(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
