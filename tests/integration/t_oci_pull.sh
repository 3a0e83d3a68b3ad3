#!/bin/bash
# mkfs --oci oci://REGISTRY/REPO: an image pushed to Debian's
# docker-registry with the distribution API builds the same image, byte
# for byte, as its layout on disk, whether named by tag or by digest,
# behind a multi-platform index, with Docker's media types, with token
# and Basic authentication, and one image per layer (--oci-layers).  What the
# registry serves is checked as a layout's blobs are: a changed or a
# longer blob, an unknown tag fail naming it, leaving no image and no
# scratch directory; so does a SIGINT while the layers come down, and a
# later pull sweeps away what a kill -9 left.  A connection cut in the
# middle of a layer resumes where it stopped.  Layers are read as they
# come down, three at once; a registry gone quiet can be waited for or
# interrupted.  The drop-in's mkfs.erofs --oci (upstream's spelling:
# plain HTTP, a user and password, one layer by index or blob) builds
# the same images.
. "$(dirname "$0")/lib.sh"
. "$HERE/http_lib.sh"

E=$EROFSKIT
OCI="python3 $HERE/oci_layout.py"
cd "$T"
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"
# Nothing of a pull stays in $TMPDIR, whatever its end.
scratch_is_gone() {
	[ -z "$(ls -A "$TMPDIR")" ] || fail "$1: left in \$TMPDIR: $(ls -A "$TMPDIR")"
}

note "an image of three layers (whiteouts, an opaque directory, hard links, xattrs)"
mkdir -p l1/etc/app l1/usr/lib l1/srv/data l2/etc l2/usr/lib l3/srv
echo base >l1/etc/app/conf
echo keep >l1/etc/keep
ln l1/etc/keep l1/etc/keep.hard
ln -s conf l1/etc/app/link
echo old >l1/usr/lib/old.so
head -c 300000 /dev/urandom >l1/srv/data/blob
setfattr -n user.note -v hello l1/etc/app/conf
echo changed >l2/etc/app.conf
: >l2/etc/.wh.keep
: >l2/usr/lib/.wh..wh..opq
echo new >l2/usr/lib/new.so
echo now-a-file >l3/srv/data.txt
: >l3/srv/.wh.data
for i in 1 2 3; do
	tar --xattrs --numeric-owner --owner=1000 --group=1001 -cf "l$i.tar" -C "l$i" . ||
		fail "tar of layer $i"
done
gzip -k -n l2.tar
$OCI fromtars L app l1.tar l2.tar.gz l3.tar
$OCI remake L:app N gzip --nested
$OCI remake L:app D gzip --docker
"$E" mkfs --oci L:app -zlz4hc -q -T0 want.erofs || fail "mkfs --oci of the layout"
mkdir -p layers.want
"$E" mkfs --oci L:app --oci-layers layers.want -zlz4hc -q -T0 || fail "--oci-layers of the layout"

start_nginx "$T/www"   # for its certificate
CA=cacert=$T/http/ca.pem
start_registry open
URL=https://127.0.0.1:$REGISTRY_PORT
R=oci://127.0.0.1:$REGISTRY_PORT/erofskit/app
$OCI push L:app "$URL" erofskit/app:v1 "$T/http/ca.pem" || fail "push the layout"
$OCI push N:app "$URL" erofskit/app:multi "$T/http/ca.pem" || fail "push the nested layout"
$OCI push D:app "$URL" erofskit/app:docker "$T/http/ca.pem" || fail "push the Docker layout"

note "by tag, by digest, behind an index, with Docker's media types: the layout's image"
"$E" mkfs --oci "$R:v1" -o "$CA" -zlz4hc -q -T0 tag.erofs || fail "mkfs --oci $R:v1"
cmp want.erofs tag.erofs || fail "the registry's image differs from the layout's"
scratch_is_gone "by tag"
digest=$(curl -sfI --cacert "$T/http/ca.pem" \
	-H "Accept: application/vnd.oci.image.manifest.v1+json" "$URL/v2/erofskit/app/manifests/v1" |
	tr -d '\r' | sed -n 's/^[Dd]ocker-[Cc]ontent-[Dd]igest: //p')
[[ $digest == sha256:* ]] || fail "no manifest digest from the registry: '$digest'"
"$E" mkfs --oci "$R@$digest" -o "$CA" -zlz4hc -q -T0 digest.erofs || fail "mkfs --oci by digest"
cmp want.erofs digest.erofs || fail "by digest, another image"
for tag in multi docker; do
	"$E" mkfs --oci "$R:$tag" -o "$CA" -zlz4hc -q -T0 "$tag.erofs" || fail "mkfs --oci $R:$tag"
	cmp want.erofs "$tag.erofs" || fail "$tag: another image"
done
# --platform: the index's other entry (one layer against three diff_ids).
OTHER=$(python3 -c 'import platform; print("amd64" if platform.machine() == "s390x" else "s390x")')
expect_exit 1 "$E" mkfs --oci "$R:multi" --platform "linux/$OTHER" -o "$CA" -q x.erofs 2>err
grep -q "diff_ids is not a list of 1 digests" err || fail "--platform linux/$OTHER: $(cat err)"
scratch_is_gone "by digest, multi, docker, --platform"

note "--oci-layers from the registry: the layout's images"
"$E" mkfs --oci "$R:v1" -o "$CA" --oci-layers layers.got -zlz4hc -q -T0 || fail "--oci-layers"
[ "$(ls layers.want)" = "$(ls layers.got)" ] || fail "other layer images: $(ls layers.got)"
for f in layers.want/*; do
	cmp "$f" "layers.got/${f##*/}" || fail "--oci-layers: ${f##*/} differs"
done
scratch_is_gone "--oci-layers"

note "a progress line while the layers come down, on a terminal only"
# 3 MiB of layer through a relay at 2 MiB/s: well over a second of it.
mkdir -p lbig
head -c 3145728 /dev/urandom >lbig/random
tar -cf lbig.tar -C lbig .
$OCI fromtars B big lbig.tar
$OCI push B:big "$URL" erofskit/big:v1 "$T/http/ca.pem" || fail "push the large layout"
relay_up() {
	RELAY_PORT=$(free_port)
	_ports=("$RELAY_PORT")
	python3 "$HERE/slow_relay.py" --listen "$RELAY_PORT" --to "$REGISTRY_PORT" \
		--rate 2097152 &
	_pid=$!
}
launch "$T/relay.log" relay_up
TERM=xterm script -qec "$(printf '%q ' "$E" mkfs --oci "oci://127.0.0.1:$RELAY_PORT/erofskit/big:v1" \
	-o "$CA" -T0 big-tty.erofs)" /dev/null >tty.out || fail "mkfs --oci on a terminal failed"
python3 - tty.out "$(stat -c %s lbig.tar)" <<'PY' || { cat -v tty.out >&2; fail "no proper fetch progress"; }
import re, sys
out = open(sys.argv[1], "rb").read().decode()
size = int(sys.argv[2]) / 1048576
lines = re.findall(r"\rmkfs: fetching layers: ([0-9.]+) / ([0-9.]+) MiB \( *([0-9]+)%\), ([0-9.]+) MiB/s", out)
assert len(lines) >= 3, "fewer than three progress updates: %r" % lines
assert all(abs(float(t) - size) < 0.06 for _, t, _, _ in lines), "not the layer's %.1f MiB: %r" % (size, lines)
done = [float(d) for d, *_ in lines]
assert done == sorted(done) and done[-1] <= size + 0.06, "went backwards or past the end: %r" % lines
assert out.rindex("fetching layers") < out.index("big-tty.erofs:"), "no summary after the fetch"
PY
"$E" mkfs --oci "oci://127.0.0.1:$REGISTRY_PORT/erofskit/big:v1" -o "$CA" -T0 big-file.erofs \
	>cli.out 2>cli.err ||
	fail "mkfs --oci into a file failed: $(cat cli.err)"
grep -q "MiB/s" cli.err cli.out && fail "mkfs --oci drew progress into a file"
cmp big-tty.erofs big-file.erofs || fail "the image made on a terminal differs"
scratch_is_gone "progress"
# until_coming: a blob of a pull is coming down (for up to 2.5 s).
until_coming() {
	for _ in $(seq 50); do
		compgen -G "$TMPDIR/erofskit-pull.*/blobs/sha256/*.part" >/dev/null && return
		sleep 0.05
	done
}
# Ctrl-C in the middle of the download: the build stops as a failure
# does, exit 130, no image and no scratch layout left.
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$E" mkfs --oci "oci://127.0.0.1:$RELAY_PORT/erofskit/big:v1" \
	-o "$CA" -T0 big-int.erofs 2>err &
pid=$!
until_coming
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT during the fetch: exit $rc: $(cat err)"
grep -q "stopped by SIGINT: the image was not written" err || fail "SIGINT: $(cat err)"
[ ! -e big-int.erofs ] || fail "SIGINT: an image was left"
scratch_is_gone "SIGINT during the fetch"
# --oci-layers whose first image cannot be written (a directory is in its
# place) fails before the build reads the layer still coming down: the
# download stops with it, and nothing is left.
digest=$(python3 -c 'import json, sys
idx = json.load(open(sys.argv[1] + "/index.json"))
man = json.load(open(sys.argv[1] + "/blobs/sha256/" + idx["manifests"][0]["digest"][7:]))
print(man["layers"][0]["digest"][7:])' B)
mkdir -p big-layers/001-$digest.erofs
rc=0
timeout 60 "$E" mkfs --oci "oci://127.0.0.1:$RELAY_PORT/erofskit/big:v1" -o "$CA" -q \
	--oci-layers big-layers 2>err || rc=$?
[ "$rc" -eq 2 ] || fail "--oci-layers with a directory for an image: exit $rc: $(cat err)"
grep -q "001-$digest.erofs" err || fail "the image's path is not named: $(cat err)"
[ "$(ls -A big-layers)" = "001-$digest.erofs" ] || fail "left in OUTDIR: $(ls -A big-layers)"
scratch_is_gone "--oci-layers failing before its layer was read"
# kill -9 cannot be caught: its scratch layout stays until a later pull
# finds it, unlocked and unchanged for a minute, and removes it; a layout
# a live pull holds locked stays, however old.
"$E" mkfs --oci "oci://127.0.0.1:$RELAY_PORT/erofskit/big:v1" -o "$CA" -T0 big-kill.erofs 2>err &
pid=$!
until_coming
kill -9 "$pid"
wait "$pid" || true
dead=$(compgen -G "$TMPDIR/erofskit-pull.*") ||
	fail "kill -9 during the fetch: no scratch layout to sweep"
mkdir "$TMPDIR/erofskit-pull.held"
touch -d '2 minutes ago' "$TMPDIR/erofskit-pull.held"
flock "$TMPDIR/erofskit-pull.held" sleep 60 >/dev/null 2>&1 &
holder=$!
"$E" mkfs -q --oci "oci://127.0.0.1:$REGISTRY_PORT/erofskit/app:v1" -o "$CA" -T0 sweep.erofs ||
	fail "mkfs --oci beside a dead pull's layout"
[ -d "$dead" ] || fail "a scratch layout less than a minute old was swept"
touch -d '2 minutes ago' "$dead"
"$E" mkfs -q --oci "oci://127.0.0.1:$REGISTRY_PORT/erofskit/app:v1" -o "$CA" -T0 sweep.erofs ||
	fail "mkfs --oci beside a dead pull's old layout"
[ ! -e "$dead" ] || fail "a dead pull's layout was not swept: $(find "$dead")"
[ -d "$TMPDIR/erofskit-pull.held" ] || fail "a layout held locked was swept"
kill "$holder"
wait "$holder" 2>/dev/null || true
rmdir "$TMPDIR/erofskit-pull.held"
scratch_is_gone "kill -9, then a sweep"

note "three layers come down at once, each over a connection of its own"
# Three layers of 2 MiB through a relay that gives each connection 2 MiB/s
# (as a CDN does): a second each.  Fetched one after another, at
# most one layer's connection (and one closing) would be open at a time.
for i in 1 2 3; do
	mkdir -p "p$i"
	head -c 2097152 /dev/urandom >"p$i/blob$i"
	tar -cf "p$i.tar" -C "p$i" . || fail "tar of layer $i"
done
$OCI fromtars P three p1.tar p2.tar p3.tar
$OCI push P:three "$URL" erofskit/three:v1 "$T/http/ca.pem" || fail "push the three-layer layout"
"$E" mkfs --oci P:three -q -T0 three-want.erofs || fail "mkfs --oci of the three-layer layout"
par_relay_up() {
	PAR_PORT=$(free_port)
	_ports=("$PAR_PORT")
	: >"$T/par.log"
	python3 "$HERE/slow_relay.py" --listen "$PAR_PORT" --to "$REGISTRY_PORT" \
		--rate 2097152 --log "$T/par.log" &
	_pid=$!
}
launch "$T/par-relay.log" par_relay_up
"$E" mkfs --oci "oci://127.0.0.1:$PAR_PORT/erofskit/three:v1" -o "$CA" -q -T0 three.erofs ||
	fail "mkfs --oci of three layers at once"
cmp three-want.erofs three.erofs || fail "three layers at once: another image"
peak=$(tail -n 1 "$T/par.log" | awk '{print $6}')
note "at most $peak connections at once"
[ "${peak:-0}" -ge 3 ] ||
	fail "the layers came down one after another: at most ${peak:-0} connections at once"
# An image that lists a layer twice (old images converted from Docker's
# schema 1 repeat their empty layer): both copies come down at once,
# each into a file of its own.
$OCI fromtars Q twice p1.tar p2.tar p1.tar
$OCI push Q:twice "$URL" erofskit/twice:v1 "$T/http/ca.pem" || fail "push the layout with a layer twice"
"$E" mkfs --oci Q:twice -q -T0 twice-want.erofs || fail "mkfs --oci of a layout with a layer twice"
"$E" mkfs --oci "oci://127.0.0.1:$PAR_PORT/erofskit/twice:v1" -o "$CA" -q -T0 twice.erofs ||
	fail "mkfs --oci of an image that lists a layer twice"
cmp twice-want.erofs twice.erofs || fail "a layer listed twice: another image"
"$E" mkfs --oci "oci://127.0.0.1:$PAR_PORT/erofskit/twice:v1" -o "$CA" -q -T0 \
	--oci-layers twice.layers || fail "--oci-layers of an image that lists a layer twice"
[ "$(ls twice.layers | wc -l)" -eq 3 ] || fail "a layer listed twice: $(ls twice.layers)"
# -o downloads=1: one after another (a relay of its own, counting
# afresh), the same image.
launch "$T/par-relay.log" par_relay_up
"$E" mkfs --oci "oci://127.0.0.1:$PAR_PORT/erofskit/three:v1" -o "$CA,downloads=1" -q -T0 \
	three-1.erofs || fail "mkfs --oci -o downloads=1"
cmp three-want.erofs three-1.erofs || fail "-o downloads=1: another image"
peak=$(tail -n 1 "$T/par.log" | awk '{print $6}')
[ "${peak:-9}" -le 2 ] || fail "-o downloads=1: $peak connections at once"
for bad in 0 17 x; do
	expect_exit 2 "$E" mkfs --oci "oci://127.0.0.1:$PAR_PORT/erofskit/three:v1" \
		-o "$CA,downloads=$bad" -q x.erofs 2>err
	grep -qF "option 'downloads=$bad': a count from 1 to 16" err ||
		fail "-o downloads=$bad: $(cat err)"
done
scratch_is_gone "three layers at once"

note "a connection cut in the middle of a layer: the download resumes where it stopped"
cut_relay_up() {
	CUT_PORT=$(free_port)
	_ports=("$CUT_PORT")
	: >"$T/cut.log"
	python3 "$HERE/slow_relay.py" --listen "$CUT_PORT" --to "$REGISTRY_PORT" \
		--cut-after 1500000 --log "$T/cut.log" &
	_pid=$!
}
launch "$T/cut-relay.log" cut_relay_up
"$E" mkfs --oci "oci://127.0.0.1:$CUT_PORT/erofskit/big:v1" -o "$CA" -T0 -q big-cut.erofs ||
	fail "mkfs --oci through a connection cut part way"
cmp big-file.erofs big-cut.erofs || fail "after a cut connection, another image"
sent=$(tail -n 1 "$T/cut.log" | awk '{print $4}')
# The layer once, and the requests around it (TLS handshakes, the
# manifest, the config): far from the 1.5 MB cut off plus the layer again.
size=$(stat -c %s lbig.tar)
[ "$sent" -lt $((size + 500000)) ] ||
	fail "the registry sent $sent bytes for a layer of $size: the download started again"
[ "$(tail -n 1 "$T/cut.log" | awk '{print $2}')" -ge 4 ] ||
	fail "the cut connection was not tried again: $(cat "$T/cut.log")"
scratch_is_gone "a cut connection"

note "a layer is read as it comes down: a registry gone quiet part way"
# The registry stops sending 200 KB into a layer (a relay that stalls
# until its gate file exists, or for good).  The build has the layer open
# meanwhile (its download's file twice: the fetch's and the build's), goes
# on when the bytes come again, and makes the same image.
stall_relay_up() {   # GATE: the stall ends once this file exists
	STALL_PORT=$(free_port)
	_ports=("$STALL_PORT")
	python3 "$HERE/slow_relay.py" --listen "$STALL_PORT" --to "$REGISTRY_PORT" \
		--stall-after 200000 --gate "$1" &
	_pid=$!
}
# until_stalled PID: a blob's download (a layer's: the manifest and the
# config come whole) has stopped growing for 0.3 s.
until_stalled() {
	local before= after
	for _ in $(seq 100); do
		after=$(stat -c %s "$TMPDIR"/erofskit-pull.*/blobs/sha256/[0-9a-f]*.part \
			2>/dev/null) || after=
		[ -z "$after" ] || [ "$after" != "$before" ] || break
		before=$after
		sleep 0.3
	done
	[ -n "$after" ] && [ "$after" = "$before" ] || fail "the layer did not stall: $after"
	kill -0 "$1" 2>/dev/null || fail "mkfs ended while the registry sent nothing: $(cat err)"
}
launch "$T/stall-relay.log" stall_relay_up "$T/gate"
"$E" mkfs --oci "oci://127.0.0.1:$STALL_PORT/erofskit/big:v1" -o "$CA" -T0 -q \
	big-gate.erofs 2>err &
pid=$!
until_stalled "$pid"
[ "$(find "/proc/$pid/fd" -lname "*.part" | wc -l)" -eq 2 ] ||
	fail "the layer is not open for the build while it comes down: $(ls -l "/proc/$pid/fd")"
touch "$T/gate"
wait "$pid" || fail "mkfs --oci after the registry answered again: $(cat err)"
cmp big-file.erofs big-gate.erofs || fail "after a stall, another image"
scratch_is_gone "a stall that ended"
# A layer whose third entry escapes the tree, 3 MiB of data after it: the
# build meets the entry in the first 200 KB, but a blob that is not what
# its digest says is the error to report, so it waits for the rest; it
# names the entry once the rest has come and the digest matches.
python3 - bad.tar lbig/random <<'PY2'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for name, data in (("ok.txt", b"fine\n"), ("etc/conf", b"x=1\n"),
                       ("../escape", b"out\n"), ("big", open(sys.argv[2], "rb").read())):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
PY2
$OCI fromtars Q bad bad.tar
$OCI push Q:bad "$URL" erofskit/bad:v1 "$T/http/ca.pem" || fail "push the layout of a bad layer"
rm -f "$T/gate"
launch "$T/stall-relay2.log" stall_relay_up "$T/gate"
"$E" mkfs --oci "oci://127.0.0.1:$STALL_PORT/erofskit/bad:v1" -o "$CA" -q bad.erofs 2>err &
pid=$!
until_stalled "$pid"
touch "$T/gate"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 1 ] || fail "a bad entry in a layer: exit $rc: $(cat err)"
grep -q "escape" err || fail "the bad entry is not named: $(cat err)"
[ ! -e bad.erofs ] || fail "an image was left after a bad layer"
scratch_is_gone "a bad entry in a layer"
# Ctrl-C while the registry sends nothing: heard within a second or two
# (libcurl asks whether to go on about once a second), exit 130.
launch "$T/stall-relay3.log" stall_relay_up "$T/never"
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$E" mkfs --oci \
	"oci://127.0.0.1:$STALL_PORT/erofskit/big:v1" -o "$CA" -T0 -q big-quiet.erofs 2>err &
pid=$!
until_stalled "$pid"
start=$(date +%s%N)
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$rc" -eq 130 ] || fail "SIGINT while the registry sent nothing: exit $rc: $(cat err)"
[ "$ms" -lt 5000 ] || fail "SIGINT while the registry sent nothing: $ms ms to stop"
note "stopped $ms ms after SIGINT"
[ ! -e big-quiet.erofs ] || fail "SIGINT while the registry sent nothing: an image was left"
scratch_is_gone "SIGINT while the registry sent nothing"

note "unknown tags, plain HTTP to an HTTPS registry, an artifact, -o without a registry: clear errors"
expect_exit 2 "$E" mkfs --oci "$R:nope" -o "$CA" -q x.erofs 2>err
grep -q "HTTP status 404" err || fail "unknown tag: $(cat err)"
expect_exit 2 "$E" mkfs --oci "$R:v1" -o "$CA,plain_http,retries=0" -q x.erofs 2>err
grep -q "127.0.0.1:$REGISTRY_PORT" err || fail "plain HTTP: $(cat err)"
# An EROFS image stored as an artifact (erofskit push) is no layered image.
"$E" push -o "$CA" want.erofs "$R:artifact" >/dev/null || fail "push an artifact"
expect_exit 1 "$E" mkfs --oci "$R:artifact" -o "$CA" -q x.erofs 2>err
grep -q "layer 1 is a 'application/vnd.erofs', not a layer" err || fail "artifact: $(cat err)"
expect_exit 2 "$E" mkfs --oci L:app -o "$CA" -q x.erofs 2>err
grep -q "needs --oci oci://" err || fail "-o with a layout: $(cat err)"
[ ! -e x.erofs ] || fail "an image was left"
scratch_is_gone "the errors"

note "token authentication: an anonymous pull token"
stop_registry
start_registry token
R=oci://127.0.0.1:$REGISTRY_PORT/erofskit/app
# header= goes with the registry's requests too (the token's among them).
"$E" mkfs --oci "$R:v1" -o "$CA,header=X-Erofskit-Test: pull" -zlz4hc -q -T0 token.erofs ||
	fail "mkfs --oci with a token"
cmp want.erofs token.erofs || fail "with a token, another image"
grep -q '^anonymous repository:erofskit/app:pull 200$' "$TOKEN_LOG" ||
	fail "no anonymous pull token: $(cat "$TOKEN_LOG")"
grep -qx 'header pull' "$TOKEN_LOG" || fail "-o header= was not sent: $(cat "$TOKEN_LOG")"
stop_registry

note "Basic authentication: refused without credentials, the same image with them"
start_registry basic
R=oci://127.0.0.1:$REGISTRY_PORT/erofskit/app
echo alice:wonderland >cred
expect_exit 2 "$E" mkfs --oci "$R:v1" -o "$CA" -q x.erofs 2>err
grep -q "asks for a user and password" err || fail "Basic without credentials: $(cat err)"
[ ! -e x.erofs ] || fail "an image was left"
"$E" mkfs --oci "$R:v1" -o "$CA,credentials=$T/cred" -zlz4hc -q -T0 basic.erofs ||
	fail "mkfs --oci with Basic credentials"
cmp want.erofs basic.erofs || fail "with Basic credentials, another image"
scratch_is_gone "Basic authentication"
stop_registry

note "the drop-in: mkfs.erofs --oci as upstream spells it (plain HTTP, a user, one layer)"
# The same registry's store, over HTTP this time (upstream's insecure).
start_registry basic http
MKFS_ERO=${EROFSKIT_BUILD:-$(dirname "$E")}/dropin/mkfs.erofs
ref=127.0.0.1:$REGISTRY_PORT/erofskit/app:v1
user=username=alice,password=wonderland
"$MKFS_ERO" --oci=f,insecure,$user -zlz4hc -T0 --quiet dropin.erofs "$ref" ||
	fail "mkfs.erofs --oci"
cmp want.erofs dropin.erofs || fail "mkfs.erofs --oci: another image than mkfs --oci's"
# A layer alone, by index (from 0) or by blob: --oci-layers' image of it.
# The others are never fetched: the first layer's blob is away meanwhile.
data=$(find "$T/registry/data" -path "*/blobs/sha256/*/$(sha256sum <l1.tar | cut -c1-64)/data")
[ -f "$data" ] || fail "the first layer is not in the registry's store"
mv "$data" "$data.away"
"$MKFS_ERO" --oci=insecure,layer=1,$user -zlz4hc -T0 --quiet layer2.erofs "$ref" ||
	fail "mkfs.erofs --oci=layer=1"
cmp layers.want/002-*.erofs layer2.erofs || fail "--oci=layer=1: not --oci-layers' second image"
blob=$(basename layers.want/003-*.erofs .erofs)
"$MKFS_ERO" --oci=insecure,blob=${blob#003-},$user -zlz4hc -T0 --quiet layer3.erofs "$ref" ||
	fail "mkfs.erofs --oci=blob="
cmp layers.want/003-*.erofs layer3.erofs || fail "--oci=blob=: not --oci-layers' third image"
mv "$data.away" "$data"
# platform= picks the index's entry (the other one fails as with --platform).
expect_exit 1 "$MKFS_ERO" --oci=insecure,platform=linux/$OTHER,$user --quiet x.erofs \
	"${ref%:v1}:multi" 2>err
grep -q "diff_ids is not a list of 1 digests" err || fail "--oci=platform=: $(cat err)"
expect_exit 2 "$MKFS_ERO" --oci=insecure,layer=3,$user --quiet x.erofs "$ref" 2>err
grep -q "no layer 4: the image has 3" err || fail "--oci=layer=3: $(cat err)"
expect_exit 2 "$MKFS_ERO" --oci=insecure,username=alice,password=wrong --quiet x.erofs "$ref" \
	2>err
grep -q "401" err || fail "a wrong password: $(cat err)"
[ ! -e x.erofs ] || fail "an image was left"
# The erofskit spelling reads the same credentials from the environment.
EROFSKIT_REGISTRY_AUTH=alice:wonderland "$E" mkfs --oci "oci://$ref" -o plain_http \
	-zlz4hc -q -T0 env.erofs || fail "mkfs --oci with \$EROFSKIT_REGISTRY_AUTH"
cmp want.erofs env.erofs || fail "credentials from the environment: another image"
# A file named with credentials= comes first; the environment's must be
# user:password.
EROFSKIT_REGISTRY_AUTH=alice:wrong "$E" mkfs --oci "oci://$ref" \
	-o "plain_http,credentials=$T/cred" -zlz4hc -q -T0 env.erofs ||
	fail "credentials= did not win over \$EROFSKIT_REGISTRY_AUTH"
EROFSKIT_REGISTRY_AUTH=alice expect_exit 2 "$E" mkfs --oci "oci://$ref" -o plain_http -q x.erofs \
	2>err
grep -q "EROFSKIT_REGISTRY_AUTH: expected 'user:password'" err ||
	fail "a bad \$EROFSKIT_REGISTRY_AUTH: $(cat err)"
scratch_is_gone "the drop-in's --oci"
stop_registry

note "what the registry serves is checked: a changed blob, a longer one, a missing one"
start_registry open
R=oci://127.0.0.1:$REGISTRY_PORT/erofskit/app
data=$(find "$T/registry/data" -path "*/blobs/sha256/*/$(sha256sum <l3.tar | cut -c1-64)/data")
[ -f "$data" ] || fail "the last layer is not in the registry's store"
printf 'X' | dd of="$data" bs=1 seek=1000 conv=notrunc status=none
expect_exit 1 "$E" mkfs --oci "$R:v1" -o "$CA" -q x.erofs 2>err
grep -q "layer 3 of 3" err && grep -qi "digest" err || fail "changed layer: $(cat err)"
[ ! -e x.erofs ] || fail "an image was left after a changed layer"
scratch_is_gone "a changed layer"
cp l3.tar "$data"
head -c 4096 /dev/zero >>"$data"
expect_exit 1 "$E" mkfs --oci "$R:v1" -o "$CA" -q x.erofs 2>err
grep -q "sends more than the $(stat -c %s l3.tar) bytes" err || fail "longer layer: $(cat err)"
[ ! -e x.erofs ] || fail "an image was left after a longer layer"
scratch_is_gone "a longer layer"
# A blob the registry does not have: an error reading the source (exit
# 2), naming the layer and what the registry answered.
rm -f "$data"
rc=0
"$E" mkfs --oci "$R:v1" -o "$CA" -q x.erofs 2>err || rc=$?
[ "$rc" -eq 2 ] || fail "missing layer: exit $rc: $(cat err)"
grep -q "layer 3 of 3" err && grep -q "HTTP status 404" err || fail "missing layer: $(cat err)"
[ ! -e x.erofs ] || fail "an image was left after a missing layer"
scratch_is_gone "a missing layer"
# The middle one missing as well (all three come down at once): whichever
# 404 comes first, the error is the earliest layer's, as fetching them
# one after another would give, and the first layer is still built.
data=$(find "$T/registry/data" -path "*/blobs/sha256/*/$(sha256sum <l2.tar.gz | cut -c1-64)/data")
[ -f "$data" ] || fail "the middle layer is not in the registry's store"
rm -f "$data"
for i in 1 2 3; do
	rc=0
	"$E" mkfs --oci "$R:v1" -o "$CA" -q x.erofs 2>err || rc=$?
	[ "$rc" -eq 2 ] || fail "two missing layers: exit $rc: $(cat err)"
	grep -q "layer 2 of 3" err && grep -q "HTTP status 404" err ||
		fail "two missing layers, try $i: $(cat err)"
	[ ! -e x.erofs ] || fail "an image was left after two missing layers"
	scratch_is_gone "two missing layers"
done
stop_registry
echo PASS
