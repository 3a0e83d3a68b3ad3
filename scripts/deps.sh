#!/bin/bash
# Install the Debian packages erofskit needs to build, test and benchmark.
# As root: installs what is missing with apt-get.  Otherwise: lists what is
# missing and how to install it, and fails.
set -euo pipefail

PACKAGES=(
	cmake make gcc pkg-config python3
	liblz4-dev libzstd-dev liblzma-dev libdeflate-dev libisal-dev
	libxxhash-dev zlib1g-dev liburing-dev libfuse3-dev fuse3
	openssl libcmocka-dev libarchive-dev libjansson-dev libcurl4-openssl-dev umoci libarchive-tools zstd lz4 xz-utils bzip2
	nettle-dev libselinux1-dev
	nginx-light docker-registry apache2-utils curl
	scdoc man-db groff-base
	erofs-utils acl attr e2fsprogs util-linux kmod strace
)
[ "${1:-}" = "--bench" ] && PACKAGES+=(fio hyperfine squashfs-tools squashfs-tools-ng squashfuse debootstrap clang)
[ "${1:-}" = "--fuzz" ] && PACKAGES+=(clang libclang-rt-14-dev)
# scripts/deb-check.sh: build the Debian packages, lintian them.
[ "${1:-}" = "--deb" ] && PACKAGES+=(dpkg-dev debhelper lintian)

missing=()
for p in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	if [[ "$status" != *"ok installed"* ]]; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "erofskit: missing packages: ${missing[*]}" >&2
	echo "install them with: sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "erofskit: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q "${missing[@]}" >/dev/null
