"""A real plimsolld for the Python suites (tests/reliability, tests/integration).

Starts the daemon on loopback port 0 with the arguments a suite gives, reads
the ports it announces on its first stdout line, keeps its stderr in a file
(never a pipe nobody reads: a full pipe would block the daemon's logging
mid-test), and stops it with SIGTERM, recording a non-zero exit as a problem.

Usage:
    import plimsolld  # with tests/common on sys.path
    with plimsolld.Daemon(binary, ["--provider", "embedded", "--dev"]) as daemon:
        status, headers, raw = daemon.request("POST", "/v1/runs", body)
    failures += daemon.problems   # e.g. "plimsolld exited 1 after SIGTERM: <log>"
"""
import http.client
import os
import signal
import subprocess
import tempfile


class DaemonDidNotServe(RuntimeError):
    """The daemon exited or printed something else instead of its ports."""


class Daemon:
    def __init__(self, binary, arguments, env=None, metrics=False, stop_timeout=60):
        """`arguments` come after --listen 127.0.0.1:0 and --metrics-listen
        (127.0.0.1:0 when `metrics`, else off). `env` defaults to PATH only."""
        self.command = [binary, "--listen", "127.0.0.1:0",
                        "--metrics-listen", "127.0.0.1:0" if metrics else "off", *arguments]
        self.env = env if env is not None else {"PATH": os.environ.get("PATH", "")}
        self.stop_timeout = stop_timeout
        self.process = None
        self.port = None
        self.metrics_port = None
        self.problems = []
        self._log = None
        self._stopped = False

    @property
    def pid(self):
        return self.process.pid

    def __enter__(self):
        self._log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=self._log,
                                        text=True, env=self.env)
        line = self.process.stdout.readline()
        if "api=127.0.0.1:" not in line:
            self.process.kill()
            self.process.wait()
            raise DaemonDidNotServe(f"plimsolld did not serve: {line!r} {self.tail()}")
        self.port = int(line.split("api=127.0.0.1:")[1].split()[0])
        if "metrics=127.0.0.1:" in line:
            self.metrics_port = int(line.split("metrics=127.0.0.1:")[1].split()[0])
        return self

    def __exit__(self, *_):
        self.stop()
        return False

    def stop(self):
        """SIGTERM, then SIGKILL after stop_timeout; a non-zero exit is a problem."""
        if self.process is None or self._stopped:
            return
        self._stopped = True
        if self.process.poll() is not None:
            self.problems.append(f"plimsolld exited {self.process.returncode} before it was "
                                 f"stopped: {self.tail()}")
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=self.stop_timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
            self.problems.append(f"plimsolld did not stop within {self.stop_timeout} s of SIGTERM")
        if code != 0:
            self.problems.append(f"plimsolld exited {code} after SIGTERM: {self.tail()}")

    def tail(self, size=2000):
        """The end of the daemon's log."""
        self._log.flush()
        self._log.seek(0)
        return self._log.read()[-size:]

    def request(self, method, path, body=None, headers=None, port=None, timeout=120):
        """One request on a connection of its own: (status, headers, body bytes); the
        headers are http.client's message (names case-insensitive)."""
        connection = http.client.HTTPConnection("127.0.0.1", port or self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.headers, response.read()
        finally:
            connection.close()
