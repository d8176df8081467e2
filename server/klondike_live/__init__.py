"""Klondike Live: real-time head-to-head Klondike Solitaire races on seeded deals.

Exceptions. The engine stands alone and has its own root; everything else the server
raises of its own derives from `klondike_live.errors.LiveError`:

    engine.KlondikeError (ValueError)         the rules engine (engine/errors.py)
    ├── NotationError                         text that is not a card, move or record
    │   └── InvalidMoveError                  a move token that does not parse
    ├── InvalidValueError                     a value built from parts the game forbids
    ├── IllegalMoveError                      the rules refuse a move; `reason` says why
    │   └── ReplayError                       a record's move that does not replay
    ├── RecordResultError                     a record whose declared result is wrong
    └── UndoError (also IndexError)           nothing to undo

    errors.LiveError                          the server's root
    ├── errors.Refusal                        a request refused: `code` (a protocol
    │   │                                     ErrorCode) and a readable `message`; the
    │   │                                     race rules, the service and the gateway
    │   │                                     raise it, the gateway sends it as `error`
    │   ├── protocol.ProtocolError            a frame that breaks the protocol (+ `rid`)
    │   └── auth.AuthError                    a token refused
    ├── errors.InputError                     a command-line tool's unusable input
    ├── config.ConfigError (ValueError)       a setting that does not parse, by its key
    ├── bus.BusError (ValueError)             a bus message that does not decode
    ├── store.Conflict                        a compare-and-set that kept losing
    ├── store.batcher.NotReplicated           a write no replica acknowledged in time
    │                                         (also redis-py's RedisError)
    ├── history.HistoryError                  the history database failed or refused
    ├── history.MigrationError                its schema could not be brought up to date
    │   └── SchemaTooNew                      a database migrated by a newer release
    ├── history.accounts.AccountTaken         a username or guest with an account already
    ├── history.bots.TooManyBots              an owner with as many bot accounts as it may
    ├── accounts.passkeys.PasskeyError        a passkey answer that does not verify
    ├── embedded.EmbeddedValkeyError          the embedded Valkey would not start
    ├── store.devcluster.DevClusterError      the local development cluster failed
    ├── devnodes.OptionError (ValueError)     `klondike-live cluster` options
    ├── gateway.startup.StartupError          a node that cannot start, in one line
    ├── daily.CertificateError (ValueError)   a certificate that does not check
    ├── daily.DailyError, DayOpenError        a day not prepared; a secret day revealed
    ├── solver.SolverError, WorkerError       a solver bug; its worker process failed
    │   OutOfBudget                           (inside a search: its budget is spent)
    └── client.ServerError                    the Python client: the server said `error`

`store.StoreError` is redis-py's `RedisError` under the store's name: any failure of a
store call, which the gateway answers with `unavailable`.
"""

__version__ = "0.2.0"
