"""The rules of accounts without a node: usernames and their keys, the relying party a
request's headers allow, password hashes, and session tokens."""

from __future__ import annotations

import jwt
import pytest

from klondike_live.accounts import passwords
from klondike_live.accounts.origins import RelyingParty, relying_party
from klondike_live.accounts.usernames import check_username, username_key
from klondike_live.auth import AuthError, mint_guest_token, mint_session_token, verify_token

SECRET = b"s" * 32


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ("Ann", "Ann"),
        ("  ann_b.c-d ", "ann_b.c-d"),
        ("\uff32\uff45\uff44", "Red"),  # fullwidth letters: NFKC
        ("Zoë", "Zoë"),
        ("Борис", "Борис"),
        ("山田たろう", "山田たろう"),  # Han with Hiragana, as Japanese writes
        ("김민준", "김민준"),
    ],
)
def test_usernames_kept(typed: str, shown: str) -> None:
    assert check_username(typed)[0] == shown


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("ab", "3 to 20"),
        ("a" * 21, "3 to 20"),
        ("ann smith", "letters, digits"),
        ("_ann", "between"),
        ("ann_", "between"),
        ("an--n", "between"),
        ("pаypal", "one script"),  # noqa: RUF001 (a Cyrillic a among Latin letters)
        ("Ζeus", "one script"),  # noqa: RUF001 (a Greek Zeta)
        ("ann٣", "0-9"),
        ("Admin", "reserved"),
        ("ADM1N", "reserved"),
        ("guest_1", "reserved"),
        ("Bot-Ann", "reserved"),
        ("expert", "reserved"),
        ("ann\u200bb", "letters, digits"),
        (42, "text"),
    ],
)
def test_usernames_refused(typed: object, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_username(typed)


def test_a_username_s_key_is_the_same_for_case_width_and_look_alikes() -> None:
    key = username_key("Rose")
    assert (
        username_key("ROSE")
        == username_key("\uff52\uff4f\uff53\uff45")
        == username_key("R0SE")
        == key
    )
    assert username_key("\u0440\u043e\u0455\u0435") == username_key("pose")
    assert username_key("Straße") == username_key("STRASSE")
    assert username_key("Rosa") != key


@pytest.mark.parametrize(
    ("host", "origin", "rp_id", "party"),
    [
        ("127.0.0.1:8080", "http://127.0.0.1:8080", "", ("127.0.0.1", "http://127.0.0.1:8080")),
        ("localhost:9", "http://localhost:9", "", ("localhost", "http://localhost:9")),
        ("play.example.org", "https://play.example.org", "", ("play.example.org", "https://play.example.org")),
        ("node3.internal:8080", "https://play.example.org", "example.org", ("example.org", "https://play.example.org")),
        ("play.example.org", None, "", ("play.example.org", None)),
        ("play.example.org", "https://evil.example", "", None),
        ("play.example.org", "http://play.example.org", "", None),  # no TLS, not loopback
        ("example.org", "https://notexample.org", "", None),
        ("", "https://example.org", "", ("", None)),
    ],
)  # fmt: skip
def test_the_relying_party_follows_the_host_and_the_page(
    host: str, origin: str | None, rp_id: str, party: tuple[str, str | None] | None
) -> None:
    found = relying_party(host, origin, rp_id)
    if party == ("", None):
        assert found is None
    else:
        assert found == (RelyingParty(*party) if party is not None else None)


async def test_passwords_verify_and_unknown_users_never_do() -> None:
    stored = await passwords.hash_password("a long password")
    assert stored.startswith("$argon2id$")
    assert await passwords.verify(stored, "a long password") == (True, False)
    assert (await passwords.verify(stored, "a wrong password"))[0] is False
    assert (await passwords.verify(None, "a long password"))[0] is False
    with pytest.raises(ValueError, match="8 to 256"):
        passwords.check_password("short")
    with pytest.raises(ValueError, match="spaces"):
        passwords.check_password(" " * 9)


def test_session_tokens_name_their_session_and_are_no_guests() -> None:
    token, _ = mint_session_token(SECRET, "g_abc", "Ann", "s" * 24)
    identity = verify_token(SECRET, token)
    assert (identity.user_id, identity.session, identity.guest) == ("g_abc", "s" * 24, False)
    guest_token, _ = mint_guest_token(SECRET, "Ann")
    assert verify_token(SECRET, guest_token).session is None
    with pytest.raises(ValueError):
        mint_session_token(SECRET, "g_abc", "Ann", "short")
    bad = jwt.encode({"sub": "g_abc", "sid": "x"}, SECRET, algorithm="HS256")
    with pytest.raises(AuthError) as refused:
        verify_token(SECRET, bad)
    assert refused.value.code == "token_invalid"
