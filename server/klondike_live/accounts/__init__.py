"""Accounts: a guest made permanent with a username and a passkey or a password.

    usernames.py  what a username may be, and the key that makes it unique
    passwords.py  argon2id hashes, checked in a thread, the same work for unknown users
    passkeys.py   WebAuthn ceremonies (the `webauthn` library): options and verification
    origins.py    the relying party (RP id, origins) a request's Host and Origin allow

The account keeps the guest's user id, so what the guest played is the account's. The
records live in the history database (`history.accounts`), the live checks (sessions,
accounts made from guests, sign-in limits) in Valkey (`store.accounts`), and the
requests are the service's (`service.accounts`). docs/operations.md, "Accounts".
"""
