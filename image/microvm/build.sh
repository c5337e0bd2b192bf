#!/usr/bin/env bash
# Builds what the microvm provider boots (docs/microvm.md):
#
#   OUTPUT/vmlinuz             Debian's cloud kernel (kernel.pin), unchanged
#   OUTPUT/initramfs.cpio.gz   busybox, the virtio + root fs modules, /init
#   OUTPUT/rootfs.erofs        the guest image's rootfs/ as a read-only disk (EROFS)
#   OUTPUT/kernel              "<package> <version> <release>"
#   OUTPUT/identity            the guest image's identity the disk was made from
#   OUTPUT/sha256sums          of the three artifacts
#   OUTPUT/inputs              the input key; written last (no file: incomplete)
#
# usage: build.sh --image DIR --output DIR [--cache DIR]
#   --image   a guest image directory (rootfs/ + identity; `plimsoll image build`)
#             default: $PLIMSOLL_IMAGE
#   --output  where the artifacts go (CMake: <build>/microvm)
#   --cache   default ${PLIMSOLL_CACHE:-$HOME/.cache/plimsoll}; the kernel .deb
#             and the files taken from it are kept under CACHE/microvm
#
# Cached by input hash: the key covers this script, init, kernel.pin, the
# busybox binary, the image's identity and the versions of the tools that
# write the artifacts. When OUTPUT/inputs holds the same key the build is a
# no-op. Both artifacts we make are reproducible: the same inputs give the
# same bytes (sorted cpio with fixed owners and mtimes, gzip -n; mkfs.erofs
# with a fixed UUID and every timestamp fixed, so the disk's bytes depend only
# on what the image's identity covers: paths, types, modes, owners, content).
#
# Needs root (the image has root-only files), apt-get + dpkg-deb, GNU cpio,
# gzip, mkfs.erofs (erofs-utils) and a static busybox (busybox-static):
# scripts/bootstrap installs them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
image="${PLIMSOLL_IMAGE:-}"
output=""
cache="${PLIMSOLL_CACHE:-$HOME/.cache/plimsoll}"
busybox=/bin/busybox

usage() {
  echo "usage: $0 --image DIR --output DIR [--cache DIR]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --image) image="${2:?}"; shift 2 ;;
    --output) output="${2:?}"; shift 2 ;;
    --cache) cache="${2:?}"; shift 2 ;;
    -h | --help) usage ;;
    *) usage ;;
  esac
done
[ -n "$image" ] && [ -n "$output" ] || usage

say() { echo "microvm_guest: $*"; }
die() {
  echo "microvm_guest: error: $*" >&2
  exit 1
}

# The drivers the VM's devices need (virtio-mmio transport, virtio-serial for
# the agent's channel, virtio-blk for the disk) and the root filesystem's.
# Their dependencies are found in the modules themselves and loaded first.
# EROFS, uncompressed, was chosen over squashfs (slower to read under TCG)
# and ext4 (built in, but mke2fs -d cannot make a reproducible image); see
# docs/microvm.md "Choices".
wanted_modules=(virtio_mmio virtio_console virtio_blk erofs)
root_fs_type=erofs
# Every file in the initramfs and on the disk gets this mtime
# (2025-01-01T00:00:00Z, the guest image recipe's source_date_epoch).
fixed_time=1735689600
# The disk's filesystem UUID (fixed: reproducible output).
disk_uuid=8c1d7f52-7a41-4c55-9f0e-2d6b1e3a9c01
# The applets /init uses (see init); each becomes a symlink to busybox.
applets=(sh cat chroot echo insmod ln mkdir mknod mount reboot sleep sync unshare)

# ---------------------------------------------------------------- checks ---
[ -d "$image/rootfs" ] || die "$image/rootfs is not a directory (build the guest image first)."
[ -s "$image/identity" ] || die "$image/identity is missing: $image is not a complete guest image."
[ -x "$image/rootfs/usr/local/bin/plimsoll-guest" ] ||
  die "the guest image $image has no /usr/local/bin/plimsoll-guest."
for tool in apt-get dpkg-deb cpio gzip mkfs.erofs sha256sum flock; do
  command -v "$tool" >/dev/null || die "$tool is not installed (run scripts/bootstrap)."
done
[ -x "$busybox" ] || die "$busybox is missing (install busybox-static: run scripts/bootstrap)."
if LC_ALL=C readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter'; then
  die "$busybox is dynamically linked; the initramfs needs busybox-static."
fi

# kernel.pin: `key = value` lines.
declare -A pin=()
while IFS= read -r line; do
  line="${line%%#*}"
  [[ "$line" =~ ^[[:space:]]*$ ]] && continue
  [[ "$line" =~ ^[[:space:]]*([a-z0-9_]+)[[:space:]]*=[[:space:]]*(.*[^[:space:]])[[:space:]]*$ ]] ||
    die "kernel.pin: cannot read the line '$line'."
  pin[${BASH_REMATCH[1]}]="${BASH_REMATCH[2]}"
done <"$here/kernel.pin"
for key in package version release size sha256; do
  [ -n "${pin[$key]:-}" ] || die "kernel.pin has no '$key'."
done

# ------------------------------------------------------------- input key ---
tool_versions=$(
  mkfs.erofs --version 2>&1 | head -n 1
  cpio --version | head -n 1
  gzip --version | head -n 1
)
key=$(
  {
    echo "plimsoll-microvm-guest-v1"
    sha256sum "$here/build.sh" "$here/init" "$here/kernel.pin" "$busybox" | cut -d' ' -f1
    cat "$image/identity"
    echo "$tool_versions"
  } | sha256sum | cut -d' ' -f1
)

mkdir -p "$(dirname "$output")"
exec 9>"$output.lock"
flock 9
artifacts=(vmlinuz initramfs.cpio.gz rootfs.erofs)
up_to_date=1
[ "$(cat "$output/inputs" 2>/dev/null)" = "$key" ] || up_to_date=0
for name in "${artifacts[@]}"; do [ -s "$output/$name" ] || up_to_date=0; done
if [ "$up_to_date" = 1 ]; then
  say "up to date ($output)"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/plimsoll-microvm.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---------------------------------------------------------------- kernel ---
# CACHE/microvm/debs/<package>_<version>_amd64.deb, verified on every use;
# CACHE/microvm/kernel/<package>_<version>-<hash of wanted_modules>/ holds
# what we take from it.
deb_dir="$cache/microvm/debs"
deb="$deb_dir/${pin[package]}_${pin[version]}_amd64.deb"
modules_key=$(echo "${wanted_modules[*]}" | sha256sum | cut -c1-12)
kernel_dir="$cache/microvm/kernel/${pin[package]}_${pin[version]}-$modules_key"
mkdir -p "$deb_dir" "$cache/microvm/kernel"

verify_deb() {
  [ -f "$1" ] || return 1
  [ "$(stat -c %s "$1")" = "${pin[size]}" ] || return 1
  [ "$(sha256sum "$1" | cut -d' ' -f1)" = "${pin[sha256]}" ] || return 1
}

if ! verify_deb "$deb"; then
  rm -f "$deb"
  say "downloading ${pin[package]}=${pin[version]} from Debian's archive"
  mkdir -p "$work/download"
  sandbox_user=()
  [ "$(id -u)" = 0 ] && sandbox_user=(-o APT::Sandbox::User=root)
  if (cd "$work/download" && apt-get download -q "${sandbox_user[@]}" \
    "${pin[package]}=${pin[version]}" >"$work/download.log" 2>&1); then
    got=$(find "$work/download" -name '*.deb' | head -n 1)
    verify_deb "$got" || die "the downloaded $(basename "$got") does not match kernel.pin \
(size ${pin[size]}, sha256 ${pin[sha256]}); refusing it."
  elif [ "${PLIMSOLL_MICROVM_STRICT_PIN:-0}" = 1 ]; then
    cat "$work/download.log" >&2
    die "apt-get could not download ${pin[package]}=${pin[version]}. Debian drops a kernel from \
its archive once a newer one supersedes it (and apt needs an up-to-date 'apt-get update'): \
re-pin image/microvm/kernel.pin as docs/microvm.md says, or put the pinned .deb at $deb."
  else
    # The pinned kernel is gone from the archive: take the cloud kernel
    # bookworm serves now, say so loudly, and record what was used (the
    # output's `kernel` file and sha256sums name it). A build that must not
    # drift sets PLIMSOLL_MICROVM_STRICT_PIN=1.
    current=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
      awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
    [ -n "$current" ] || die "apt-get could not download ${pin[package]}=${pin[version]}, and \
apt knows no current linux-image-cloud-amd64 either (run apt-get update)."
    rm -rf "$work/download" && mkdir -p "$work/download"
    (cd "$work/download" && apt-get download -q "${sandbox_user[@]}" "$current" \
      >"$work/download.log" 2>&1) || { cat "$work/download.log" >&2;
      die "apt-get could not download ${pin[package]}=${pin[version]} nor $current."; }
    got=$(find "$work/download" -name '*.deb' | head -n 1)
    pin[package]=$current
    pin[version]=$(dpkg-deb -f "$got" Version)
    pin[release]=${current#linux-image-}
    pin[size]=$(stat -c %s "$got")
    pin[sha256]=$(sha256sum "$got" | cut -d' ' -f1)
    say "WARNING: the pinned kernel is gone from Debian's archive; using ${pin[package]} \
${pin[version]} (sha256 ${pin[sha256]}) unpinned. Re-pin image/microvm/kernel.pin (docs/microvm.md)."
    deb="$deb_dir/${pin[package]}_${pin[version]}_amd64.deb"
    kernel_dir="$cache/microvm/kernel/${pin[package]}_${pin[version]}-$modules_key"
  fi
  mv "$got" "$deb.partial"
  mv "$deb.partial" "$deb"
fi

if [ ! -f "$kernel_dir/complete" ]; then
  say "unpacking $(basename "$deb")"
  rm -rf "$kernel_dir" "$kernel_dir.partial"
  mkdir -p "$work/deb" "$kernel_dir.partial/modules"
  dpkg-deb -x "$deb" "$work/deb"
  release="${pin[release]}"
  tree="$work/deb/lib/modules/$release"
  [ -f "$work/deb/boot/vmlinuz-$release" ] || die "the package has no /boot/vmlinuz-$release."
  [ -d "$tree" ] || die "the package has no /lib/modules/$release."
  cp "$work/deb/boot/vmlinuz-$release" "$kernel_dir.partial/vmlinuz"
  cp "$work/deb/boot/config-$release" "$kernel_dir.partial/config"
  # Every module of the package by name, for the dependency walk below.
  (cd "$tree" && find kernel -name '*.ko' | LC_ALL=C sort) >"$kernel_dir.partial/all-modules"
  cp "$tree/modules.builtin" "$kernel_dir.partial/modules.builtin"

  # Depth-first: dependencies before the module that needs them.
  declare -A seen=()
  order=()
  module_path() { grep -E "/$1\.ko$" "$kernel_dir.partial/all-modules" | head -n 1; }
  builtin_module() {
    grep -qE "/$1\.ko$" "$kernel_dir.partial/modules.builtin" ||
      grep -qE "/$(echo "$1" | tr _ -)\.ko$" "$kernel_dir.partial/modules.builtin"
  }
  visit() {
    local name="$1" path depends dep
    [ -n "${seen[$name]:-}" ] && return 0
    seen[$name]=1
    path=$(module_path "$name")
    [ -n "$path" ] || path=$(module_path "$(echo "$name" | tr _ -)")
    if [ -z "$path" ]; then
      builtin_module "$name" && return 0
      die "the kernel has no module $name and does not build it in."
    fi
    depends=$(tr '\0' '\n' <"$tree/$path" | sed -n 's/^depends=//p' | head -n 1)
    for dep in ${depends//,/ }; do visit "$dep"; done
    cp "$tree/$path" "$kernel_dir.partial/modules/$name.ko"
    order+=("$name")
  }
  for module in "${wanted_modules[@]}"; do visit "$module"; done
  printf '%s\n' "${order[@]}" >"$kernel_dir.partial/modules/order"
  rm -f "$kernel_dir.partial/all-modules"
  touch "$kernel_dir.partial/complete"
  mv "$kernel_dir.partial" "$kernel_dir"
  rm -rf "$work/deb"
fi

# ------------------------------------------------------------- initramfs ---
say "assembling the initramfs"
staging="$work/initramfs"
mkdir -p "$staging"/{bin,dev,proc,sys,newroot,lib/modules}
install -m 0755 "$here/init" "$staging/init"
install -m 0755 "$busybox" "$staging/bin/busybox"
for applet in "${applets[@]}"; do ln -s busybox "$staging/bin/$applet"; done
while read -r module; do
  install -m 0644 "$kernel_dir/modules/$module.ko" "$staging/lib/modules/$module.ko"
done <"$kernel_dir/modules/order"
install -m 0644 "$kernel_dir/modules/order" "$staging/lib/modules/order"
echo "$root_fs_type" >"$staging/lib/modules/rootfstype"
chmod 0644 "$staging/lib/modules/rootfstype"
find "$staging" -type d -exec chmod 0755 {} +
find "$staging" -exec touch -h -d "@$fixed_time" {} +
rm -rf "$output.partial"
mkdir -p "$output.partial"
(cd "$staging" && find . -print0 | LC_ALL=C sort -z |
  cpio --null --create --format=newc --owner=0:0 --reproducible --quiet) |
  gzip -9 -n >"$output.partial/initramfs.cpio.gz"

# ------------------------------------------------------------- root disk ---
# Uncompressed: TCG emulates every instruction of a decompressor. Owners and
# modes are the image's (its identity covers them); xattrs are left out (the
# image has none, and its identity does not cover them). -T gives every
# inode and the superblock the same fixed time: timestamps are not part of
# the identity either. (The image's own .pyc files are checked-hash ones,
# written under SOURCE_DATE_EPOCH, so Python does not find them stale; a
# timestamp-based .pyc added by a variant would be recompiled in memory.)
say "writing the root disk from $image/rootfs"
mkfs.erofs --quiet -x-1 -T"$fixed_time" -U "$disk_uuid" \
  "$output.partial/rootfs.erofs" "$image/rootfs" >/dev/null

cp "$kernel_dir/vmlinuz" "$output.partial/vmlinuz"
echo "${pin[package]} ${pin[version]} ${pin[release]}" >"$output.partial/kernel"
cp "$image/identity" "$output.partial/identity"
(cd "$output.partial" && sha256sum "${artifacts[@]}") >"$output.partial/sha256sums"
echo "$key" >"$output.partial/inputs"

# Swap the new directory in. A VMM still running from the old one keeps its
# open files.
rm -rf "$output"
mv "$output.partial" "$output"
say "built $output ($(du -sh "$output" | cut -f1); kernel ${pin[release]}, image $(cat "$image/identity"))"
