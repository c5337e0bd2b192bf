"""The timed command loop: spawn, wait, measure; one untimed trial, warm-ups, then the timed runs.

Each invocation is timed with the monotonic clock from just before posix_spawn to just after waitpid
returns; stdin is /dev/null (or the spec's "stdin" file, opened afresh before each invocation,
untimed), stdout is /dev/null, stderr goes to a scratch file (read only to explain a failure).
The optional cleanup command runs after every invocation, outside the timed region.

This module also runs as a child process (`python3 timing.py` with a JSON spec on stdin, one
sampler JSON line on stdout) so that a scenario can run its whole loop inside a wrapper such as a
private mount namespace, without counting the wrapper's own cost in every sample.
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import time

STDERR_TAIL_BYTES = 600


class _Timeout(Exception):
    pass


def _on_alarm(_signum, _frame):
    raise _Timeout()


class Invoker:
    """Spawns commands with stdio redirected; holds /dev/null and a scratch stderr file."""

    def __init__(self):
        self._devnull = os.open(os.devnull, os.O_RDWR)
        self._stderr = tempfile.TemporaryFile(prefix="plimsoll-bench-stderr-")

    def close(self):
        os.close(self._devnull)
        self._stderr.close()

    def stderr_tail(self):
        self._stderr.flush()
        self._stderr.seek(0)
        data = self._stderr.read()
        tail = data[-STDERR_TAIL_BYTES:].decode("utf-8", "replace").strip()
        return " ".join(tail.split())

    def run(self, argv, timeout_s, stdin_path=None):
        """Run argv once. Returns (elapsed_ms, None) on exit 0, else (elapsed_ms, reason).

        stdin_path: a file to read stdin from (opened before the timed region), else /dev/null.
        """
        path = shutil.which(argv[0]) if "/" not in argv[0] else argv[0]
        if path is None:
            return 0.0, f"{argv[0]} not found on PATH"
        if stdin_path is None:
            return self._run(path, argv, timeout_s, self._devnull)
        try:
            stdin_fd = os.open(stdin_path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as error:
            return 0.0, f"cannot open stdin file {stdin_path}: {error}"
        try:
            return self._run(path, argv, timeout_s, stdin_fd)
        finally:
            os.close(stdin_fd)

    def _run(self, path, argv, timeout_s, stdin_fd):
        fd = self._stderr.fileno()
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        actions = [(os.POSIX_SPAWN_DUP2, stdin_fd, 0),
                   (os.POSIX_SPAWN_DUP2, self._devnull, 1),
                   (os.POSIX_SPAWN_DUP2, fd, 2)]
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
        pid = None
        try:
            start = time.monotonic_ns()
            pid = os.posix_spawn(path, list(argv), os.environ, file_actions=actions, setsid=True)
            _, status = os.waitpid(pid, 0)
            elapsed_ms = (time.monotonic_ns() - start) / 1e6
        except _Timeout:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if pid is not None:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:   # the alarm fired just after the child was reaped
                    pass
            return float(timeout_s) * 1000.0, f"timed out after {timeout_s:g} s"
        except OSError as error:
            return 0.0, f"cannot spawn {argv[0]}: {error}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        code = os.waitstatus_to_exitcode(status)
        if code == 0:
            return elapsed_ms, None
        how = f"exit status {code}" if code > 0 else f"killed by signal {-code}"
        tail = self.stderr_tail()
        return elapsed_ms, f"{how}" + (f"; stderr: {tail}" if tail else "")

    def run_quietly(self, argv, timeout_s):
        """Run argv and ignore its outcome (cleanup)."""
        self.run(argv, timeout_s)


def run_loop(spec):
    """Execute a loop spec; return one sampler JSON object (samples, skipped or error).

    spec: scenario, argv, cleanup (or None), runs, warmup, trial (bool), timeout_s, id_prefix,
    stdin (a file path for the command's stdin, or None for /dev/null; cleanup always gets
    /dev/null).
    "{id}" in argv and cleanup is replaced by a container id unique to each invocation.
    """
    name = spec["scenario"]
    argv = spec["argv"]
    cleanup = spec.get("cleanup")
    timeout_s = float(spec.get("timeout_s", 60.0))
    prefix = spec.get("id_prefix") or f"plimsoll-bench-{os.getpid()}"
    stdin_path = spec.get("stdin")
    invoker = Invoker()
    counter = 0

    def once():
        nonlocal counter
        counter += 1
        ident = f"{prefix}-{counter}"
        elapsed, failure = invoker.run([a.replace("{id}", ident) for a in argv], timeout_s,
                                       stdin_path)
        if cleanup:
            invoker.run_quietly([a.replace("{id}", ident) for a in cleanup], timeout_s)
        return elapsed, failure

    try:
        if spec.get("trial"):
            _, failure = once()
            if failure:
                return {"scenario": name, "skipped": f"trial run failed: {failure}"}
        for index in range(int(spec.get("warmup", 0))):
            _, failure = once()
            if failure:
                return {"scenario": name, "error": f"warm-up run {index + 1} failed: {failure}"}
        samples = []
        runs = int(spec["runs"])
        for index in range(runs):
            elapsed, failure = once()
            if failure:
                return {"scenario": name, "error": f"run {index + 1} of {runs} failed: {failure}"}
            samples.append(elapsed)
        return {"scenario": name, "unit": "ms", "samples": samples}
    finally:
        invoker.close()


def main():
    spec = json.load(sys.stdin)
    print(json.dumps(run_loop(spec)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
