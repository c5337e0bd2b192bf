#!/usr/bin/env python3
"""Starts the daemons and proxies of the client conformance suite, then one client's tests.

    harness.py --lang python|typescript|go [--part all|nolinux|linux] --plimsolld BIN
               --plimsoll CLI --work DIR

tests/clients/README.md lists what is started and the environment the client's
`clients/<lang>/run-tests` gets. The linux daemon needs root and the guest image (PLIMSOLL_IMAGE);
without them its scenarios are skipped with the reason (the only skip a client test may make),
unless PLIMSOLL_REQUIRE_PROVIDERS lists linux, and then that is a failure. `--part` splits the
suite for CTest: `nolinux` starts no linux daemon and gives the client only the scenarios that do
not need linux (a filtered copy of the file; its tests that need linux are not run, the linux part
runs them), `linux` gives the client only the scenarios that need linux and a linux daemon in the
placement pool; `all` (the default) is both at once. Exit status: the client's, or 1 when a daemon
misbehaved; 77 (CTest's skip) for the linux part on a host that cannot run linux.
"""
import argparse
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "common"))
import plimsolld  # noqa: E402
from inventory_upstream import InventoryUpstream, grants_file  # noqa: E402

RUN_TIMEOUT_SECONDS = 1400


def linux_precondition(image):
    """Why this machine cannot host the linux provider, or ""."""
    if os.geteuid() != 0:
        return "the linux provider needs root"
    if not image or not os.path.isdir(image):
        return f"no guest image (PLIMSOLL_IMAGE={image!r})"
    return ""


def free_port():
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_tls_files(directory):
    """A CA made for this run and a certificate it signed for 127.0.0.1 and localhost."""
    def openssl(*arguments):
        subprocess.run(["openssl", *arguments], check=True, capture_output=True)

    ca_key, ca_cert = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.pem")
    key, csr, cert = (os.path.join(directory, name) for name in ("server.key", "server.csr",
                                                                 "server.pem"))
    extensions = os.path.join(directory, "server.ext")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", ca_key, "-out", ca_cert, "-days", "2", "-subj", "/CN=plimsoll clients test CA")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", csr, "-subj", "/CN=localhost")
    with open(extensions, "w") as out:
        out.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key, "-CAcreateserial",
            "-out", cert, "-days", "2", "-extfile", extensions)
    return ca_cert, cert, key


def client_tools(lang):
    """Where scripts/bootstrap installs the client's pinned dev tools (shared by both parts)."""
    cache = os.environ.get("PLIMSOLL_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                             "plimsoll")
    return os.path.join(cache, f"clients-{lang}-tools")


def scenarios_file(part, scratch):
    """The scenario file; for a part, a copy holding only its scenarios (needs linux or not)."""
    path = os.path.join(REPO, "testdata", "clients", "scenarios.json")
    if part == "all":
        return path
    with open(path) as source:
        document = json.load(source)
    document["scenarios"] = [s for s in document["scenarios"]
                             if (s.get("needs") == "linux") == (part == "linux")]
    filtered = os.path.join(scratch, f"scenarios-{part}.json")
    with open(filtered, "w") as out:
        json.dump(document, out)
    return filtered


class Proxy:
    """tests/clients/adversary.py in front of one daemon."""

    def __init__(self, upstream_port, record_dir):
        self.command = [sys.executable, os.path.join(HERE, "adversary.py"),
                        "--upstream", f"127.0.0.1:{upstream_port}", "--record-dir", record_dir]
        self.process = None
        self.url = ""

    def __enter__(self):
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if "serving 127.0.0.1:" not in line:
            self.process.kill()
            raise RuntimeError(f"adversary did not serve: {line!r}")
        self.url = "http://" + line.split("serving ")[1].strip()
        return self

    def __exit__(self, *_):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", required=True, choices=("python", "typescript", "go"))
    parser.add_argument("--plimsolld", required=True)
    parser.add_argument("--plimsoll", required=True, help="the CLI, for the caller store")
    parser.add_argument("--work", required=True, help="the client's work directory (kept)")
    parser.add_argument("--part", default="all", choices=("all", "nolinux", "linux"))
    options = parser.parse_args()

    image = os.environ.get("PLIMSOLL_IMAGE", "")
    required = {p for p in os.environ.get("PLIMSOLL_REQUIRE_PROVIDERS", "").split(",") if p}
    # The one skip: this host cannot run the linux provider. The nolinux part needs none (its
    # client is given no linux scenario and runs no test that needs linux), so it has no skip.
    linux_skip = "" if options.part == "nolinux" else linux_precondition(image)
    if linux_skip and "linux" in required:
        print(f"clients: linux is required (PLIMSOLL_REQUIRE_PROVIDERS) but: {linux_skip}")
        return 1
    if linux_skip:
        print(f"skipped: linux scenarios: {linux_skip}")
    if options.part == "linux" and linux_skip:
        return 77

    os.makedirs(options.work, exist_ok=True)
    daemon_env = {"PATH": os.environ.get("PATH", "")}
    if image:
        daemon_env["PLIMSOLL_IMAGE"] = image

    with contextlib.ExitStack() as stack:
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="plimsoll-clients-"))
        socket_path = os.path.join(scratch, "embedded.sock")

        def daemon(*arguments):
            return stack.enter_context(plimsolld.Daemon(options.plimsolld, list(arguments),
                                                        env=daemon_env))

        embedded = daemon("--provider", "embedded", "--dev", "--unix-socket", socket_path)
        wants_linux = options.part != "nolinux" and not linux_skip
        linux = daemon("--provider", "linux", "--dev") if wants_linux else None

        ca, cert, key = make_tls_files(scratch)
        store = os.path.join(scratch, "callers")
        token = subprocess.run([options.plimsoll, "callers", "create", "clients", "--scope", "admin",
                                "--store", store], check=True, capture_output=True,
                               text=True).stdout.strip()
        tls = daemon("--provider", "embedded", "--tls-cert", cert, "--tls-key", key,
                     "--callers", store)

        # Grants (SPEC §8): an embedded daemon with a broker in front of a loopback upstream.
        inventory = stack.enter_context(InventoryUpstream())
        grant_token = "sk-clients-" + secrets.token_hex(16)
        granted = stack.enter_context(plimsolld.Daemon(
            options.plimsolld, ["--provider", "embedded", "--dev",
                                "--grants", grants_file(scratch, inventory.origin)],
            env={**daemon_env, "PLIMSOLL_TEST_INVENTORY_TOKEN": grant_token}))

        placement_first = daemon("--provider", "embedded", "--dev")
        placement_second = linux or daemon("--provider", "embedded", "--dev")
        placement_third = daemon("--provider", "disabled", "--dev")

        # The agent integrations' examples run through mode `record` (tests/clients/examples.py).
        replays = os.path.join(os.path.abspath(options.work), "replays")
        os.makedirs(replays, exist_ok=True)
        adversary = stack.enter_context(Proxy(embedded.port, replays))
        adversary_linux = stack.enter_context(Proxy(linux.port, replays)) if linux else None

        def url(d):
            return f"http://127.0.0.1:{d.port}"

        environment = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", scratch),
            "LANG": "C.UTF-8",
            "PLIMSOLL_REPO": REPO,
            "PLIMSOLL_CLIENT_WORK": os.path.abspath(options.work),
            "PLIMSOLL_CLIENT_TOOLS": client_tools(options.lang),
            "PLIMSOLL_TEST_EMBEDDED_URL": url(embedded),
            "PLIMSOLL_TEST_EMBEDDED_UNIX": f"unix:{socket_path}",
            "PLIMSOLL_TEST_LINUX_URL": url(linux) if linux else "",
            "PLIMSOLL_TEST_LINUX_SKIP": linux_skip,
            "PLIMSOLL_TEST_TLS_URL": f"https://127.0.0.1:{tls.port}",
            "PLIMSOLL_TEST_TLS_CA": ca,
            "PLIMSOLL_TEST_TLS_TOKEN": token,
            "PLIMSOLL_TEST_GRANTS_URL": url(granted),
            "PLIMSOLL_TEST_GRANT_TOKEN": grant_token,
            "PLIMSOLL_TEST_ADVERSARY_URL": adversary.url,
            "PLIMSOLL_TEST_ADVERSARY_LINUX_URL": adversary_linux.url if adversary_linux else "",
            "PLIMSOLL_TEST_UNREACHABLE_URL": f"http://127.0.0.1:{free_port()}",
            "PLIMSOLL_TEST_PLACEMENT_URLS": ",".join(
                url(d) for d in (placement_first, placement_second, placement_third)),
            "PLIMSOLL_TEST_PLACEMENT_STOP_PID": str(placement_first.pid),
            "PLIMSOLL_TEST_SCENARIOS": scenarios_file(options.part, scratch),
            "PLIMSOLL_TEST_PART": options.part,
            # A variable above that a test finds absent fails it: it never skips.
            "PLIMSOLL_CLIENT_REQUIRE_HARNESS": "1",
            "PLIMSOLL_TEST_REPLAYS": replays,
            "PLIMSOLL_TEST_VECTORS": os.path.join(REPO, "testdata", "records", "vectors.json"),
        }
        for passed in ("PLIMSOLL_CACHE", "TMPDIR", "GOFLAGS", "GOPROXY", "npm_config_cache",
                       "PIP_INDEX_URL", "PIP_FIND_LINKS", "PIP_CERT", "SSL_CERT_FILE"):
            if passed in os.environ:
                environment[passed] = os.environ[passed]

        command = [os.path.join(REPO, "clients", options.lang, "run-tests")]
        started = time.monotonic()
        try:
            status = subprocess.run(command, env=environment, cwd=os.path.join(REPO, "clients",
                                                                               options.lang),
                                    timeout=RUN_TIMEOUT_SECONDS).returncode
        except subprocess.TimeoutExpired:
            print(f"clients: {options.lang}: run-tests did not finish in {RUN_TIMEOUT_SECONDS} s")
            status = 1
        print(f"clients: {options.lang}: run-tests exited {status} after "
              f"{time.monotonic() - started:.1f} s")

        # The placement test stops its first daemon itself; any other early death is a failure.
        stopped_by_test = placement_first.process.poll() is not None
        if not stopped_by_test:
            print("clients: the placement test did not stop its first daemon")
            status = status or 1
        else:
            placement_first._stopped = True
            if placement_first.process.returncode != 0:
                print(f"clients: the placement daemon exited {placement_first.process.returncode}"
                      f" after the test's SIGTERM: {placement_first.tail()}")
                status = status or 1

        # The clients' grant tests made calls, and each one reached the upstream with the
        # credential the broker attached (the tests themselves check the guest never saw it).
        grant_problems = []
        if options.part != "linux" and not inventory.authorizations:
            grant_problems.append("the inventory upstream received no call (no grant test ran)")
        if any(a != "Bearer " + grant_token for a in inventory.authorizations):
            grant_problems.append("an inventory call arrived without the broker's credential")

    problems = [p for d in (embedded, linux, tls, granted, placement_second, placement_third)
                if d for p in d.problems] + grant_problems
    for problem in problems:
        print(f"clients: {problem}")
    return status if not problems else (status or 1)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
