"""Identity tokens (guest and operator-minted) and display name rules."""

from __future__ import annotations

import base64
import json
import time

import jwt
import pytest

from klondike_live.auth import (
    GUEST_LIFETIME_SECONDS,
    ISSUER,
    LEEWAY_SECONDS,
    TOKEN_EXPIRED,
    TOKEN_INVALID,
    AuthError,
    Identity,
    KeyRing,
    key_id,
    mint_bot_token,
    mint_guest_token,
    mint_owned_bot_token,
    validate_display_name,
    verify_token,
)

SECRET = b"test-secret-test-secret-test-secret!"
OTHER = b"another-secret-another-secret-another"


def refused(token: str, code: str) -> AuthError:
    with pytest.raises(AuthError) as caught:
        verify_token(SECRET, token)
    assert caught.value.code == code
    assert SECRET.decode() not in str(caught.value)
    return caught.value


def b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def test_guest_token_round_trip() -> None:
    """A minted guest token verifies back to the same identity."""
    token, identity = mint_guest_token(SECRET, "  Ann   Lee ")
    assert identity == Identity(user_id=identity.user_id, name="Ann Lee", guest=True)
    assert identity.user_id.startswith("g_") and len(identity.user_id) == 18
    assert verify_token(SECRET, token) == identity


def test_guest_token_claims() -> None:
    """Guest tokens carry sub, name, iat, exp 30 days later, iss and guest: true."""
    token, identity = mint_guest_token(SECRET, "Bo", now=1_000_000)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims == {
        "sub": identity.user_id,
        "name": "Bo",
        "iat": 1_000_000,
        "exp": 1_000_000 + GUEST_LIFETIME_SECONDS,
        "iss": ISSUER,
        "guest": True,
    }
    assert GUEST_LIFETIME_SECONDS == 30 * 24 * 3600
    assert jwt.get_unverified_header(token)["alg"] == "HS256"


def test_each_guest_gets_a_new_user_id() -> None:
    """Two guests with the same name are two different users."""
    assert mint_guest_token(SECRET, "Ann")[1].user_id != mint_guest_token(SECRET, "Ann")[1].user_id


def test_guest_name_is_validated() -> None:
    """Minting refuses a display name that breaks the rules."""
    with pytest.raises(ValueError, match="empty"):
        mint_guest_token(SECRET, "   ")


def test_operator_token_accepted() -> None:
    """A token from the operator's site with only sub, any iss and no exp is accepted."""
    token = jwt.encode({"sub": "auth0|12345", "iss": "https://example.org"}, SECRET, "HS256")
    identity = verify_token(SECRET, token)
    assert identity.user_id == "auth0|12345" and not identity.guest
    assert identity.name.startswith("Player ")
    assert verify_token(SECRET, token).name == identity.name


def test_operator_token_name_used_when_valid() -> None:
    """An operator token's name claim is normalized and used."""
    claims = {"sub": "u-1", "name": "Zoë  K", "exp": int(time.time()) + 60}
    assert verify_token(SECRET, jwt.encode(claims, SECRET, "HS256")).name == "Zoë K"


def test_operator_token_bad_name_gets_stand_in() -> None:
    """A name the display rules refuse is replaced, not trusted and not fatal."""
    token = jwt.encode({"sub": "u-1", "name": "x" * 50}, SECRET, "HS256")
    assert verify_token(SECRET, token).name.startswith("Player ")


def test_operator_token_name_with_a_line_break_gets_stand_in() -> None:
    """A token name with a control character is replaced, not turned into spaces."""
    token = jwt.encode({"sub": "u-1", "name": "Ann\nLee"}, SECRET, "HS256")
    assert verify_token(SECRET, token).name.startswith("Player ")


def test_forged_token_refused() -> None:
    """A token signed with another secret is token_invalid."""
    token, _ = mint_guest_token(OTHER, "Mallory")
    refused(token, TOKEN_INVALID)


def test_tampered_payload_refused() -> None:
    """Changing the payload of a valid token breaks the signature."""
    token, _ = mint_guest_token(SECRET, "Eve")
    header, _, signature = token.split(".")
    forged = f"{header}.{b64({'sub': 'admin', 'name': 'Eve'})}.{signature}"
    refused(forged, TOKEN_INVALID)


def test_expired_token_refused() -> None:
    """A token past its exp is token_expired."""
    token, _ = mint_guest_token(SECRET, "Old", now=time.time() - GUEST_LIFETIME_SECONDS - 3600)
    refused(token, TOKEN_EXPIRED)


def test_leeway_is_five_seconds() -> None:
    """The documented clock-skew margin for `exp`, `nbf` and `iat` is 5 s."""
    assert LEEWAY_SECONDS == 5


def test_token_expired_within_the_leeway_accepted() -> None:
    """A token whose exp passed 3 s ago is still accepted (within the 5 s leeway)."""
    token = jwt.encode({"sub": "u-1", "exp": int(time.time()) - 3}, SECRET, "HS256")
    assert verify_token(SECRET, token).user_id == "u-1"


def test_token_expired_beyond_the_leeway_refused() -> None:
    """A token whose exp passed 7 s ago is token_expired (beyond the 5 s leeway)."""
    refused(jwt.encode({"sub": "u-1", "exp": int(time.time()) - 7}, SECRET, "HS256"), TOKEN_EXPIRED)


@pytest.mark.parametrize("claim", ["nbf", "iat"])
def test_token_from_the_near_future_accepted(claim: str) -> None:
    """nbf or iat 3 s ahead (a clock a little fast) is within the leeway."""
    token = jwt.encode({"sub": "u-1", claim: int(time.time()) + 3}, SECRET, "HS256")
    assert verify_token(SECRET, token).user_id == "u-1"


@pytest.mark.parametrize("claim", ["nbf", "iat"])
def test_token_from_the_future_refused(claim: str) -> None:
    """nbf or iat a minute ahead is token_invalid: the token is not valid yet."""
    token = jwt.encode({"sub": "u-1", claim: int(time.time()) + 60}, SECRET, "HS256")
    assert "not valid yet" in refused(token, TOKEN_INVALID).message


def test_alg_none_refused() -> None:
    """An unsigned token (alg none) is token_invalid even with a perfect payload."""
    unsigned = f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64({'sub': 'admin'})}."
    refused(unsigned, TOKEN_INVALID)


def test_other_algorithm_refused() -> None:
    """An HS512 token with the right secret is still refused: only HS256 is accepted."""
    token = jwt.encode({"sub": "u-1"}, SECRET * 2, "HS512")
    refused(token, TOKEN_INVALID)


@pytest.mark.parametrize("garbage", ["", "garbage", "a.b.c", "x" * 5000, "é.é.é"])
def test_garbage_refused(garbage: str) -> None:
    """Malformed, empty and oversized tokens are token_invalid."""
    refused(garbage, TOKEN_INVALID)


def test_missing_sub_refused() -> None:
    """A signed token without sub is token_invalid."""
    refused(jwt.encode({"name": "Nobody"}, SECRET, "HS256"), TOKEN_INVALID)


@pytest.mark.parametrize("sub", ["", "has space", "{room}", "x" * 129, 42])
def test_unusable_sub_refused(sub: object) -> None:
    """A sub that is not a short plain-character string is token_invalid."""
    refused(_signed_with_raw_sub(sub), TOKEN_INVALID)


def _signed_with_raw_sub(sub: object) -> str:
    # PyJWT refuses to encode a non-string sub, so sign the segments by hand.
    signing_input = f"{b64({'alg': 'HS256', 'typ': 'JWT'})}.{b64({'sub': sub})}"
    algorithm = jwt.get_algorithm_by_name("HS256")
    signature = algorithm.sign(signing_input.encode(), algorithm.prepare_key(SECRET))
    return f"{signing_input}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("Ann", "Ann"),
        ("  Ann  ", "Ann"),
        ("Ann \u00a0\u3000  Lee", "Ann Lee"),  # space separators (Zs) collapse
        (
            "\U0001f468\u200d\U0001f469\u200d\U0001f467",
            "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        ),
        ("\u2764\ufe0f\u200d\U0001f525 Fire", "\u2764\ufe0f\u200d\U0001f525 Fire"),
        (
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        ),
        ("Zoe\u0308", "Zoë"),  # NFC joins the combining diaeresis
        ("x" * 24, "x" * 24),
        ("名人", "名人"),
    ],
)
def test_display_name_canonical_form(raw: str, canonical: str) -> None:
    """Names are NFC-normalized, trimmed and have whitespace runs collapsed."""
    assert validate_display_name(raw) == canonical


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty"),
        (" \u3000 ", "empty"),
        ("Ann\tLee", "U\\+0009"),  # controls are refused, not turned into spaces
        ("Ann\nLee", "U\\+000A"),
        ("Ann\r\nLee", "U\\+000D"),
        ("Ann\x85Lee", "U\\+0085"),  # next line (C1 control)
        ("Ann\u2028Lee", "U\\+2028"),  # line separator (Zl)
        ("Ann\u2029Lee", "U\\+2029"),  # paragraph separator (Zp)
        ("Ann\x1fLee", "U\\+001F"),
        ("Ann\x0bLee", "U\\+000B"),
        (" \t ", "U\\+0009"),
        ("a\u00adb", "U\\+00AD"),  # soft hyphen (format)
        ("a\u200eb", "U\\+200E"),  # left-to-right mark (format)
        ("a\ufeffb", "U\\+FEFF"),  # byte order mark (format)
        ("\u200dAnn", "U\\+200D"),  # a joiner with nothing to join
        ("Ann\u200d", "U\\+200D"),
        ("Ann \u200d Lee", "U\\+200D"),
        ("Ann\u200c\u200cLee", "U\\+200C"),
        ("\u3164", "U\\+3164"),  # Hangul filler: a blank letter
        ("\U000e0041", "U\\+E0041"),  # tag character (format)
        ("\ud800", "U\\+D800"),  # lone surrogate
        ("\u0378", "U\\+0378"),  # unassigned
        ("x" * 25, "at most 24 characters, got 25"),
        ("a\u200bb", "U\\+200B"),  # zero-width space (format)
        ("a\u202eb", "U\\+202E"),  # right-to-left override
        ("a\x00b", "U\\+0000"),
        ("a\x7fb", "U\\+007F"),
        ("\ue000", "U\\+E000"),  # private use
    ],
)
def test_display_name_refused(raw: str, reason: str) -> None:
    """Empty, too long, control, separator and invisible characters are refused with a reason."""
    with pytest.raises(ValueError, match=reason):
        validate_display_name(raw)


# ---------------------------------------------------------------- key ids and rotation


def test_minted_token_names_its_key() -> None:
    """A guest token carries the current key's id in its `kid` header, never the key."""
    token, _ = mint_guest_token(KeyRing(SECRET, (OTHER,)), "Ann")
    header = jwt.get_unverified_header(token)
    assert header["kid"] == key_id(SECRET) and len(header["kid"]) == 16
    assert SECRET.decode() not in token and key_id(SECRET) != key_id(OTHER)


def test_token_signed_with_an_old_key_accepted() -> None:
    """After a rotation a token signed with an older key of the ring still verifies."""
    token, identity = mint_guest_token(OTHER, "Ann")  # minted before the rotation
    assert verify_token(KeyRing(SECRET, (OTHER,)), token) == identity


def test_token_with_an_unknown_kid_refused() -> None:
    """A token whose kid names no key of the ring is token_invalid, even if the signature
    would verify with one of them."""
    token = jwt.encode({"sub": "u-1"}, SECRET, "HS256", headers={"kid": "0123456789abcdef"})
    with pytest.raises(AuthError) as caught:
        verify_token(KeyRing(SECRET, (OTHER,)), token)
    assert caught.value.code == TOKEN_INVALID and "kid" in caught.value.message


def test_token_of_a_removed_key_refused() -> None:
    """Once its key left the ring, a token signed with it is token_invalid."""
    token, _ = mint_guest_token(OTHER, "Ann")
    with pytest.raises(AuthError) as caught:
        verify_token(KeyRing(SECRET), token)
    assert caught.value.code == TOKEN_INVALID


def test_token_without_kid_tried_with_every_key() -> None:
    """An operator's token without a kid verifies with whichever key of the ring signed it;
    its expiry is still checked."""
    ring = KeyRing(SECRET, (OTHER,))
    assert verify_token(ring, jwt.encode({"sub": "u-7"}, OTHER, "HS256")).user_id == "u-7"
    expired = jwt.encode({"sub": "u-7", "exp": int(time.time()) - 60}, OTHER, "HS256")
    with pytest.raises(AuthError) as caught:
        verify_token(ring, expired)
    assert caught.value.code == TOKEN_EXPIRED
    with pytest.raises(AuthError) as caught:
        verify_token(ring, jwt.encode({"sub": "u-7"}, b"z" * 40, "HS256"))
    assert caught.value.code == TOKEN_INVALID


def test_key_ring_repr_hides_the_keys() -> None:
    """repr(KeyRing) shows no key."""
    assert SECRET.decode() not in repr(KeyRing(SECRET, (OTHER,)))
    assert OTHER.decode() not in repr(KeyRing(SECRET, (OTHER,)))


def test_an_account_s_bot_token_is_a_bot_with_a_token_id_and_an_operator_s_has_none() -> None:
    """An owned bot's token verifies as a bot naming its token id (`sid`); an operator's
    bot token is a bot with no session, as before; a malformed id or user is refused."""
    owned, made = mint_owned_bot_token(SECRET, "b_abc", "AnnBot", "t" * 24)
    assert verify_token(SECRET, owned) == made
    assert (made.bot, made.guest, made.session, made.name) == (True, False, "t" * 24, "AnnBot")
    operator, identity = mint_bot_token(SECRET, "Operator Bot")
    verified = verify_token(SECRET, operator)
    assert verified == identity and verified.bot and verified.session is None
    for user, token_id in (("b_abc", "short"), ("b {x}", "t" * 24)):
        with pytest.raises(ValueError):
            mint_owned_bot_token(SECRET, user, "AnnBot", token_id)
