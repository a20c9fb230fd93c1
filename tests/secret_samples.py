"""Secrets in each provider's format, made of random characters at run time.

None is real, and none is spelled in the repository: a file of literal
tokens would trip forges' push protection and every secret scanner.
"""

from __future__ import annotations

import random
import string
from base64 import b64encode

_RNG = random.Random(33)
_ALNUM = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits


def _pick(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def aws_key() -> str:
    return "AKIA" + _pick(_UPPER, 16)


def aws_secret() -> str:
    return _pick(_ALNUM, 40)


def github_token() -> str:
    return "ghp_" + _pick(_ALNUM, 36)


def stripe_key() -> str:
    return "sk_live_" + _pick(_ALNUM, 24)


def slack_token() -> str:
    return f"xoxb-{_pick(string.digits, 12)}-{_pick(string.digits, 13)}-{_pick(_ALNUM, 24)}"


def google_key() -> str:
    return "AIza" + _pick(_ALNUM + "-_", 35)


def sk_key() -> str:
    return "sk-proj-" + _pick(_ALNUM, 48)


def gitlab_token() -> str:
    return "glpat-" + _pick(_ALNUM, 20)


def npm_token() -> str:
    return "npm_" + _pick(_ALNUM, 36)


def vault_token() -> str:
    return "hvs." + _pick(_ALNUM + "_-", 90)


def bearer() -> str:
    return _pick(_ALNUM, 40)


def password() -> str:
    return _pick(_ALNUM, 10) + "!" + _pick(string.digits, 2)


def private_key() -> str:
    body = b64encode(_RNG.randbytes(120)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join(
        ["-----BEGIN RSA PRIVATE KEY-----", *lines, "-----END RSA PRIVATE KEY-----"]
    )
