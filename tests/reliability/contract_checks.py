"""Checks schemathesis applies to every answer of plimsolld, on top of its own.

Loaded through SCHEMATHESIS_HOOKS=contract_checks by contract_test.py. They
state the parts of api/openapi.yaml that a JSON Schema cannot: the "nothing
ran" mark and the request-ID echo (the contract's description, "Request IDs"
and "Nothing ran").
"""
import json
import re

import schemathesis

WELL_FORMED_ID = re.compile(r"[0-9a-f]{32}")
MARKS = {"request", "permission", "protocol", "unsupported", "isolation", "capacity", "environment"}


def _header(headers, name):
    """The one value of `name` in schemathesis' lowercase, list-valued headers."""
    values = headers.get(name.lower(), [])
    if len(values) > 1:
        raise AssertionError(f"{name} appears {len(values)} times in the answer")
    return values[0] if values else None


def _error_body(response):
    if "json" not in (_header(response.headers, "Content-Type") or ""):
        return None
    try:
        body = json.loads(response.content)
    except ValueError as error:
        raise AssertionError(f"the answer says JSON but does not parse: {error}") from None
    return body.get("error") if isinstance(body, dict) else None


@schemathesis.check
def refusal_carries_its_mark(ctx, response, case):
    """Every refusal (4xx, and 501 `unsupported`) names why nothing ran, in the
    body and in the header, the same reason in both; no other answer carries
    the header. 5xx other than 501 may come after code started, so they may
    lack it; a 503 from /readyz asked nothing to run and carries none."""
    header = _header(response.headers, "Plimsoll-Not-Dispatched")
    error = _error_body(response)
    body_mark = error.get("not_dispatched") if isinstance(error, dict) else None
    status = response.status_code
    if header is not None and header not in MARKS:
        raise AssertionError(f"Plimsoll-Not-Dispatched: {header!r} is not a documented reason")
    if header != body_mark:
        raise AssertionError(
            f"status {status}: header mark {header!r} and body mark {body_mark!r} differ")
    if 400 <= status < 500 or status == 501:
        if header is None:
            raise AssertionError(f"status {status} is a refusal without the not-dispatched mark")
    elif status < 400 and header is not None:
        raise AssertionError(f"status {status} carries the mark {header!r}")


@schemathesis.check
def request_id_echoed_when_well_formed(ctx, response, case):
    """The answer echoes Plimsoll-Request-Id (header, and `error.request_id` in
    an error body) when the request sent exactly one well-formed ID, and
    echoes nothing otherwise (the daemon never refuses for the ID)."""
    sent = response.request.headers.get("Plimsoll-Request-Id")
    usable = sent is not None and WELL_FORMED_ID.fullmatch(sent) is not None
    echoed = _header(response.headers, "Plimsoll-Request-Id")
    if usable and echoed != sent:
        raise AssertionError(f"sent the ID {sent!r}, the answer echoes {echoed!r}")
    if not usable and echoed is not None:
        raise AssertionError(f"sent the unusable ID {sent!r}, the answer echoes {echoed!r}")
    error = _error_body(response)
    if isinstance(error, dict):
        in_body = error.get("request_id")
        if in_body != (sent if usable else None):
            raise AssertionError(f"sent the ID {sent!r}, error.request_id is {in_body!r}")
