"""Installing a pinned npm peer (bench/peers/<name>/package.json + package-lock.json) for the bench.

`install(project, dest)` runs `npm ci --ignore-scripts` of the project's lockfile into dest (a
directory in the bench's cache, outside the source tree: the repository never gets a
node_modules) and stamps dest with the lockfile's SHA-256, as clients/typescript/install-dev-tools
does. A later call with the same lockfile does nothing; a changed lockfile reinstalls. Two bench
runs installing at once take turns (a lock file in dest). If npm is missing or `npm ci` fails (no
registry), it raises FixtureError and the peer's row is skipped with the reason, never passed.
"""

import fcntl
import hashlib
import os
import shutil
import subprocess

from .fixtures import FixtureError

STAMP = ".lock-sha256"
NPM_TIMEOUT_S = 300


def cache_root():
    """${PLIMSOLL_CACHE:-$HOME/.cache/plimsoll}/bench-peers."""
    base = os.environ.get("PLIMSOLL_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                            "plimsoll")
    return os.path.join(base, "bench-peers")


def _digest(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _first_error(text, limit=300):
    """npm's error in a line: its first few lines, without the stack ("npm error     at ...")."""
    lines = []
    for line in text.strip().splitlines():
        line = line.strip()
        body = line[len("npm error"):].strip() if line.startswith("npm error") else line
        if body.startswith("at ") and lines:
            break   # the stack trace: the message is above it
        if body:
            lines.append(body)
        if len(lines) == 4:
            break
    text = "; ".join(lines)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def install(project, dest, check, npm="npm", timeout_s=NPM_TIMEOUT_S):
    """npm ci of project's lockfile into dest unless dest already holds it; returns dest.

    check: a path relative to dest that must exist after an install (e.g.
    "node_modules/quickjs-emscripten/package.json").
    """
    lockfile = os.path.join(project, "package-lock.json")
    if not os.path.exists(lockfile):
        raise FixtureError(f"{lockfile} does not exist")
    want = _digest(lockfile)
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, ".install-lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(os.path.join(dest, STAMP), encoding="utf-8") as handle:
                have = handle.read().strip()
        except OSError:
            have = None
        if have == want and os.path.exists(os.path.join(dest, check)):
            return dest
        program = shutil.which(npm) if "/" not in npm else npm
        if program is None or not os.path.exists(program):
            raise FixtureError(f"{npm} is not installed (not found on PATH); the peer is "
                               f"installed with npm ci of {lockfile}")
        for stale in ("node_modules", STAMP):
            path = os.path.join(dest, stale)
            if os.path.isdir(path):
                shutil.rmtree(path)
            elif os.path.exists(path):
                os.remove(path)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(os.path.join(project, name), os.path.join(dest, name))
        argv = [program, "ci", "--ignore-scripts", "--no-audit", "--no-fund",
                "--loglevel=error"]
        if not os.environ.get("npm_config_cache") and os.environ.get("PLIMSOLL_CACHE"):
            argv += ["--cache", os.path.join(os.environ["PLIMSOLL_CACHE"], "npm")]
        try:
            out = subprocess.run(argv, cwd=dest, capture_output=True, text=True,
                                 timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as error:
            raise FixtureError(f"npm ci of {lockfile} timed out after {timeout_s} s (is the npm "
                               "registry reachable?)") from error
        if out.returncode != 0:
            detail = _first_error(out.stderr or out.stdout)
            raise FixtureError(f"npm ci failed with status {out.returncode} (is the npm "
                               f"registry reachable?): {detail} (installing {lockfile} into "
                               f"{dest})")
        if not os.path.exists(os.path.join(dest, check)):
            raise FixtureError(f"npm ci of {lockfile} left no {check} in {dest}")
        with open(os.path.join(dest, STAMP), "w", encoding="utf-8") as handle:
            handle.write(want + "\n")
    return dest
