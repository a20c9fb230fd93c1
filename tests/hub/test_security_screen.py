"""A secret over several lines is new if any of its lines is (issue 33).

Only new text is scanned, line by line against the memory's previous
version. A private key spans lines, and every key of a kind opens with the
same ``-----BEGIN ... PRIVATE KEY-----`` line: a second key added to a
memory that holds one (stored with ``--allow-secret``) is still new text.
"""

from __future__ import annotations

import secret_samples as s
from test_screen import WHO, bodies, make_ws, refused

from ctx import engine
from ctx.engine import Draft


def test_a_second_private_key_is_new_though_its_first_line_is_not(tmp_path):
    ws = make_ws(tmp_path)
    first, second = s.private_key(), s.private_key()
    assert first.split("\n")[0] == second.split("\n")[0]
    try:
        ws.allow_secrets = True
        [mid] = engine.remember(
            ws.store(write=True), Draft(text=f"Deploy key:\n{first}"), WHO
        ).ids
        ws.allow_secrets = False
        refused(
            ws,
            lambda: engine.edit(
                ws.store(),
                mid,
                WHO,
                body=f"Deploy key:\n{first}\nBackup key:\n{second}",
            ),
            "private-key",
            f"memory {mid}'s body, line {first.count(chr(10)) + 4}",
        )
        # The key already there is not new: other lines may still change.
        engine.edit(ws.store(), mid, WHO, body=f"Deploy key (old):\n{first}")
        assert bodies(ws) == [f"Deploy key (old):\n{first}"]
    finally:
        ws.close()


def test_redact_mode_redacts_the_second_key_alone(tmp_path):
    ws = make_ws(tmp_path, "redact")
    first, second = s.private_key(), s.private_key()
    try:
        ws.allow_secrets = True
        [mid] = engine.remember(ws.store(write=True), Draft(text=first), WHO).ids
        ws.allow_secrets = False
        engine.edit(ws.store(), mid, WHO, body=f"{first}\n{second}")
        assert bodies(ws) == [f"{first}\n[REDACTED:private-key]"]
    finally:
        ws.close()
