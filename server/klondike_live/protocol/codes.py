"""Stable error codes and close codes of the wire protocol.

Error codes are strings a client can act on; close codes are WebSocket close codes
(RFC 6455 ones and the application range 4000-4999). Both are listed, with their
meaning, in docs/protocol.md; never renumber or rename one.
"""

from __future__ import annotations

import enum


class ErrorCode(enum.StrEnum):
    """The `code` of an `error` message."""

    MALFORMED = "malformed"  # not msgpack, or not a map
    TEXT_FRAME = "text_frame"  # a text frame; the protocol is binary msgpack
    UNKNOWN_TYPE = "unknown_type"  # `t` names no client message
    BAD_FIELD = "bad_field"  # a missing, extra, mistyped or out-of-range field
    NOT_HELLO = "not_hello"  # the first message must be `hello`
    VERSION = "version"  # unsupported protocol version
    TOKEN_INVALID = "token_invalid"  # forged or malformed token
    TOKEN_EXPIRED = "token_expired"  # a valid token past its expiry
    BAD_NAME = "bad_name"  # display name refused
    TOKEN_REVOKED = "token_revoked"  # the token's session ended (signed out), or the
    # guest it names is an account now: sign in
    BAD_USERNAME = "bad_username"  # a username the rules refuse (message says why)
    USERNAME_TAKEN = "username_taken"  # another account has that username (or one alike)
    BAD_PASSWORD = "bad_password"  # a new password the rules refuse
    SIGN_IN_FAILED = "sign_in_failed"  # no such username or not its password, or a
    # passkey that did not verify: the same answer whichever it was
    NOT_A_GUEST = "not_a_guest"  # only a guest can be made an account
    NOT_SIGNED_IN = "not_signed_in"  # the request needs an account's session
    TOO_MANY_BOTS = "too_many_bots"  # the account owns as many bot accounts as it may
    NO_BOT = "no_bot"  # no bot account of that id is yours
    NOT_CONFIRMED = "not_confirmed"  # the confirmation typed (a username) does not match
    BAD_ORIGIN = "bad_origin"  # account requests come from a page of this site only
    NO_ROOM = "no_room"  # no such room (or not visible to you)
    NOT_IN_ROOM = "not_in_room"  # the message needs you to have joined the room
    ROOM_FULL = "room_full"  # no racer seat left
    WRONG_STATE = "wrong_state"  # not allowed in the room's current state
    NOT_HOST = "not_host"  # only the host may do that
    NOT_READY = "not_ready"  # start needs every seated racer ready (and two of them)
    NOT_A_RACER = "not_a_racer"  # spectators cannot move, ready or resign
    OWN_RACE = "own_race"  # a racer's account cannot spectate its own race
    ILLEGAL_MOVE = "illegal_move"  # the rules refuse the move (message says why)
    BAD_MOVE = "bad_move"  # the move token is not in the notation
    NOT_ALLOWED = "not_allowed"  # undo/hints outside practice games
    RATE_LIMITED = "rate_limited"  # too many messages; slow down
    BUSY = "busy"  # a concurrent change won; retry
    SPOILER = "spoiler"  # today's daily games are shown only to those who finished theirs
    UNAVAILABLE = "unavailable"  # the store is unreachable, or the daily challenge is not
    # ready yet: retry later with the same ids (a move that did get applied is acked)
    BOTS_NOT_ALLOWED = "bots_not_allowed"  # a bot (account or seat) in a room without bots
    NOT_A_BOT = "not_a_bot"  # remove_bot names a seat that holds no bot
    NOT_QUEUED = "not_queued"  # unqueue from a connection that waits in no quick race queue
    STILL_PLAYING = "still_playing"  # a racer still playing its board may not react
    BLOCKED = "blocked"  # a block stands between the two players (either way)
    NOT_FOLLOWING = "not_following"  # challenge a player you follow
    NOT_ONLINE = "not_online"  # the player challenged is not connected
    CHALLENGE_PENDING = "challenge_pending"  # a challenge between the two waits already
    NO_CHALLENGE = "no_challenge"  # no pending challenge from that player (answered or expired)
    NOT_YOURSELF = "not_yourself"  # follow, block or challenge someone else
    INTERNAL = "internal"  # the server failed; the message was not applied


class CloseCode(enum.IntEnum):
    """WebSocket close codes the server uses."""

    NORMAL = 1000
    GOING_AWAY = 1001
    POLICY = 1008  # floods and repeated abuse
    TOO_BIG = 1009  # a frame over the size limit
    INTERNAL = 1011
    SERVER_RESTART = 4000  # shutting down or store lost: reconnect (with backoff) and resume
    REPLACED = 4001  # a newer connection of the same account took over
    AUTH_FAILED = 4002  # hello with a token that is forged, expired or malformed
    VERSION = 4003  # hello with an unsupported protocol version
    HELLO_TIMEOUT = 4004  # no hello in time
    TOO_MANY_CONNECTIONS = 4005  # this address or account already holds the node's cap
    SIGNED_OUT = 4006  # the connection's account session was ended (signed out)
