"""Finding secrets in a text: each kind named, ordinary text left alone (issue 33)."""

from __future__ import annotations

import pytest
import secret_samples as s

from ctx.hub.secrets import could_hold_secret, find_secrets, redact_secrets


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"The deploy user's key id is {s.aws_key()}.", "aws-access-key"),
        (f"aws_secret_access_key = {s.aws_secret()}", "aws-secret-key"),
        (f"Use {s.github_token()} for the release job.", "github-token"),
        (f"GitLab CI token: {s.gitlab_token()}", "gitlab-token"),
        (f"SLACK_BOT_TOKEN={s.slack_token()}", "slack-token"),
        (f"Stripe live key: {s.stripe_key()}", "stripe-key"),
        (f"The Maps key is {s.google_key()}", "google-api-key"),
        (f"OPENAI_API_KEY={s.sk_key()}", "openai-key"),
        (
            f"DATABASE_URL=postgres://app:{s.password()}@db.internal/app",
            "password-in-url",
        ),
        (f"Server=db;User ID=sa;Password={s.password()};", "password"),
        (f'client_secret = "{s.password()}{s.password()}"', "secret-assignment"),
        (f"The deploy key:\n{s.private_key()}\nKeep it safe.", "private-key"),
        (f"cache: redis://:{s.password()}@cache:6379/0", "password-in-url"),
        (f"Publish with {s.npm_token()} from CI", "npm-token"),
        (f"VAULT_TOKEN is {s.vault_token()}", "vault-token"),
        (
            f'curl -H "Authorization: Bearer {s.bearer()}" https://api.example',
            "authorization-header",
        ),
    ],
)
def test_each_kind_is_found_and_named(text, kind):
    found = find_secrets(text)
    assert found, text
    if kind is not None:
        assert found[0].kind == kind


def test_a_private_key_is_one_secret_over_its_lines_and_redacted_whole():
    key = s.private_key()
    text = f"Intro\nThe deploy key:\n{key}\nKeep it safe."
    [found] = find_secrets(text)
    assert (found.kind, found.line) == ("private-key", 3)
    assert text[found.start : found.end] == key
    assert redact_secrets(text) == (
        "Intro\nThe deploy key:\n[REDACTED:private-key]\nKeep it safe."
    )


def test_redaction_names_each_kind_in_place():
    aws, token = s.aws_key(), s.github_token()
    text = f"key {aws} and\ntoken {token} end"
    assert redact_secrets(text) == (
        "key [REDACTED:aws-access-key] and\ntoken [REDACTED:github-token] end"
    )
    assert [f.line for f in find_secrets(text)] == [1, 2]


@pytest.mark.parametrize(
    "text",
    [
        # Words a placeholder is made of, inside a real password or token.
        "postgres://u:Secretly-Blue-Canary-42@db.prod.internal/app",
        "https://deploy:MySecretPass@git.internal.corp/repo.git",
        "redis://:Rainbow-Sample-Horse@cache.prod:6379",
        "Authorization: Bearer yourMomTokenQzXcVbNmAsDfGhJkLpOiUy",
    ],
)
def test_a_secret_holding_a_placeholder_s_word_is_still_found(text):
    assert find_secrets(text)


def test_a_dashed_token_is_redacted_through_its_dashes():
    token = "MTA4NjQ5NzE0NjQ5MzQ5NTQyNA.GxYz12.aB3dE5gH7jK9mN1pQ3sT5vX7zA9abc-dE_fGhI2"
    assert redact_secrets(f"bot token {token} ok") == (
        "bot token [REDACTED:discord-token] ok"
    )


def test_a_redaction_stops_at_the_token_s_end():
    aws, token = s.aws_key(), s.github_token()
    assert redact_secrets(f"{aws}/prod-bucket and {token}-or-older") == (
        "[REDACTED:aws-access-key]/prod-bucket and [REDACTED:github-token]-or-older"
    )


def test_a_long_key_is_redacted_to_its_end():
    # The pattern matches a Stripe key's first 24 characters: a real one of
    # over 100 kept 75 of them after the mark.
    key = "sk_live_51Hx" + "ZaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789" * 2 + "ab"
    assert redact_secrets(f"The key is {key}. Rotate it.") == (
        "The key is [REDACTED:stripe-key]. Rotate it."
    )


@pytest.mark.parametrize(
    "text",
    [
        "Password: I forgot it again, so I reset it.",
        "The key point is that we deploy on Fridays.",
        "token = self.next_token()",
        "max_tokens = 512",
        'api_key_env = "CHAT_API_KEY"',
        "in the URL itself: `https://user:token@host/team/memory.git`",
        "_CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'",
        'response = client.get("/api/memories/01JD2X9K7M3Q4R5S6T7V8W9XYZ")',
        "password = os.environ['DB_PASSWORD']",
        'password: "${DB_PASSWORD}"',
        "Caroline: Hey Mel! Good to see you! How have you been?",
        'curl -H "Authorization: Bearer $TOKEN" https://api.example',
        # Hashes said to be hashes: an image digest, a commit, an integrity.
        "image digest sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d"
        "6c15b0f00a08",
        "Reverted to commit=4f3c2a1b9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a",
        "integrity: sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+"
        "DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
        "Send Authorization: Bearer <token> with each request.",
        "Authorization: Bearer YOUR_ACCESS_TOKEN_HERE",
        "Authorization: Token xxxxxxxxxxxxxxxxxxxxxxxx",
        "export VAULT_TOKEN=hvs.example_token_here_placeholder",
        "NPM_TOKEN=npm_" + "X" * 36,
        "REDIS_URL=redis://:your_password@localhost:6379",
    ],
)
def test_ordinary_text_holds_no_secret(text):
    assert find_secrets(text) == []


def test_the_gate_skips_plain_prose_without_loading_anything():
    assert not could_hold_secret("Deploys go through staging first, on Fridays.")
    assert could_hold_secret("the password is in the vault")
    assert could_hold_secret(s.aws_key())
