"""Grants through a real daemon (SPEC §8): tests/clients/harness.py starts an embedded plimsolld
with a broker whose profile ``inventory`` fronts a loopback upstream; the harness checks the
upstream received the credential, and these tests that the guest and the client never did."""

from __future__ import annotations

import pytest

from plimsoll import Client
from plimsoll.errors import Reason, RefusedError

from conftest import need


def test_a_granted_run_carries_its_trace_and_never_the_credential() -> None:
    token = need("PLIMSOLL_TEST_GRANT_TOKEN")
    with Client(need("PLIMSOLL_TEST_GRANTS_URL")) as client:
        described = client.describe()
        assert described.grants and described.raw["grant_profiles"] == ["inventory"]
        result = client.run_javascript(
            "const one = host.get('/items/2');"
            "let refused = 0; try { host.get('/admin') } catch (e) { refused = e.code }"
            "console.log(one.status, JSON.parse(one.body).id, refused)",
            grant_profile="inventory")
    assert result.exit_code == 0, result.stderr_text
    assert result.stdout_text == "200 2 refused\n"
    assert result.broker is not None
    assert (result.broker.profile, result.broker.calls, result.broker.denied) == ("inventory", 2, 1)
    assert {(r.route, r.allowed) for r in result.broker.routes} == {("/items/*", True), ("", False)}
    assert token not in result.stdout_text + result.stderr_text


def test_a_fan_out_comes_back_as_advice() -> None:
    with Client(need("PLIMSOLL_TEST_GRANTS_URL")) as client:
        result = client.run_javascript(
            "for (const i of ['1', '2', '3', '4']) host.get('/items/' + i)",
            grant_profile="inventory")
    assert result.exit_code == 0, result.stderr_text
    assert [a.pattern for a in result.advice] == ["fan_out"]


def test_a_session_cell_is_served_its_grant_for_that_cell_only() -> None:
    with Client(need("PLIMSOLL_TEST_GRANTS_URL")) as client:
        with client.open_session() as session:
            served = session.run_cell("javascript", "var kept = host; kept.get('/items/3').status",
                                      grant_profile="inventory")
            after = session.run_cell(
                "javascript", "try { kept.get('/items/3'); 'reached' } catch (e) { e.code }")
    assert served.value == b"200" and served.broker is not None and served.broker.calls == 1
    assert after.value == b"'no_grant'" and after.broker is None


def test_an_unknown_profile_is_refused_and_nothing_ran() -> None:
    with Client(need("PLIMSOLL_TEST_GRANTS_URL")) as client:
        with pytest.raises(RefusedError) as refused:
            client.run_javascript("host.get('/items/1')", grant_profile="no-such-profile")
    assert refused.value.not_dispatched is Reason.PERMISSION and refused.value.ran is False
