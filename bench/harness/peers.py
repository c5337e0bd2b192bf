"""Tiers and peers (issue 23): each of plimsoll's rows with a tier against its tier's best peer.

A peer is another project's tool doing the job plimsoll's rows do (a fresh sandbox running
console.log(6*7)) at one tier (scenario.py: `tier`, `peer`). After a run, attach_peers gives every
measured non-peer row with a tier its best peer (the lowest p50 among the peers of that tier
measured in this run, in the same unit) and the ratios to it, or a note saying why there is none.
A whole-process row (a CLI: start-up in every sample) is compared only with whole-process peers,
an in-process row only with in-process peers.
"""

from . import stats
from .execute import MEASURED


def _p50(result):
    return (result.stats or {}).get("p50")


def attach_peers(results):
    """Set best_peer and peer_ratios (or a peer_note) on every measured row that has a tier and
    is not a peer itself: the ratios are to the peer of the same tier and unit with the lowest
    p50 in this run. Peers skipped or failed in this run are named in the note when no peer of
    the tier was measured."""
    peers = {}
    for result in results:
        if result.peer and result.tier is not None:
            peers.setdefault((result.tier, result.whole_process), []).append(result)
    for result in results:
        if result.peer or result.tier is None or result.status != MEASURED:
            continue
        tier_peers = peers.get((result.tier, result.whole_process), [])
        kind = f"{result.tier}-tier" + (" whole-process" if result.whole_process else "")
        candidates = [peer for peer in tier_peers if peer.status == MEASURED
                      and peer.unit == result.unit and _p50(peer) is not None]
        if not candidates:
            if tier_peers:
                why = "; ".join(f"{peer.name} {peer.status}" + (
                    f" ({peer.unit}, not {result.unit})" if peer.status == MEASURED else "")
                    for peer in tier_peers)
                result.peer_note = f"no {kind} peer measured: {why}"
            else:
                result.peer_note = f"no {kind} peer in this run"
            continue
        best = min(candidates, key=_p50)
        result.best_peer = best.name
        result.peer_ratios = stats.ratios(result.stats, best.stats)
    return results


def peer_summary(results):
    """{tier: {"best": name or None, "best_p50": ms or None, "peers": [{name, status, p50}]}}
    for every tier with a peer in this run; whole-process peers under "<tier> (whole process)"."""
    summary = {}
    for result in results:
        if not result.peer or result.tier is None:
            continue
        key = result.tier + (" (whole process)" if result.whole_process else "")
        entry = summary.setdefault(key, {"best": None, "best_p50": None, "peers": []})
        p50 = _p50(result) if result.status == MEASURED else None
        entry["peers"].append({"name": result.name, "status": result.status, "unit": result.unit,
                               "p50": p50, "reason": result.reason})
        if p50 is not None and (entry["best_p50"] is None or p50 < entry["best_p50"]):
            entry["best"], entry["best_p50"] = result.name, p50
    return summary
