"""One JSON POST over HTTP, for the hub's clients of outside servers.

The embedding servers, Dream's judge, the code search's steering model and
the reranker all send one JSON body and read one JSON answer, with the
standard library only. :func:`post_json` does that once for all of them:
every failure, from a server that is down to an answer that is not JSON,
becomes one :class:`PostFailedError` whose message is a short phrase (``answered
HTTP 503: overloaded``, ``could not be reached: Connection refused``, ``did
not answer within 2 s``) that each caller puts after its own subject ("The
embedding endpoint http://...") and turns into its own error or warning.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Mapping

__all__ = ["PostFailedError", "post_json"]


def _phrase(text: str) -> str:
    """Returns text on one line, without a final period, at most 200 chars."""
    line = " ".join(text.split())
    if len(line) > 200:
        line = line[:197] + "..."
    return line.rstrip(".") or "no details"


class PostFailedError(Exception):
    """A POST that brought back no JSON answer; ``str()`` says why in a phrase.

    Attributes:
        status: The HTTP status of an error answer, else ``None``.
    """

    def __init__(self, phrase: str, status: int | None = None) -> None:
        super().__init__(phrase)
        self.status = status


def post_json(
    url: str,
    payload: object,
    *,
    timeout: float,
    headers: Mapping[str, str] | None = None,
) -> object:
    """Returns the decoded JSON answer of ``url`` to ``payload``.

    Args:
        url: Where to POST.
        payload: What to send, as JSON.
        timeout: Seconds to wait to connect and for each read.
        headers: Added to ``Content-Type: application/json``.

    Raises:
        PostFailedError: The server could not be reached, did not answer in time,
            answered an HTTP error, or answered something that is not JSON.
    """
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")
        exc.close()
        raise PostFailedError(
            f"answered HTTP {exc.code}: {_phrase(detail or str(exc.reason))}",
            exc.code,
        ) from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise PostFailedError(f"did not answer within {timeout:g} s") from exc
        raise PostFailedError(
            f"could not be reached: {_phrase(str(exc.reason))}"
        ) from exc
    except TimeoutError as exc:
        raise PostFailedError(f"did not answer within {timeout:g} s") from exc
    except (ConnectionError, http.client.HTTPException) as exc:
        raise PostFailedError(
            f"did not answer: {_phrase(str(exc) or type(exc).__name__)}"
        ) from exc
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PostFailedError(
            f"did not answer JSON: {_phrase(body[:200].decode('utf-8', 'replace'))}"
        ) from exc
