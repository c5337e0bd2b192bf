#!/usr/bin/env bash
# Installs the plimsoll .deb into a fresh Debian chroot and removes it again
# (issue 18 item 5; `make package` runs it):
#
#   tests/package/deb_install_test.sh DEB
#
# 1. mmdebstrap makes a bookworm chroot (variant apt, from Debian's archive);
#    the list of its files is kept.
# 2. `apt-get install ./plimsoll_*.deb` inside it: the package's Depends must
#    resolve from the archive alone.
# 3. `plimsoll version`, `plimsoll run --provider embedded -e 'console.log(1)'`
#    (must print 1), `plimsolld --help`, `plimsoll-attest keygen` and `pubkey`
#    (a public key in PEM), `man -w` of the three pages, and the conffile and
#    unit are where the package says.
# 4. `apt-get remove`: every file of the package is gone but the conffile,
#    which dpkg keeps and marks (state `rc`); `apt-get purge` (and autoremove
#    of the libraries apt pulled in): that goes too, and the chroot's file list
#    equals the one before the install.
# Needs root and mmdebstrap; without them it prints "skipped: <reason>" and
# exits 77.
set -euo pipefail

deb=${1:?usage: deb_install_test.sh DEB}
deb=$(readlink -f "$deb")
if [[ $(id -u) -ne 0 ]]; then echo "skipped: installing into a chroot needs root"; exit 77; fi
if ! command -v mmdebstrap >/dev/null; then echo "skipped: mmdebstrap is not installed"; exit 77; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/plimsoll-deb-test.XXXXXX")
chroot_dir=$work/chroot
cleanup() {
  for mount in proc dev; do umount -l "$chroot_dir/$mount" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "deb_install_test: FAILED: $*" >&2; exit 1; }
in_chroot() { chroot "$chroot_dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
file_list() {  # every path in the chroot but the ones apt and dpkg rewrite
  (cd "$chroot_dir" && find . -xdev \( -path ./proc -o -path ./dev -o -path ./var/lib/apt \
     -o -path ./var/cache -o -path ./var/log -o -path ./var/lib/dpkg -o -path ./tmp \
     -o -path ./etc/ld.so.cache -o -path ./root \) -prune -o -print | sort)
}

echo "deb_install_test: a fresh bookworm chroot (mmdebstrap --variant=apt)"
mmdebstrap --quiet --variant=apt --include=man-db bookworm "$chroot_dir" \
  http://deb.debian.org/debian >/dev/null
mount -t proc proc "$chroot_dir/proc"
mount --bind /dev "$chroot_dir/dev"
file_list > "$work/before"

cp "$deb" "$chroot_dir/tmp/"
name=$(basename "$deb")
echo "deb_install_test: apt-get install ./$name"
in_chroot sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/$name" \
  > "$work/install.log" 2>&1 || { cat "$work/install.log"; fail "the package did not install"; }
rm -f "$chroot_dir/tmp/$name"

version=$(in_chroot plimsoll version) || fail "plimsoll version exited non-zero"
echo "deb_install_test: plimsoll version: $version"
[[ $version == plimsoll* ]] || fail "plimsoll version printed \"$version\""
output=$(in_chroot plimsoll run --provider embedded -e 'console.log(1)' 2>"$work/run.err") \
  || { cat "$work/run.err"; fail "the embedded run exited non-zero"; }
grep -q '^1$' <<<"$output" || { echo "$output"; fail "the embedded run did not print 1"; }
echo "deb_install_test: plimsoll run --provider embedded printed 1"
in_chroot plimsolld --help >/dev/null || fail "plimsolld --help exited non-zero"
in_chroot man -w plimsoll >/dev/null || fail "no man page for plimsoll"
in_chroot man -w 8 plimsolld >/dev/null || fail "no man page for plimsolld"
in_chroot man -w plimsoll-attest >/dev/null || fail "no man page for plimsoll-attest"
in_chroot plimsoll-attest keygen --out /tmp/attest-key.pem >/dev/null \
  || fail "plimsoll-attest keygen exited non-zero"
pubkey=$(in_chroot plimsoll-attest pubkey /tmp/attest-key.pem) \
  || fail "plimsoll-attest pubkey exited non-zero"
grep -q '^-----BEGIN PUBLIC KEY-----$' <<<"$pubkey" || fail "plimsoll-attest pubkey printed: $pubkey"
rm -f "$chroot_dir/tmp/attest-key.pem"
echo "deb_install_test: plimsoll-attest made a key and printed its public key"
[[ -f $chroot_dir/etc/plimsoll/plimsolld.env ]] || fail "the conffile is missing"
grep -q 'ExecStart=/usr/bin/plimsolld' "$chroot_dir/lib/systemd/system/plimsolld.service" \
  || fail "the unit does not start /usr/bin/plimsolld"
[[ -x $chroot_dir/usr/lib/plimsoll/guest/plimsoll-guest ]] || fail "no guest agent"
[[ -f $chroot_dir/usr/share/plimsoll/image/variants/data/recipe ]] || fail "no image recipes"
variants=$(in_chroot plimsoll image build --variant nope 2>&1 || true)
grep -q '/usr/share/plimsoll/image/variants/nope/recipe' <<<"$variants" \
  || fail "plimsoll image does not look for variants in /usr/share/plimsoll: $variants"
echo "deb_install_test: binaries, man pages, unit, conffile, guest binaries and recipes in place"

# The package's files and links (not its directories, which other packages share).
dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -v '/$' | sed 's|^\./|/|' | sort > "$work/package-files"
in_chroot sh -c 'DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq plimsoll' > /dev/null 2>&1 \
  || fail "apt-get remove failed"
state=$(in_chroot dpkg-query -W -f='${db:Status-Abbrev}' plimsoll)
[[ $state == rc* ]] || fail "after remove the package's state is \"$state\", not rc (config kept)"
[[ -f $chroot_dir/etc/plimsoll/plimsolld.env ]] || fail "remove deleted the conffile"
while read -r path; do
  [[ $path == /etc/plimsoll/* ]] && continue
  if [[ -f $chroot_dir$path || -L $chroot_dir$path ]]; then fail "remove left $path"; fi
done < "$work/package-files"
echo "deb_install_test: removed; only the conffile is left, marked (state rc)"

# Purged, and the libraries apt installed for it (marked automatic) autoremoved.
in_chroot sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq plimsoll &&
                 DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -qq' > /dev/null 2>&1 \
  || fail "apt-get purge failed"
file_list > "$work/after"
if ! diff -u "$work/before" "$work/after" > "$work/diff"; then
  cat "$work/diff"
  fail "the chroot after purge differs from before the install"
fi
echo "deb_install_test: purged; the chroot's files are exactly those before the install"
echo "deb_install_test: passed"
