"""The wire protocol, version 1: msgpack maps over binary WebSocket frames.

- `incoming`: client -> server messages, decoded and validated strictly into values.
- `outgoing`: server -> client frames, built from typed values and encoded once.
- `codes`: stable error codes and close codes.

docs/protocol.md documents every message both ways, with examples.
"""
