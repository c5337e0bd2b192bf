"""A minimal initramfs for the raw QEMU boot baseline (`qemu-microvm-boot`), written at run time.

It holds a static busybox, /dev/console (so the kernel gives /init the serial console as stdin,
stdout and stderr) and an /init that prints a marker line and reboots at once:

    #!/bin/busybox sh
    /bin/busybox echo MARKER
    exec /bin/busybox reboot -f

QEMU runs with -no-reboot, so `reboot -f` ends QEMU. The archive is a `newc` cpio (what the kernel
unpacks), gzip-compressed like the provider's own initramfs, with fixed owners and timestamps, so
its bytes depend only on busybox and the marker. Written with the standard library only (no cpio
or mknod: the device node is a cpio entry, not a file on the host).
"""

import gzip
import os
import stat

MARKER = "PLIMSOLL-BENCH-BOOTED"
_NEWC_MAGIC = "070701"


class _Archive:
    def __init__(self):
        self.data = bytearray()
        self.inode = 0

    def _pad(self):
        self.data += b"\0" * (-len(self.data) % 4)

    def add(self, name, mode, content=b"", device=(0, 0)):
        self.inode += 1
        encoded = name.encode() + b"\0"
        fields = (self.inode, mode, 0, 0, 1, 0, len(content), 0, 0, device[0], device[1],
                  len(encoded), 0)
        self.data += (_NEWC_MAGIC + "".join(f"{value:08x}" for value in fields)).encode()
        self.data += encoded
        self._pad()
        self.data += content
        self._pad()

    def finish(self):
        self.add("TRAILER!!!", 0)
        self.data += b"\0" * (-len(self.data) % 512)
        return bytes(self.data)


def init_script(marker=MARKER):
    return (f"#!/bin/busybox sh\n/bin/busybox echo {marker}\nexec /bin/busybox reboot -f\n"
            ).encode()


def write_marker_initramfs(path, busybox, marker=MARKER):
    """Write the gzip-compressed initramfs to path; busybox must be a static binary."""
    with open(busybox, "rb") as handle:
        binary = handle.read()
    archive = _Archive()
    archive.add("bin", stat.S_IFDIR | 0o755)
    archive.add("dev", stat.S_IFDIR | 0o755)
    archive.add("dev/console", stat.S_IFCHR | 0o600, device=(5, 1))
    archive.add("bin/busybox", stat.S_IFREG | 0o755, binary)
    archive.add("init", stat.S_IFREG | 0o755, init_script(marker))
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(gzip.compress(archive.finish(), compresslevel=9, mtime=0))
    return path
