"""Passkey ceremonies (WebAuthn, through the `webauthn` library).

Registration: `creation_options` gives the browser what `navigator.credentials.create`
needs (the account's user id as the user handle, a resident key, user verification
preferred) and the challenge to remember;
`verify_creation` checks the browser's answer against it and returns the new
credential. Sign-in: `request_options` asks for any passkey of this RP (discoverable
credentials, no username typed, so nothing tells whether a username exists);
`verify_request` checks the answer against the stored credential. Every failure is a
`PasskeyError` with a short reason that says nothing of what is stored.

Options travel as the JSON WebAuthn's `PublicKeyCredential.parseCreationOptionsFromJSON`
reads (`options_to_json`); answers come back as `PublicKeyCredential.toJSON()` writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import bytes_to_base64url
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from klondike_live.accounts.origins import RelyingParty
from klondike_live.errors import LiveError

RP_NAME: Final = "Klondike Live"
TIMEOUT_MS: Final = 120_000
MAX_ANSWER: Final = 16_384
"""The longest answer (JSON) a browser may send back."""


class PasskeyError(LiveError):
    """A passkey answer was refused (the reason is safe to show)."""


@dataclass(frozen=True, slots=True)
class NewPasskey:
    """A verified passkey to store: its id (base64url), public key (COSE) and counter."""

    credential_id: str
    public_key: bytes
    sign_count: int


def creation_options(party: RelyingParty, user_id: str, username: str) -> tuple[str, bytes]:
    """The creation options (JSON) and their challenge, for a guest with no passkey yet."""
    options = generate_registration_options(
        rp_id=party.rp_id,
        rp_name=RP_NAME,
        user_id=user_id.encode(),
        user_name=username,
        user_display_name=username,
        timeout=TIMEOUT_MS,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            user_verification=UserVerificationRequirement.PREFERRED,
        ),
    )
    return options_to_json(options), options.challenge


def request_options(party: RelyingParty) -> tuple[str, bytes]:
    """The request options (JSON) for any passkey of this RP, and their challenge."""
    options = generate_authentication_options(
        rp_id=party.rp_id,
        timeout=TIMEOUT_MS,
        user_verification=UserVerificationRequirement.PREFERRED,
    )
    return options_to_json(options), options.challenge


def _answer(text: str) -> dict[str, Any]:
    if len(text) > MAX_ANSWER:
        raise PasskeyError("the passkey's answer is too long")
    try:
        data = json.loads(text)
    except ValueError:
        raise PasskeyError("the passkey's answer is not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        raise PasskeyError("the passkey's answer names no credential")
    return data


def answer_id(text: str) -> str:
    """The credential id (base64url) an answer names; `PasskeyError` if it names none."""
    return str(_answer(text)["id"])


def verify_creation(party: RelyingParty, challenge: bytes, text: str) -> NewPasskey:
    """The passkey a creation answer registers; `PasskeyError` if it does not verify."""
    if party.origin is None:
        raise PasskeyError("passkeys need a browser page of this site")
    try:
        verified = verify_registration_response(
            credential=_answer(text),
            expected_challenge=challenge,
            expected_rp_id=party.rp_id,
            expected_origin=party.origin,
        )
    except (WebAuthnException, KeyError, TypeError, ValueError):
        raise PasskeyError("the passkey could not be verified") from None
    return NewPasskey(
        bytes_to_base64url(verified.credential_id),
        verified.credential_public_key,
        verified.sign_count,
    )


def verify_request(
    party: RelyingParty, challenge: bytes, text: str, public_key: bytes, sign_count: int
) -> int:
    """The passkey's new signature counter once a request answer verifies against the
    stored key; `PasskeyError` if it does not."""
    if party.origin is None:
        raise PasskeyError("passkeys need a browser page of this site")
    try:
        verified = verify_authentication_response(
            credential=_answer(text),
            expected_challenge=challenge,
            expected_rp_id=party.rp_id,
            expected_origin=party.origin,
            credential_public_key=public_key,
            credential_current_sign_count=sign_count,
        )
    except (WebAuthnException, KeyError, TypeError, ValueError):
        raise PasskeyError("the passkey could not be verified") from None
    return int(verified.new_sign_count)
