#!/bin/sh
# mmdebstrap customize hook for the plimsoll guest image: runs on the host,
# as the build's user, after the packages are installed, with the new root
# as "$1". It turns a Debian minbase tree into the guest tree:
#   - the unprivileged guest user (uid/gid 1000, home /work; see
#     src/guest/protocol.h kGuestUid/kGuestGid/kWorkDirectory),
#   - empty mount points the providers mount over,
#   - nothing that differs between two builds of the same recipe on the same
#     day, and nothing a sandbox does not need.
set -eu
root="$1"
[ -d "$root/etc" ] || { echo "customize.sh: $root is not a root tree" >&2; exit 1; }

# The guest user and group. Written directly (not with useradd) so that no
# "last password change" date of today lands in /etc/shadow.
grep -q '^guest:' "$root/etc/group" || echo 'guest:x:1000:' >> "$root/etc/group"
grep -q '^guest:' "$root/etc/gshadow" || echo 'guest:!::' >> "$root/etc/gshadow"
grep -q '^guest:' "$root/etc/passwd" ||
  echo 'guest:x:1000:1000:plimsoll guest:/work:/bin/sh' >> "$root/etc/passwd"
grep -q '^guest:' "$root/etc/shadow" || echo 'guest:!:0:0:99999:7:::' >> "$root/etc/shadow"
# pwconv stamped the existing entries with the build day: pin them to day 0
# of the field ("last changed: unknown"), which no login here reads anyway.
sed -i -E 's/^([^:]*:[^:]*:)[0-9]+:/\10:/' "$root/etc/shadow"

# Mount points. The root filesystem is read-only in every sandbox; these are
# where the providers mount tmpfs (/work, /tmp). /proc, /sys and /dev exist
# already (mmdebstrap has them mounted while this hook runs, so they are not
# touched here; mmdebstrap leaves them empty but for its device nodes).
for dir in work tmp var/tmp run; do
  mkdir -p "$root/$dir"
done
chmod 0755 "$root/work" "$root/run"
chmod 1777 "$root/tmp" "$root/var/tmp"

# No network inside: no resolver configuration from the build host. A fixed
# host name and hosts file, so the tree does not depend on the build host.
rm -f "$root/etc/resolv.conf"
echo sandbox > "$root/etc/hostname"
printf '127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
: > "$root/etc/machine-id"

# Caches, logs and backups: rebuilt or unneeded, and they differ per build.
rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"* "$root/var/cache/debconf/"*-old \
       "$root/var/lib/dpkg/"*-old "$root/var/cache/ldconfig/aux-cache" "$root/var/log/"*
find "$root/var/log" -mindepth 1 -delete 2>/dev/null || true
