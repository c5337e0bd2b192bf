"""Request builders and placement rules shared by the sync and async clients (no I/O)."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ._core import (PROTOCOL, Data, Files, bad_argument, build_request, project_payload,
                    wire_data)
from .errors import PlimsollError, Reason
from .results import Describe, tier_meets

LANGUAGES = ("javascript", "python")


def code_request(kind: str, code: Data, minimum_isolation: Optional[str],
                 timeout_ms: Optional[int], environment: Optional[str],
                 grant_profile: Optional[str], trace_id: Optional[str],
                 image: Optional[str]) -> Dict[str, Any]:
    return build_request(kind, {"code": wire_data(code, f"{kind} code")},
                         minimum_isolation=minimum_isolation, timeout_ms=timeout_ms,
                         environment=environment, grant_profile=grant_profile,
                         trace_id=trace_id, image=image)


def project_request(files: Optional[Files], steps: Optional[Sequence[Sequence[str]]],
                    artifacts: Optional[Sequence[str]], minimum_isolation: Optional[str],
                    timeout_ms: Optional[int], environment: Optional[str],
                    grant_profile: Optional[str], trace_id: Optional[str],
                    image: Optional[str]) -> Dict[str, Any]:
    return build_request("project", project_payload(files, steps, artifacts),
                         minimum_isolation=minimum_isolation, timeout_ms=timeout_ms,
                         environment=environment, grant_profile=grant_profile,
                         trace_id=trace_id, image=image)


def cell_request(language: str, code: Data, timeout_ms: Optional[int],
                 trace_id: Optional[str], grant_profile: Optional[str] = None) -> Dict[str, Any]:
    if language not in LANGUAGES:
        raise bad_argument(f"A cell's language is javascript or python, not {language!r}.")
    return build_request("cell", {"language": language, "code": wire_data(code, "cell code")},
                         minimum_isolation=None, timeout_ms=timeout_ms, environment=None,
                         grant_profile=grant_profile, trace_id=trace_id, image=None)


def hand_request(request: Mapping[str, Any]) -> Dict[str, Any]:
    """A request built by hand (the wire form); `protocol` is added when missing."""
    if not isinstance(request, Mapping):
        raise bad_argument("run() takes the wire request as a mapping.")
    sent = dict(request)
    sent.setdefault("protocol", PROTOCOL)
    return sent


def session_open_request(minimum_isolation: Optional[str], environment: Optional[str],
                         owner_hmac: Optional[str], lifetime_ms: Optional[int],
                         idle_timeout_ms: Optional[int],
                         image: Optional[str]) -> Dict[str, Any]:
    request: Dict[str, Any] = {"protocol": PROTOCOL}
    if minimum_isolation:
        request["minimum_isolation"] = minimum_isolation
    if environment is not None:
        request["environment"] = environment
    if image:  # absent and "" both mean the daemon's default image
        request["image"] = image
    if owner_hmac is not None:
        request["owner"] = owner_hmac
    for name, value in (("lifetime_ms", lifetime_ms), ("idle_timeout_ms", idle_timeout_ms)):
        if value is not None:
            if type(value) is not int:
                raise bad_argument(f"{name} must be an integer (milliseconds).")
            request[name] = value
    return request


def _payload_kind(request: Mapping[str, Any]) -> str:
    for kind in ("javascript", "python", "project", "cell"):
        if request.get(kind) is not None:
            return kind
    return ""


def why_not(description: Describe, request: Mapping[str, Any],
            session: bool = False) -> Optional[Tuple[Reason, str]]:
    """Why this daemon cannot take the request (SPEC §12), or None when it can."""
    floor = request.get("minimum_isolation") or ""
    if description.tier == "none":
        return Reason.UNSUPPORTED, "it runs nothing (tier none)"
    # A named image brings its own tier and identity; the top-level ones are the default's.
    tier, environment = description.tier, description.environment
    named = request.get("image") or ""
    if named:
        image = next((i for i in description.images if i.name == named), None)
        if image is None:
            return Reason.UNSUPPORTED, f"it serves no image named {named!r}"
        tier, environment = image.tier, image.environment
    if floor and not tier_meets(tier, floor):
        return Reason.ISOLATION, f"its tier {tier} is below the floor {floor}"
    if session:
        if not description.sessions:
            return Reason.UNSUPPORTED, "it has no sessions"
    else:
        kind = _payload_kind(request)
        if kind not in description.payloads:
            return Reason.UNSUPPORTED, f"it does not run {kind or 'this'} payloads"
    required = request.get("environment")
    if required and environment != required:
        return Reason.ENVIRONMENT, "its environment is not the one required"
    if request.get("grant_profile") and not description.grants:
        return Reason.UNSUPPORTED, "it has no grants"
    return None


def nobody_can(skipped: List[Tuple[str, Reason, str]]) -> PlimsollError:
    # The most telling reason: a floor or an environment no daemon meets says more than a daemon
    # that is down (capacity) or cannot run the payload at all (unsupported).
    reasons = {reason for _, reason, _ in skipped}
    reason = next((r for r in (Reason.ISOLATION, Reason.ENVIRONMENT, Reason.CAPACITY)
                   if r in reasons), Reason.UNSUPPORTED)
    listing = "; ".join(f"{url}: {why}" for url, _, why in skipped) or "the pool is empty"
    return PlimsollError("failed_precondition",
                         f"No daemon in the pool can take this request ({listing}). Nothing "
                         "was sent.", reason)
