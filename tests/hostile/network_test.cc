// The network wall (SPEC §6): sockets only AF_UNIX, no interface but
// loopback, no route out, and nothing on the host reachable. The host side
// listens on its own loopback (TCP on 127.0.0.1 and [::1], UDP, an abstract
// and a pathname AF_UNIX socket; HostFixtures); after every run
// RunHostileProject checks that none of them saw a connection or a datagram.
// The same seccomp policy runs on every OS-level tier (gVisor applies it
// inside its kernel, the microvm agent inside the VM), so every tier gives
// the same verdict: the kernel boundary the higher tiers add sits behind it.
// Where a program's probe could make a socket anyway (a policy regression),
// its script goes on to show whether that socket has a way out.
#include <algorithm>

#include "hostile/hostile.h"

namespace plimsoll::hostile {
namespace {

constexpr const char* kSockets = "EPERM";  // socket(2) for any family but AF_UNIX

// The answers of the program probing the other socket families: each
// family's socket(2) denied with `family_errnos`, then the AF_INET
// socketpair with `socketpair_errnos`.
std::vector<std::string> FamiliesDenied(const std::string& family_errnos,
                                        const std::string& socketpair_errnos) {
  std::vector<std::string> lines;
  for (const char* family : {"AF_VSOCK", "AF_ALG", "AF_KEY", "AF_BLUETOOTH", "AF_TIPC", "AF_RDS",
                             "AF_CAN", "AF_X25", "AF_APPLETALK", "AF_AX25"}) {
    lines.push_back(Denied(std::string("socket(") + family + ")", family_errnos));
  }
  lines.push_back(Denied("socketpair(AF_INET)", socketpair_errnos));
  return lines;
}

const Program kNetworkPrograms[] = {
    {
        .name = "TcpSocketsAreDenied",
        .verdict = "socket(AF_INET, SOCK_STREAM) fails with EPERM, for TCP and for the default "
                   "protocol, blocking or not",
        .script = R"py(import socket
from hostile import *
made = [
    attempt("socket(AF_INET, SOCK_STREAM)", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
    attempt("socket(AF_INET, SOCK_STREAM, IPPROTO_TCP)", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)),
    attempt("socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK)", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)),
    attempt("socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP)", lambda: socket.socket(socket.AF_INET, socket.SOCK_SEQPACKET, 132)),
]
if any(s is not None for s in made):  # the runtime's own kernel made them: no way out then
    print("interfaces:", interfaces())
    attempt("connect 192.0.2.1:9", lambda: way_out(socket.AF_INET, socket.SOCK_STREAM))
)py",
        .stdout_lines = {Denied("socket(AF_INET, SOCK_STREAM)", kSockets),
                         Denied("socket(AF_INET, SOCK_STREAM, IPPROTO_TCP)", kSockets),
                         Denied("socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK)", kSockets),
                         Denied("socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP)", kSockets)},
    },
    {
        .name = "UdpSocketsAreDenied",
        .verdict = "socket(AF_INET, SOCK_DGRAM) fails with EPERM, UDP and ICMP echo (ping) "
                   "sockets alike",
        .script = R"py(import socket
from hostile import *
udp = attempt("socket(AF_INET, SOCK_DGRAM)", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("socket(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE)", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM, 136))
ping = attempt("socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP))
if udp is not None or ping is not None:  # the runtime's own kernel made them: no way out then
    print("interfaces:", interfaces())
    attempt("udp to 192.0.2.1:9", lambda: way_out(socket.AF_INET, socket.SOCK_DGRAM))
    attempt("ping 192.0.2.1", lambda: way_out(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP))
)py",
        .stdout_lines = {Denied("socket(AF_INET, SOCK_DGRAM)", kSockets),
                         Denied("socket(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE)", kSockets),
                         Denied("socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)", kSockets)},
    },
    {
        .name = "RawAndPacketSocketsAreDenied",
        .verdict = "raw IP sockets and AF_PACKET sockets fail with EPERM",
        .script = R"py(import socket
from hostile import *
attempt("socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("socket(AF_INET, SOCK_RAW, IPPROTO_RAW)", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW))
attempt("socket(AF_PACKET, SOCK_RAW)", lambda: socket.socket(17, socket.SOCK_RAW, 0x0300))
attempt("socket(AF_PACKET, SOCK_DGRAM)", lambda: socket.socket(17, socket.SOCK_DGRAM, 0x0300))
)py",
        .stdout_lines = {Denied("socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)", kSockets),
                         Denied("socket(AF_INET, SOCK_RAW, IPPROTO_RAW)", kSockets),
                         Denied("socket(AF_PACKET, SOCK_RAW)", kSockets),
                         Denied("socket(AF_PACKET, SOCK_DGRAM)", kSockets)},
    },
    {
        .name = "NetlinkSocketsAreDenied",
        .verdict = "AF_NETLINK sockets (route, audit, uevents, netfilter, xfrm, crypto API) "
                   "fail with EPERM",
        .script = R"py(import os, socket, struct
from hostile import *
made = {}
for name, protocol in [("NETLINK_ROUTE", 0), ("NETLINK_AUDIT", 9), ("NETLINK_KOBJECT_UEVENT", 15),
                       ("NETLINK_NETFILTER", 12), ("NETLINK_XFRM", 6), ("NETLINK_CRYPTO", 21)]:
    made[name] = attempt(f"socket(AF_NETLINK, {name})", lambda: socket.socket(16, socket.SOCK_RAW, protocol))
# Where the runtime's own kernel made them (gVisor): they must change nothing
# and carry no kernel events.
def add_address():
    """RTM_NEWADDR 10.9.9.9/32 on interface 1 (lo); raises the kernel's answer."""
    RTM_NEWADDR, NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE, NLMSG_ERROR = 20, 1, 4, 0x200, 0x400, 2
    body = struct.pack("=BBBBI", socket.AF_INET, 32, 0, 0, 1)
    body += struct.pack("=HH4s", 8, 2, socket.inet_aton("10.9.9.9"))  # IFA_LOCAL
    flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_EXCL | NLM_F_CREATE
    route = made["NETLINK_ROUTE"]
    route.settimeout(2)
    route.send(struct.pack("=IHHII", 16 + len(body), RTM_NEWADDR, flags, 1, 0) + body)
    reply = route.recv(65536)
    if struct.unpack_from("=H", reply, 4)[0] == NLMSG_ERROR and struct.unpack_from("=i", reply, 16)[0]:
        code = -struct.unpack_from("=i", reply, 16)[0]
        raise OSError(code, os.strerror(code))
if made["NETLINK_ROUTE"] is not None:
    print("interfaces:", interfaces())
    attempt("RTM_NEWADDR 10.9.9.9 on lo", add_address)
if made["NETLINK_KOBJECT_UEVENT"] is not None:
    attempt("bind NETLINK_KOBJECT_UEVENT to its events", lambda: made["NETLINK_KOBJECT_UEVENT"].bind((0, 1)))
)py",
        .stdout_lines = {Denied("socket(AF_NETLINK, NETLINK_ROUTE)", kSockets),
                         Denied("socket(AF_NETLINK, NETLINK_AUDIT)", kSockets),
                         Denied("socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)", kSockets),
                         Denied("socket(AF_NETLINK, NETLINK_NETFILTER)", kSockets),
                         Denied("socket(AF_NETLINK, NETLINK_XFRM)", kSockets),
                         Denied("socket(AF_NETLINK, NETLINK_CRYPTO)", kSockets)},
    },
    {
        .name = "Ipv6SocketsAreDenied",
        .verdict = "AF_INET6 sockets (TCP, UDP, raw) fail with EPERM",
        .script = R"py(import socket
from hostile import *
made = [
    attempt("socket(AF_INET6, SOCK_STREAM)", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM)),
    attempt("socket(AF_INET6, SOCK_DGRAM)", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)),
    attempt("socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6)", lambda: socket.socket(socket.AF_INET6, socket.SOCK_RAW, 58)),
]
if any(s is not None for s in made):  # the runtime's own kernel made them: no way out then
    print("interfaces:", interfaces())
    attempt("connect [2001:db8::1]:9", lambda: way_out(socket.AF_INET6, socket.SOCK_STREAM))
    attempt("udp to [2001:db8::1]:9", lambda: way_out(socket.AF_INET6, socket.SOCK_DGRAM))
)py",
        .stdout_lines = {Denied("socket(AF_INET6, SOCK_STREAM)", kSockets),
                         Denied("socket(AF_INET6, SOCK_DGRAM)", kSockets),
                         Denied("socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6)", kSockets)},
    },
    {
        .name = "OtherSocketFamiliesAreDenied",
        .verdict = "every other family an exploit might reach for (vsock, the kernel crypto API "
                   "AF_ALG, AF_KEY, Bluetooth, TIPC, RDS, CAN, X.25, AppleTalk, AX.25) fails with "
                   "EPERM, and socketcall-era tricks are no way around it",
        .script = R"py(import socket
from hostile import *
for name, family, kind in [("AF_VSOCK", 40, socket.SOCK_STREAM), ("AF_ALG", 38, socket.SOCK_SEQPACKET),
                           ("AF_KEY", 15, socket.SOCK_RAW), ("AF_BLUETOOTH", 31, socket.SOCK_RAW),
                           ("AF_TIPC", 30, socket.SOCK_RDM), ("AF_RDS", 21, socket.SOCK_SEQPACKET),
                           ("AF_CAN", 29, socket.SOCK_RAW), ("AF_X25", 9, socket.SOCK_SEQPACKET),
                           ("AF_APPLETALK", 5, socket.SOCK_DGRAM), ("AF_AX25", 3, socket.SOCK_SEQPACKET)]:
    attempt(f"socket({name})", lambda: syscall(41, family, kind, 0))
attempt("socketpair(AF_INET)", lambda: syscall(53, socket.AF_INET, socket.SOCK_STREAM, 0, ctypes.create_string_buffer(8)))
)py",
        .stdout_lines = FamiliesDenied(kSockets, "EPERM|EOPNOTSUPP"),
    },
    {
        .name = "UnixSocketsStillWork",
        .verdict = "AF_UNIX stays usable inside the sandbox (socketpair, a listener in /tmp): the "
                   "wall is a policy, not a broken network stack",
        .script = R"py(import os, socket
from hostile import *
a, b = socket.socketpair()
a.sendall(b"ping"); print("socketpair(AF_UNIX):", b.recv(4).decode())
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind("/tmp/guest.sock"); server.listen(1)
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
client.connect("/tmp/guest.sock"); connection, _ = server.accept()
client.sendall(b"pong"); print("unix listener in /tmp:", connection.recv(4).decode())
)py",
        .stdout_lines = {"socketpair\\(AF_UNIX\\): ping", "unix listener in /tmp: pong"},
    },
    {
        .name = "HostLoopbackServicesAreUnreachable",
        .verdict = "the host's listeners on 127.0.0.1:{TCP_PORT}, [::1]:{TCP6_PORT}, UDP "
                   "127.0.0.1:{UDP_PORT}, the abstract socket @{ABSTRACT} and the socket file "
                   "{UNIX_PATH} are unreachable: every attempt fails (EPERM for inet sockets; "
                   "ECONNREFUSED or ENOENT for AF_UNIX, which the network namespace and the "
                   "mount namespace hide) and the host sees nothing",
        .script = R"py(import socket
from hostile import *
def tcp(family, address):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(address)
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"escaped", ("127.0.0.1", {UDP_PORT}))
def unix(address):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(address)
attempt("tcp 127.0.0.1", lambda: tcp(socket.AF_INET, ("127.0.0.1", {TCP_PORT})))
attempt("tcp [::1]", lambda: tcp(socket.AF_INET6, ("::1", {TCP6_PORT} or 1)))
attempt("tcp [::ffff:127.0.0.1]", lambda: tcp(socket.AF_INET6, ("::ffff:127.0.0.1", {TCP_PORT})))
attempt("udp 127.0.0.1", udp)
attempt("abstract unix", lambda: unix("\0{ABSTRACT}"))
attempt("unix socket file", lambda: unix("{UNIX_PATH}"))
)py",
        .stdout_lines = {Denied("tcp 127.0.0.1", "EPERM"), Denied("tcp [::1]", "EPERM"),
                         Denied("tcp [::ffff:127.0.0.1]", "EPERM"),
                         Denied("udp 127.0.0.1", "EPERM"),
                         Denied("abstract unix", "ECONNREFUSED|ENOENT"),
                         Denied("unix socket file", "ENOENT|ECONNREFUSED|EACCES")},
    },
    {
        .name = "NodeCannotReachTheHost",
        .verdict = "node's net and dgram modules cannot reach the host's TCP or UDP listener: "
                   "both report an error (EPERM from socket(2)) and the host sees nothing",
        .steps = {{"node", "probe.js", "{TOKEN}"}},
        .files = {{"probe.js", R"js(
const net = require('net');
const dgram = require('dgram');
const socket = net.connect({port: {TCP_PORT}, host: '127.0.0.1'});
socket.on('connect', () => { console.log('tcp: connected'); socket.destroy(); });
socket.on('error', (e) => console.log('tcp: ' + e.code));
try {
  const udp = dgram.createSocket('udp4');
  udp.on('error', (e) => { console.log('udp: ' + e.code); udp.close(); });
  udp.send('escaped', {UDP_PORT}, '127.0.0.1', (e) => {
    console.log('udp: ' + (e ? e.code : 'sent')); try { udp.close(); } catch (_) {}
  });
} catch (e) { console.log('udp: ' + e.code); }
)js"}},
        // node needs about 2 s to start under microvm's TCG on a quiet machine and was seen
        // past 10 s on a loaded one: the verdict is about the network, not start-up time.
        .timeout_ms = 40'000,
        .needs = {"node"},
        .check =
            [](const Result& result, const Description&) {
              EXPECT_NE(result.stdout_bytes.find("tcp: EPERM"), std::string::npos);
              EXPECT_EQ(result.stdout_bytes.find("tcp: connected"), std::string::npos);
              EXPECT_NE(result.stdout_bytes.find("udp: EPERM"), std::string::npos);
              EXPECT_EQ(result.stdout_bytes.find("udp: sent"), std::string::npos);
            },
    },
};

PLIMSOLL_HOSTILE_PROGRAMS(Network, kNetworkPrograms);

}  // namespace
}  // namespace plimsoll::hostile
