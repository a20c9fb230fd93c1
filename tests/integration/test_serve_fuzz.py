"""The HTTP API fuzzed from its own OpenAPI document, against a live server.

Schemathesis generates requests for every operation (valid and not) from
/api/openapi.json: no answer may be a 5xx or carry a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from serve_support import Served, start_serve


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    from datetime import datetime

    from ctx.engine import Store

    store = tmp_path_factory.mktemp("fuzz") / ".ctx"
    Store.init(store, clock=lambda: datetime.now().astimezone()).close()
    (store / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    server = start_serve(store)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def api(served: Served) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(
        f"{served.url}/api/openapi.json", headers=served.auth
    )


schema = schemathesis.pytest.from_fixture("api")


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    """One kept-alive connection for all cases: a new one per case cost more
    than most answers (about 2,400 cases)."""
    with requests.Session() as kept:
        yield kept


@schema.parametrize()
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_server_error_and_no_traceback(
    case: schemathesis.Case, served: Served, session: requests.Session
) -> None:
    response = case.call(base_url=served.url, session=session, headers=served.auth)
    case.validate_response(response, checks=[not_a_server_error])
    assert "Traceback" not in response.text
    assert response.status_code < 500, response.text
