#!/usr/bin/env python3
"""Make and break OCI image layouts for the tests (t_oci.sh).

    oci_layout.py remake SRC:TAG DEST CODEC[,CODEC...] [--nested]
        A new layout DEST of the image SRC:TAG with its layers decompressed
        and compressed again, layer i with CODEC i (gzip, zstd or none; the
        last repeats), tagged TAG.  --nested: index.json names an image
        index with two platforms, this machine's (the image) and another
        (a manifest whose layer is not a tar, so choosing it fails).
        --docker: Docker's media types (manifest v2, container config,
        rootfs.diff.tar.gzip layers: CODEC must be gzip).
    oci_layout.py fromtars DEST TAG TAR...
        A layout DEST of one image tagged TAG whose layers are the tars
        (any compression), in order.
    oci_layout.py push SRC:TAG URL REPO:TAG [CAFILE]
        Upload the image SRC:TAG to the registry at URL (http(s)://HOST:PORT)
        as REPO:TAG with the distribution API: every blob it reaches (the
        layers, configs and manifests under an index), the manifests an
        index names by digest, then the top one by tag.
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
import ssl
import subprocess
import sys
import urllib.request

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


DOCKER = {"manifest": "application/vnd.docker.distribution.manifest.v2+json",
          "config": "application/vnd.docker.container.image.v1+json",
          "layer": "application/vnd.docker.image.rootfs.diff.tar.gzip"}


def remake(src_ref, dest, codecs, nested, docker=False):
    src, tag = src_ref.rsplit(":", 1)
    manifest = read_json(src, tagged_manifest(src, tag)["digest"])
    with open(blob_path(src, manifest["config"]["digest"]), "rb") as f:
        config = put(dest, f.read(), DOCKER["config"] if docker
                     else manifest["config"]["mediaType"])
    layers = []
    for i, layer in enumerate(manifest["layers"]):
        codec = codecs[min(i, len(codecs) - 1)]
        with open(blob_path(src, layer["digest"]), "rb") as f:
            data = compress(plain_tar(f.read()), codec)
        layers.append(put(dest, data, DOCKER["layer"] if docker else LAYER + SUFFIX[codec]))
    new = {"schemaVersion": 2, "mediaType": DOCKER["manifest"] if docker
           else "application/vnd.oci.image.manifest.v1+json",
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


def push(src_ref, url, dest_ref, cafile):
    src, tag = src_ref.rsplit(":", 1)
    repo, dest_tag = dest_ref.rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=cafile) if cafile else None

    def call(method, path, data=None, headers=None):
        req = urllib.request.Request(path if "://" in path else url + path, data=data,
                                     method=method, headers=headers or {})
        with urllib.request.urlopen(req, context=ctx) as r:
            return r.status, r.headers

    def put_blob(desc):
        with open(blob_path(src, desc["digest"]), "rb") as f:
            data = f.read()
        _, h = call("POST", f"/v2/{repo}/blobs/uploads/")
        loc = h["Location"]
        loc = (url + loc if loc.startswith("/") else loc)
        loc += ("&" if "?" in loc else "?") + "digest=" + desc["digest"]
        call("PUT", loc, data, {"Content-Type": "application/octet-stream"})

    def put_manifest(desc, reference):
        doc = read_json(src, desc["digest"])
        for child in doc.get("manifests", []):
            put_manifest(child, child["digest"])
        if "config" in doc:
            put_blob(doc["config"])
        for layer in doc.get("layers", []):
            put_blob(layer)
        with open(blob_path(src, desc["digest"]), "rb") as f:
            call("PUT", f"/v2/{repo}/manifests/{reference}", f.read(),
                 {"Content-Type": desc["mediaType"]})

    put_manifest(tagged_manifest(src, tag), dest_tag)


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
        remake(sys.argv[2], sys.argv[3], sys.argv[4].split(","), "--nested" in sys.argv[5:],
               "--docker" in sys.argv[5:])
    elif sys.argv[1] == "push":
        push(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    elif sys.argv[1] == "fromtars":
        from_tars(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "break":
        damage(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
