"""Scenarios are data: a name, a kind, an argv template, an optional baseline and optional probes.

Two kinds:
  command  an external command, timed per invocation by the runner (monotonic wall time around
           spawn + wait; stdout and stderr never reach the terminal). A non-zero exit fails the
           scenario.
  sampler  a binary that measures itself and prints JSON lines
           {"scenario": NAME, "unit": "ms", "samples": [...]} (unit: s, ms, us or ns), or
           {"scenario": NAME, "skipped": "reason"} / {"scenario": NAME, "error": "reason"}.

Argv templates are formatted with str.format against the run's fixtures, e.g. "{rootfs}",
"{bundle}", "{state}" (a private directory for this scenario), "{id}" (unique per invocation),
"{runs}", "{warmup}", "{scenario}", "{python}", "{bench}", "{repo}", "{plimsoll_bin}"
(--plimsoll-bin); see fixtures.Fixtures. Literal braces are doubled.

Adding a scenario is one call, e.g.

    REGISTRY.add(command("plimsoll-linux", ["{plimsoll_bin}/plimsoll", "run", "--provider", "linux",
                                             "--", "/bin/true"],
                         description="plimsoll's own linux provider running /bin/true",
                         probes=[needs_path("{plimsoll_bin}/plimsoll")]))
"""

import dataclasses
import os
import re
import shutil
from typing import Callable, Optional, Sequence

COMMAND = "command"
SAMPLER = "sampler"
KINDS = (COMMAND, SAMPLER)

# The baseline of a scenario that did not name one: the registry's reference scenario.
REFERENCE = "@reference"

# A probe receives the run's Fixtures; it returns None if the scenario can run, else a skip reason.
Probe = Callable[[object], Optional[str]]


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    kind: str
    argv: Sequence[str]
    description: str = ""
    baseline: Optional[str] = REFERENCE   # a scenario name, REFERENCE, or None for no ratio
    probes: Sequence[Probe] = ()
    # command kind only:
    cleanup: Optional[Sequence[str]] = None   # run after every invocation, untimed, errors ignored
    wrapper: Optional[Sequence[str]] = None   # argv prefix; the whole timed loop runs inside it
    trial_skips: bool = False   # an untimed trial run first; if it fails: skipped, not failed
    timeout_s: float = 60.0     # per invocation (command) or for the whole sampler process
    # sampler kind only: the "scenario" value of the JSON line to take (default: name)
    sample_name: Optional[str] = None
    max_runs: Optional[int] = None   # cap for expensive scenarios (e.g. VM boots)
    version: Optional[Sequence[str]] = None   # argv printing the tool's version (recorded)

    def __post_init__(self):
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:/+-]*", self.name):
            raise ValueError(f"scenario name {self.name!r} must be a plain identifier")
        if self.kind not in KINDS:
            raise ValueError(f"scenario {self.name}: kind must be one of {KINDS}, "
                             f"got {self.kind!r}")
        if not self.argv:
            raise ValueError(f"scenario {self.name}: argv is empty")
        if self.kind == SAMPLER and (self.cleanup or self.wrapper or self.trial_skips):
            raise ValueError(f"scenario {self.name}: cleanup, wrapper and trial_skips are for "
                             "commands only")


def command(name, argv, **fields):
    """A scenario that times one external command per invocation."""
    return Scenario(name=name, kind=COMMAND, argv=tuple(argv), **fields)


def sampler(name, argv, **fields):
    """A scenario whose binary measures itself and prints sampler JSON lines."""
    return Scenario(name=name, kind=SAMPLER, argv=tuple(argv), **fields)


class Registry:
    """An ordered set of scenarios and the name of the reference baseline for ratios."""

    def __init__(self, reference=None):
        self.reference = reference
        self._scenarios = {}

    def add(self, scenario):
        if scenario.name in self._scenarios:
            raise ValueError(f"scenario {scenario.name} is registered twice")
        self._scenarios[scenario.name] = scenario
        return scenario

    def __iter__(self):
        return iter(self._scenarios.values())

    def __len__(self):
        return len(self._scenarios)

    def get(self, name):
        return self._scenarios.get(name)

    def baseline_of(self, scenario):
        """The name of scenario's baseline, or None (the reference itself has none)."""
        name = self.reference if scenario.baseline == REFERENCE else scenario.baseline
        return None if name == scenario.name else name

    def validate(self):
        """Raise ValueError if a baseline names no registered scenario."""
        if self.reference is not None and self.reference not in self._scenarios:
            raise ValueError(f"reference baseline {self.reference} is not a registered scenario")
        for scenario in self:
            base = self.baseline_of(scenario)
            if base is not None and base not in self._scenarios:
                raise ValueError(f"scenario {scenario.name}: baseline {base} is not registered")

    def select(self, pattern=None):
        """Scenarios whose names match the regex (re.search) plus the baselines they need, in
        registry order."""
        if pattern is None:
            return list(self)
        regex = re.compile(pattern)
        wanted = {s.name for s in self if regex.search(s.name)}
        for name in list(wanted):
            base = self.baseline_of(self._scenarios[name])
            if base is not None:
                wanted.add(base)
        return [s for s in self if s.name in wanted]


# Probe helpers ------------------------------------------------------------------------------------

def needs_executable(program):
    """Skip unless program is found on PATH."""
    def probe(_fixtures):
        if shutil.which(program) is None:
            return f"{program} is not installed (not found on PATH)"
        return None
    probe.__name__ = f"needs_executable({program})"
    return probe


def needs_path(template):
    """Skip unless the path (a template, e.g. "{repo}/build/plimsoll") exists."""
    def probe(fixtures):
        path = fixtures.format(template)
        if not os.path.exists(path):
            return f"{path} does not exist"
        return None
    probe.__name__ = f"needs_path({template})"
    return probe


def needs_root():
    """Skip unless running as uid 0."""
    def probe(_fixtures):
        return None if os.geteuid() == 0 else "needs root (uid 0)"
    probe.__name__ = "needs_root"
    return probe
