"""Scenarios are data: a name, a kind, an argv template, an optional baseline and optional probes.

Three kinds:
  command   an external command, timed per invocation by the runner (monotonic wall time around
            spawn + wait; stdout and stderr never reach the terminal). A non-zero exit fails the
            scenario.
  sampler   a binary that measures itself and prints JSON lines
            {"scenario": NAME, "unit": "ms", "samples": [...]} (unit: s, ms, us, ns, or B, kB,
            MB for memory), or {"scenario": NAME, "skipped": "reason"} /
            {"scenario": NAME, "error": "reason"}.
  produced  a row whose line comes from another sampler's invocation: that sampler lists it in
            `produces`, and one run of the sampler yields its own row and each produced row
            (e.g. RSS after 100 and after 10000 instances, measured in the same process).

Targets (reported, never enforced: a missed target does not change the exit status):
  target_p50_ms        the scenario's p50 must be at most this many ms
  target_ratio         the scenario's p50 divided by its baseline's p50 must be at most this
  target_added_p50_ms  the scenario's p50 minus its baseline's p50 (both in ms, same run) must
                       be at most this many ms: what a layer adds on top of what it wraps

Tiers and peers (issue 23): a scenario may name the isolation tier its row belongs to
(process, container, kernel or vm; a template such as "{microvm_tier}" is formatted against the
run's fixtures). A row with `peer=True` is a peer of its tier: another project's tool doing the
same job (a fresh sandbox running console.log(6*7)). Every other row with a tier (plimsoll's own)
also reports its ratio to the best (lowest p50) peer of its tier measured in the same run, or why
there is none; a row whose sampler reports facts {"tier": ...} (the evidence's tier) is compared
within that tier instead of the declared one. A row timing a whole OS process per sample (a CLI)
sets `whole_process=True` and is compared only with peers that do the same (and vice versa).
target_peer_ratio is a target on that ratio:
  target_peer_ratio    the scenario's p50 divided by the best peer's p50 must be at most this

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
PRODUCED = "produced"
KINDS = (COMMAND, SAMPLER, PRODUCED)

# Isolation tiers (include/plimsoll/tier.h), weakest first.
TIERS = ("process", "container", "kernel", "vm")

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
    stdin: Optional[str] = None   # a file (template) opened as stdin of every invocation
    timeout_s: float = 60.0     # per invocation (command) or for the whole sampler process
    # sampler kind only: the "scenario" value of the JSON line to take (default: name)
    sample_name: Optional[str] = None
    max_runs: Optional[int] = None   # cap for expensive scenarios (e.g. VM boots)
    min_runs: Optional[int] = None   # floor for cheap, noisy ones (e.g. 1000 sub-ms engine runs)
    version: Optional[Sequence[str]] = None   # argv printing the tool's version (recorded)
    # sampler kind only: names of `produced` scenarios whose lines this invocation also prints
    produces: Sequence[str] = ()
    # targets, reported as met / MISSED (never enforced):
    target_p50_ms: Optional[float] = None   # p50 <= this (ms rows only)
    target_ratio: Optional[float] = None    # p50 / baseline's p50 <= this (same unit)
    target_added_p50_ms: Optional[float] = None   # p50 - baseline's p50 <= this (ms rows)
    # issue 23: the tier of the row (one of TIERS, or a template naming a fixture), whether the
    # row is a peer of that tier, and a target on the ratio to the tier's best peer:
    tier: Optional[str] = None
    peer: bool = False
    whole_process: bool = False   # a sample is a whole OS process (start-up included)
    target_peer_ratio: Optional[float] = None   # p50 / best peer's p50 (same run) <= this

    def __post_init__(self):
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:/+-]*", self.name):
            raise ValueError(f"scenario name {self.name!r} must be a plain identifier")
        if self.kind not in KINDS:
            raise ValueError(f"scenario {self.name}: kind must be one of {KINDS}, "
                             f"got {self.kind!r}")
        if self.kind == PRODUCED:
            if (self.argv or self.probes or self.cleanup or self.wrapper or self.trial_skips
                    or self.produces or self.version or self.max_runs or self.min_runs):
                raise ValueError(f"scenario {self.name}: a produced scenario has no argv, "
                                 "probes, cleanup, wrapper, trial, produces, version or run "
                                 "counts of its own (its producer's apply)")
        elif not self.argv:
            raise ValueError(f"scenario {self.name}: argv is empty")
        if self.kind != COMMAND and (self.cleanup or self.wrapper or self.trial_skips
                                     or self.stdin):
            raise ValueError(f"scenario {self.name}: cleanup, wrapper, trial_skips and stdin are "
                             "for commands only")
        if self.kind != SAMPLER and self.produces:
            raise ValueError(f"scenario {self.name}: only a sampler produces other scenarios")
        if self.tier is not None and self.tier not in TIERS and "{" not in self.tier:
            raise ValueError(f"scenario {self.name}: tier must be one of {TIERS} or a template, "
                             f"got {self.tier!r}")
        if (self.peer or self.whole_process) and self.tier is None:
            raise ValueError(f"scenario {self.name}: a peer or a whole-process row needs a tier")
        if self.target_peer_ratio is not None and (self.tier is None or self.peer):
            raise ValueError(f"scenario {self.name}: target_peer_ratio needs a tier and is not "
                             "for peers")
        for field in ("target_p50_ms", "target_ratio", "target_added_p50_ms",
                      "target_peer_ratio"):
            value = getattr(self, field)
            if value is not None and not value > 0:
                raise ValueError(f"scenario {self.name}: {field} must be positive")
        if self.min_runs is not None and self.max_runs is not None \
                and self.min_runs > self.max_runs:
            raise ValueError(f"scenario {self.name}: min_runs exceeds max_runs")

    def targets_text(self):
        """The targets as text, e.g. "p50 ≤ 1 ms; ×p50 ≤ 2.00; +p50 ≤ 0.5 ms", or "" if
        none."""
        parts = []
        if self.target_p50_ms is not None:
            parts.append(f"p50 ≤ {self.target_p50_ms:g} ms")
        if self.target_ratio is not None:
            parts.append(f"×p50 ≤ {self.target_ratio:.2f}")
        if self.target_added_p50_ms is not None:
            parts.append(f"+p50 ≤ {self.target_added_p50_ms:g} ms")
        if self.target_peer_ratio is not None:
            parts.append(f"×peer p50 ≤ {self.target_peer_ratio:.2f}")
        return "; ".join(parts)


def command(name, argv, **fields):
    """A scenario that times one external command per invocation."""
    return Scenario(name=name, kind=COMMAND, argv=tuple(argv), **fields)


def sampler(name, argv, **fields):
    """A scenario whose binary measures itself and prints sampler JSON lines."""
    if "produces" in fields:
        fields["produces"] = tuple(fields["produces"])
    return Scenario(name=name, kind=SAMPLER, argv=tuple(argv), **fields)


def produced(name, **fields):
    """A row taken from the invocation of the sampler that lists name in its `produces`."""
    return Scenario(name=name, kind=PRODUCED, argv=(), **fields)


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

    def producer_of(self, scenario):
        """The name of the sampler whose invocation yields scenario (produced kind), or None."""
        for candidate in self:
            if scenario.name in candidate.produces:
                return candidate.name
        return None

    def _with_groups(self, names):
        """names plus, for each, its producer and everything that producer produces."""
        result = set(names)
        for name in names:
            scenario = self._scenarios[name]
            producer = self.producer_of(scenario) or (name if scenario.produces else None)
            if producer is not None:
                result.add(producer)
                result.update(self._scenarios[producer].produces)
        return result

    def validate(self):
        """Raise ValueError if a baseline names no registered scenario, a target ratio has no
        baseline, or `produces` links are inconsistent (each produced scenario must be listed by
        exactly one sampler registered before it)."""
        if self.reference is not None and self.reference not in self._scenarios:
            raise ValueError(f"reference baseline {self.reference} is not a registered scenario")
        order = {name: index for index, name in enumerate(self._scenarios)}
        producers = {}
        for scenario in self:
            base = self.baseline_of(scenario)
            if base is not None and base not in self._scenarios:
                raise ValueError(f"scenario {scenario.name}: baseline {base} is not registered")
            if scenario.target_ratio is not None and base is None:
                raise ValueError(f"scenario {scenario.name}: target_ratio needs a baseline")
            if scenario.target_added_p50_ms is not None and base is None:
                raise ValueError(f"scenario {scenario.name}: target_added_p50_ms needs a "
                                 "baseline")
            for name in scenario.produces:
                product = self._scenarios.get(name)
                if product is None or product.kind != PRODUCED:
                    raise ValueError(f"scenario {scenario.name} produces {name}, which is not a "
                                     "registered produced scenario")
                if name in producers:
                    raise ValueError(f"scenario {name} is produced by both {producers[name]} "
                                     f"and {scenario.name}")
                if order[name] < order[scenario.name]:
                    raise ValueError(f"scenario {name} must be registered after its producer "
                                     f"{scenario.name}")
                producers[name] = scenario.name
        for scenario in self:
            if scenario.kind == PRODUCED and scenario.name not in producers:
                raise ValueError(f"produced scenario {scenario.name}: no sampler produces it")

    def select(self, pattern=None):
        """Scenarios whose names match the regex (re.search) plus what they need, in registry
        order: the peers of their tiers, their baselines, the sampler producing them, and the
        other rows that sampler produces (one invocation yields them all)."""
        if pattern is None:
            return list(self)
        regex = re.compile(pattern)
        wanted = self._with_groups({s.name for s in self if regex.search(s.name)})
        # The peers of the selected rows' tiers (issue 23: each row's ratio to its tier's best
        # peer). A tier given as a template is only known once the run's fixtures format it, so
        # such rows pull in no peers here.
        kinds = {(self._scenarios[name].tier, self._scenarios[name].whole_process)
                 for name in wanted if not self._scenarios[name].peer
                 and self._scenarios[name].tier is not None}
        wanted |= self._with_groups({s.name for s in self
                                     if s.peer and (s.tier, s.whole_process) in kinds})
        bases = {self.baseline_of(self._scenarios[name]) for name in wanted} - {None}
        wanted |= self._with_groups(bases)   # baselines are not transitive
        return [s for s in self if s.name in wanted]

    def peers(self, tier=None):
        """The peer scenarios (of one tier, if given), in registry order."""
        return [s for s in self if s.peer and (tier is None or s.tier == tier)]


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
