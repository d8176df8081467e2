"""A passkey in software, for tests that speak the protocol without a browser: it makes
a P-256 credential for an RP id and answers WebAuthn challenges the way a browser and
its authenticator would (`none` attestation, user present and verified), as the JSON
`PublicKeyCredential.toJSON()` writes. Tests can make it answer wrongly on purpose: for
another origin, another RP id, or with a signature over something else."""

from __future__ import annotations

import hashlib
import json
import secrets
from base64 import urlsafe_b64encode
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

UP_UV = 0x01 | 0x04
ATTESTED = 0x40


def b64url(data: bytes) -> str:
    return urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class PasskeyDevice:
    """One discoverable credential of one authenticator."""

    origin: str
    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    credential_id: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    user_handle: bytes = b""
    count: int = 0

    def _client_data(self, kind: str, options: dict[str, Any], origin: str | None) -> bytes:
        data = {"type": kind, "challenge": options["challenge"], "origin": origin or self.origin}
        return json.dumps(data).encode()

    def _public_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        cose = {
            1: 2,
            3: -7,
            -1: 1,
            -2: numbers.x.to_bytes(32, "big"),
            -3: numbers.y.to_bytes(32, "big"),
        }
        return bytes(cbor2.dumps(cose))

    def create(self, options_text: str, *, origin: str | None = None) -> str:
        """The answer to creation options (JSON text), as the browser sends it back."""
        options = json.loads(options_text)
        self.user_handle = options["user"]["id"].encode()
        rp_hash = hashlib.sha256(options["rp"]["id"].encode()).digest()
        attested = (
            bytes(16) + len(self.credential_id).to_bytes(2, "big") + self.credential_id
        ) + self._public_key()
        auth_data = rp_hash + bytes([UP_UV | ATTESTED]) + self.count.to_bytes(4, "big") + attested
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        response = {
            "clientDataJSON": b64url(self._client_data("webauthn.create", options, origin)),
            "attestationObject": b64url(attestation),
        }
        return self._answer(response)

    def get(self, options_text: str, *, origin: str | None = None, rp_id: str | None = None) -> str:
        """The answer to request options (JSON text), signed with this credential."""
        options = json.loads(options_text)
        self.count += 1
        rp_hash = hashlib.sha256((rp_id or options["rpId"]).encode()).digest()
        auth_data = rp_hash + bytes([UP_UV]) + self.count.to_bytes(4, "big")
        client_data = self._client_data("webauthn.get", options, origin)
        signed = auth_data + hashlib.sha256(client_data).digest()
        signature = self.key.sign(signed, ec.ECDSA(hashes.SHA256()))
        response = {
            "clientDataJSON": b64url(client_data),
            "authenticatorData": b64url(auth_data),
            "signature": b64url(signature),
            "userHandle": b64url(self.user_handle),
        }
        return self._answer(response)

    def _answer(self, response: dict[str, str]) -> str:
        return json.dumps(
            {
                "id": b64url(self.credential_id),
                "rawId": b64url(self.credential_id),
                "type": "public-key",
                "response": response,
                "clientExtensionResults": {},
                "authenticatorAttachment": "platform",
            }
        )
