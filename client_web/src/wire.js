// @ts-check
/**
 * The protocol's messages (docs/protocol.md) and the HTTP answers the pages read, as
 * types for the type checker. Nothing here runs: modules import these names in JSDoc
 * only, and the page never loads this file.
 *
 * Frames are decoded once, in net.js, and trusted to have these shapes: the server
 * validates what it sends, and the client never acts on more than it shows.
 */

/** @import { Diff, View } from "./view.js" */

// ------------------------------------------------------------ client → server

/**
 * @typedef {{t: "hello", v: number, token?: string, name?: string}} HelloFrame
 * @typedef {{t: "ping"}} PingFrame
 * @typedef {{t: "rename", name: string}} RenameFrame
 * @typedef {{t: "create", kind: "race" | "solo" | "daily", variant: string, seats?: number,
 *   time_limit?: number, public?: boolean, deal?: "certified" | "any", seed?: string,
 *   moves?: string[], bots?: boolean, machine?: BotLevel, join?: boolean, best_of?: number}} CreateFrame
 * @typedef {"relaxed" | "steady" | "expert"} BotLevel
 * @typedef {{t: "add_bot", room: string, level: BotLevel}} AddBotFrame
 * @typedef {{t: "remove_bot", room: string, seat: number}} RemoveBotFrame
 * @typedef {{t: "join", room: string, as: "racer" | "spectator", since?: [number, number, number][],
 *   reactions?: boolean}} JoinFrame
 * @typedef {{t: "leave", room: string}} LeaveFrame
 * @typedef {{t: "ready", room: string, ready: boolean}} ReadyFrame
 * @typedef {{t: "start", room: string}} StartFrame
 * @typedef {{t: "move", room: string, id: number, m: string}} MoveFrame
 * @typedef {{t: "undo", room: string, id: number}} UndoFrame
 * @typedef {{t: "hint", room: string}} HintRequestFrame
 * @typedef {{t: "finish", room: string}} FinishRequestFrame
 * @typedef {{t: "resign", room: string}} ResignFrame
 * @typedef {{t: "rematch", room: string}} RematchFrame
 * @typedef {{t: "react", room: string, r: "clap" | "fire" | "wow" | "laugh" | "sad" | "party"}} ReactFrame
 * @typedef {{t: "show_reactions", room: string, on: boolean}} ShowReactionsFrame
 * @typedef {{t: "daily_watch" | "daily_unwatch", date: string, variant: string}} DailyWatchFrame
 * @typedef {{t: "tournament_create", name: string, format: "series" | "heats", variants: string[],
 *   public?: boolean, cap?: number, opens_at?: number, closes_at: number, from?: string, to?: string,
 *   start_at?: number, heats?: number, pause?: number, time_limit?: number}} TournamentCreateFrame
 * @typedef {{t: "tournament_watch" | "tournament_unwatch" | "tournament_enter" | "tournament_withdraw",
 *   tournament: string}} TournamentRequestFrame
 * @typedef {"open" | "close" | "remove" | "start_heat" | "cancel"} TournamentActionName
 * @typedef {{t: "tournament_action", tournament: string, action: TournamentActionName, user?: string}} TournamentActionFrame
 * @typedef {{t: "queue", variant: string}} QueueFrame
 * @typedef {{t: "unqueue"}} UnqueueFrame
 * @typedef {{t: "passkey_options", username?: string}} PasskeyOptionsFrame
 * @typedef {{t: "register", username: string, password?: string, passkey?: string}} RegisterFrame
 * @typedef {{t: "sign_in", username?: string, password?: string, passkey?: string}} SignInFrame
 * @typedef {{t: "sign_out", session?: string, everywhere?: boolean}} SignOutFrame
 * @typedef {{t: "bots"}} BotsRequestFrame
 * @typedef {{t: "bot_create", username: string}} BotCreateFrame
 * @typedef {{t: "bot_new_token" | "bot_delete", user: string}} BotRequestFrame
 * @typedef {{t: "follow" | "unfollow" | "block" | "unblock", user: string, name?: string}} RelateFrame
 * @typedef {{t: "friends"}} FriendsRequestFrame
 * @typedef {{t: "challenge", user: string, variant: string}} ChallengeFrame
 * @typedef {{t: "challenge_answer", user: string, accept: boolean}} ChallengeAnswerFrame
 * @typedef {{t: "delete_account", username: string}} DeleteAccountFrame
 */

/**
 * Any message a client sends (requests get a `rid` added by the connection).
 * @typedef {HelloFrame | PingFrame | RenameFrame | CreateFrame | JoinFrame | LeaveFrame | ReadyFrame | StartFrame
 *   | MoveFrame | UndoFrame | HintRequestFrame | FinishRequestFrame | ResignFrame | RematchFrame
 *   | ReactFrame | ShowReactionsFrame
 *   | DailyWatchFrame | AddBotFrame | RemoveBotFrame | TournamentCreateFrame | TournamentRequestFrame | TournamentActionFrame
 *   | QueueFrame | UnqueueFrame | PasskeyOptionsFrame | RegisterFrame | SignInFrame | SignOutFrame
 *   | BotsRequestFrame | BotCreateFrame | BotRequestFrame
 *   | RelateFrame | FriendsRequestFrame | ChallengeFrame | ChallengeAnswerFrame | DeleteAccountFrame} ClientFrame
 */

// ------------------------------------------------------------ server → client

/** @typedef {"playing" | "won" | "resigned" | "timeout"} BoardStatus */
/** @typedef {"lobby" | "countdown" | "racing" | "finished"} RoomState */
/** @typedef {"race" | "solo" | "daily"} RoomKind */
/** @typedef {{date: string, variant: string, ranked: boolean, closed?: boolean}} DailyInfo */

/**
 * @typedef {{t: "welcome", v: number, user: string, name: string, token: string, now: number, username?: string}} WelcomeFrame
 * @typedef {{t: "passkey_options", rid: number, create: boolean, options: string}} PasskeyChallengeFrame
 * @typedef {{t: "signed_in", rid: number, user: string, username: string, token: string, session: string}} SignedInFrame
 * @typedef {{t: "signed_out", rid: number, ended: number}} SignedOutFrame
 * @typedef {{t: "bot_token", rid: number, user: string, username: string, token: string}} BotTokenFrame
 * @typedef {{user: string, username: string, created_at: number, token_at: number | null}} BotAccountRow
 * @typedef {{t: "bots", rid: number, bots: BotAccountRow[]}} BotsFrame
 * @typedef {{t: "account_deleted", rid: number, games: number}} AccountDeletedFrame
 * @typedef {{t: "error", code: string, msg: string, rid?: number, room?: string, id?: number}} ErrorFrame
 * @typedef {{t: "pong", now: number, rid?: number}} PongFrame
 * @typedef {{t: "renamed", name: string, rid?: number}} RenamedFrame
 * @typedef {{t: "created", rid: number, room: string, daily?: DailyInfo}} CreatedFrame
 * @typedef {{t: "ack", room: string, id: number, off: number}} AckFrame
 * @typedef {{t: "daily_update", date: string, variant: string, count: number, rid?: number}} DailyUpdateFrame
 * @typedef {{t: "reactions", room: string, counts: Record<string, number>}} ReactionsFrame
 */

/**
 * A seat of a room: who sits there, ready or not, connected or not, a bot or not;
 * `away_since`: when an away racer's connection left (ms, server clock).
 * @typedef {{seat: number, user: string, name: string, ready: boolean, online: boolean,
 *   bot?: boolean, level?: BotLevel, away_since?: number}} Seat
 */

/**
 * @typedef {object} RoomFrame
 * @property {"room"} t
 * @property {string} room
 * @property {RoomKind} kind
 * @property {string} variant the variant text
 * @property {RoomState} state
 * @property {number} gen the race number in the room, from 1
 * @property {string} host the host's user id
 * @property {number} capacity
 * @property {number} time_limit seconds, 0 for none
 * @property {boolean} public
 * @property {(Seat | null)[]} seats
 * @property {number} spectators
 * @property {boolean} [bots] bots may take seats
 * @property {boolean} certified
 * @property {DailyInfo} [daily]
 * @property {number} [start_at] ms, from the countdown on
 * @property {number} [paused_at] ms: a practice game's clock stands still since then (it shows `paused_at - start_at`)
 * @property {string} [commitment]
 * @property {number} [ended_at]
 * @property {string} [seed]
 * @property {number} [grace] ms an away racer keeps its seat before it counts as resigned (races under way)
 * @property {{id: string, heat: number}} [tournament] a tournament's heat: its tournament and number
 * @property {string} [code] a race's room code (six letters, see codes.js)
 * @property {number} [best_of] a match of this many deals at most (absent: one race)
 * @property {MatchSummary} [match] the match under way or over (from its first deal on)
 */

/**
 * A match as it stands: its first deal's gen, each deal's winner (a seat, null: drawn),
 * deals won per seat, whether it is over and who took it (null: nobody, or not yet),
 * who left it, and when the next deal comes (ms, server clock).
 * @typedef {{best_of: number, from: number, deals: (number | null)[], score: number[], over: boolean,
 *   winner: number | null, forfeit: number | null, next_at?: number}} MatchSummary
 */

/**
 * `GET /api/matches/<room>/<gen>`: a match's record, read from its deals.
 * @typedef {{gen: number, winner: number | null, ended_at: number,
 *   ranking: {rank: number, seat: number, name: string, status: BoardStatus, time_ms: number | null,
 *   found: number}[]}} MatchDeal
 * @typedef {{room: string, best_of: number, from: number, score: number[], over: boolean,
 *   winner: number | null, forfeit: number | null, players: {seat: number, name: string, bot: boolean}[],
 *   deals: MatchDeal[]}} MatchRecord
 */

/**
 * `GET /api/codes/<code>`: the open race a room code leads to.
 * @typedef {{room: string, code: string}} CodeAnswer
 */

/**
 * What `board` and `diff` frames share.
 * @typedef {object} BoardFrameBase
 * @property {string} room
 * @property {number} seat
 * @property {"own" | "spectator"} audience
 * @property {number} epoch
 * @property {number} off
 * @property {number} moves
 * @property {BoardStatus} status
 * @property {number} [score] own board only
 */

/**
 * A board snapshot.
 * @typedef {BoardFrameBase & {t: "board", view: View, last_id?: number}} BoardFrame
 */

/**
 * One event of a board: its diff and move token, and (own board) the move id it settles.
 * @typedef {BoardFrameBase & {t: "diff", d: Diff, m?: string, id?: number}} DiffFrame
 */

/**
 * Opponents' progress: [seat, foundation cards, face-down cards, moves, status] each.
 * @typedef {{t: "progress", room: string, boards: [number, number, number, number, BoardStatus][],
 *   spectators?: number}} ProgressFrame
 */

/**
 * One board of the results, best first.
 * @typedef {object} RankingRow
 * @property {number} seat
 * @property {string} user
 * @property {string} name
 * @property {boolean} [bot]
 * @property {BotLevel} [level]
 * @property {number} rank
 * @property {BoardStatus} status
 * @property {number | null} [time_ms]
 * @property {number | null} [end_ms] when the board stopped playing (ms since the start)
 * @property {number} found
 * @property {number} moves
 * @property {View} view the final board, in full
 */

/**
 * @typedef {object} ResultsFrame
 * @property {"results"} t
 * @property {string} room
 * @property {number} gen
 * @property {RoomKind} kind
 * @property {string} [seed]
 * @property {string} commitment
 * @property {RankingRow[]} ranking
 * @property {MatchSummary} [match] a match's deal: the match after it
 */

/**
 * @typedef {{t: "hint", room: string, rid: number, m: string | null,
 *   verdict: "winning" | "lost" | "heuristic" | "won", msg: string}} HintFrame
 * @typedef {{t: "finish", room: string, rid: number, ok: boolean}} FinishFrame
 * @typedef {{t: "tournament_created", rid: number, tournament: string}} TournamentCreatedFrame
 * @typedef {{t: "tournament", tournament: Tournament, rid?: number}} TournamentFrame
 * @typedef {{t: "queued", variant: string, since: number, waiting: number, offer: boolean,
 *   rid?: number}} QueuedFrame waiting for a quick race (protocol section 7e)
 * @typedef {{t: "matched", room: string, variant: string}} MatchedFrame a quick race was made
 * @typedef {{t: "unqueued", variant: string, reason: "left" | "replaced", rid?: number}} UnqueuedFrame
 * @typedef {{t: "relation", user: string, following: boolean, blocked: boolean, rid?: number}} RelationFrame
 * @typedef {"racing" | "lobby" | "watching" | "solo" | "online"} Doing what a friend online is doing
 * @typedef {{user: string, name: string, online: boolean, doing?: Doing, room?: string}} FriendEntry
 * @typedef {{user: string, name: string}} PersonEntry
 * @typedef {{t: "friends", rid: number, following: FriendEntry[], followers: PersonEntry[],
 *   blocked: PersonEntry[]}} FriendsFrame the lists (protocol section 7h)
 * @typedef {{t: "challenge_sent", user: string, variant: string, expires_at: number, rid?: number}} ChallengeSentFrame
 * @typedef {{t: "challenged", user: string, name: string, variant: string, expires_at: number}} ChallengedFrame
 * @typedef {{t: "challenge_ended", user: string, reason: "accepted" | "declined", room?: string}} ChallengeEndedFrame
 */

/**
 * Any message the server sends.
 * @typedef {WelcomeFrame | ErrorFrame | PongFrame | RenamedFrame | CreatedFrame | RoomFrame | BoardFrame | DiffFrame
 *   | AckFrame | ProgressFrame | ReactionsFrame | ResultsFrame | DailyUpdateFrame | HintFrame | FinishFrame
 *   | TournamentCreatedFrame | TournamentFrame | QueuedFrame | MatchedFrame | UnqueuedFrame
 *   | PasskeyChallengeFrame | SignedInFrame | SignedOutFrame | AccountDeletedFrame | BotTokenFrame | BotsFrame
 *   | RelationFrame | FriendsFrame | ChallengeSentFrame | ChallengedFrame | ChallengeEndedFrame} ServerFrame
 */

/**
 * The reply a request gets, by the request's type.
 * @typedef {{ping: PongFrame, rename: RenamedFrame, create: CreatedFrame, join: RoomFrame, hint: HintFrame, finish: FinishFrame,
 *   tournament_create: TournamentCreatedFrame, tournament_watch: TournamentFrame,
 *   tournament_enter: TournamentFrame, tournament_withdraw: TournamentFrame,
 *   tournament_action: TournamentFrame, queue: QueuedFrame, unqueue: UnqueuedFrame,
 *   passkey_options: PasskeyChallengeFrame, register: SignedInFrame,
 *   sign_in: SignedInFrame, sign_out: SignedOutFrame, delete_account: AccountDeletedFrame,
 *   bots: BotsFrame, bot_create: BotTokenFrame, bot_new_token: BotTokenFrame, bot_delete: BotsFrame,
 *   follow: RelationFrame, unfollow: RelationFrame, block: RelationFrame, unblock: RelationFrame,
 *   friends: FriendsFrame, challenge: ChallengeSentFrame}} Replies
 */

// ------------------------------------------------------------ HTTP answers

/**
 * `GET /api/me/account`: the signed-in account and its sessions.
 * @typedef {{id: string, method: "passkey" | "password", agent: string, created_at: number,
 *   expires_at: number, current: boolean}} AccountSession
 * @typedef {{user: string, username: string, password: boolean, passkeys: number,
 *   sessions: AccountSession[]}} AccountAnswer
 */

/**
 * `GET /api/replay/ROOM/GEN`: one board, from its dealt view through every move.
 * @typedef {object} ReplayBoardData
 * @property {number} seat
 * @property {string} name
 * @property {boolean} [bot]
 * @property {BotLevel} [level]
 * @property {number} rank
 * @property {BoardStatus} status
 * @property {number | null} [time_ms]
 * @property {number | null} [end_t] ms after the start when the board stopped playing
 * @property {number} moves
 * @property {View} start
 * @property {{m: string, t?: number, d: Diff}[]} steps
 */

/**
 * @typedef {object} ReplayData
 * @property {string} room
 * @property {number} gen
 * @property {RoomKind} kind
 * @property {string} variant
 * @property {string} [seed]
 * @property {string} [deal] the deal text (notation section 3), with `seed`
 * @property {number} [ended_at]
 * @property {number} [from] record moves made before the game started (a game from a position)
 * @property {DailyInfo} [daily]
 * @property {MatchSummary} [match] a match's deal: the match after it
 * @property {ReplayBoardData[]} boards
 */

/**
 * `GET /api/analysis/ROOM/GEN`: the solver's verdict at every position of each board.
 * @typedef {"winnable" | "lost" | "unknown"} Verdict
 * @typedef {{ply: number, verdict: Verdict, line: string[] | null}} AnalysisPly
 * @typedef {{seat: number, name: string, lost_at: number | null, plies: AnalysisPly[]}} AnalysisBoard
 * @typedef {{status: "ready", boards: AnalysisBoard[]} | {status: "pending"}} AnalysisData
 */

/** @typedef {{room: string, variant: string, host: string, racers: number, capacity: number, bots?: number,
 *   best_of?: number}} OpenRoom */
/** @typedef {{room: string, kind: RoomKind, variant: string, racers?: string[], bots?: boolean[]}} LiveGame */

/**
 * @typedef {{room: string, gen: number, variant: string,
 *   ranking: {rank: number, name: string, bot?: boolean, status: BoardStatus, time_ms: number | null, found: number}[]}} FinishedGame
 */

/**
 * A row of a daily leaderboard.
 * @typedef {object} DailyRow
 * @property {number} rank
 * @property {string} user
 * @property {string} name
 * @property {boolean} won
 * @property {number | null} time_ms
 * @property {number} moves
 * @property {number} found
 * @property {string} [room]
 * @property {number} [gen]
 * @property {number} [seat]
 */

/**
 * `GET /api/daily/DATE/SLUG/leaderboard`.
 * @typedef {object} DailyLeaderboard
 * @property {string} date
 * @property {string} variant
 * @property {string} slug
 * @property {number} count
 * @property {boolean} closed
 * @property {number | null} [par] the day's par, in tokens
 * @property {DailyRow[]} rows
 * @property {{rank: number, rows: DailyRow[]} | null} [me]
 */

/**
 * Your attempt at a daily challenge.
 * @typedef {object} DailyAttempt
 * @property {string} room
 * @property {boolean} ranked
 * @property {"playing" | "finished"} state
 * @property {{won: boolean, time_ms: number | null, moves: number, found: number} | null} result
 * @property {number | null} rank
 */

/**
 * One of today's challenges.
 * @typedef {object} DailyChallenge
 * @property {string} date
 * @property {string} variant
 * @property {string} slug
 * @property {string | null} commitment
 * @property {number | null} par
 * @property {number} players
 * @property {number} closes_at
 * @property {DailyAttempt | null} [attempt]
 */

/**
 * `GET /api/daily`.
 * @typedef {{now: number, date: string, challenges: DailyChallenge[]}} DailyToday
 */

/**
 * A closed day of `GET /api/daily/archive`.
 * @typedef {object} DailyDay
 * @property {string} date
 * @property {string} variant
 * @property {string} slug
 * @property {string} commitment
 * @property {number} par
 * @property {string} seed
 * @property {number} players
 * @property {DailyRow | null} winner
 */

/**
 * `GET /api/daily/stats`.
 * @typedef {object} DailyStats
 * @property {number} days_played
 * @property {number} wins
 * @property {number} streak
 * @property {number} longest_streak
 * @property {number} win_streak
 * @property {Record<string, number>} [best_ms] by variant text
 */

export {};

/**
 * A player's statistics in one kind of game and variant (`GET /api/me/stats`).
 * @typedef {object} StatsCategory
 * @property {"solo" | "race" | "race_machine" | "daily"} kind
 * @property {string} variant
 * @property {number} played
 * @property {number} won
 * @property {number} win_rate 0..1
 * @property {number | null} best_ms
 * @property {number | null} fewest_moves
 * @property {number} streak
 * @property {number} best_streak
 */

/** @typedef {{played: number, won: number, win_rate: number}} StatsTotals */

/**
 * One of a player's recent games (`GET /api/me/stats`).
 * @typedef {object} RecentGame
 * @property {string} room
 * @property {number} gen
 * @property {string} kind
 * @property {string} variant
 * @property {BoardStatus} status
 * @property {boolean} won
 * @property {number} rank
 * @property {number} players
 * @property {number | null} time_ms
 * @property {number} moves
 * @property {number} found
 * @property {number} ended_at
 */

/**
 * `GET /api/me/stats`.
 * @typedef {{user: string, totals: StatsTotals, categories: StatsCategory[], recent: RecentGame[]}} PlayerStats
 */

/**
 * Another player of one of a player's games (`GET /api/players/ID/games`).
 * @typedef {{user: string, name: string, rank: number, bot: boolean}} GameOpponent
 */

/**
 * One of a player's finished games, from that player's side: its kind (`solo`, `race`,
 * `race_machine`, `daily`, `unranked`), how it ended for them and who else played.
 * @typedef {RecentGame & {result: "won" | "lost", opponents: GameOpponent[]}} GameLine
 */

/**
 * `GET /api/players/ID/games`: one page, newest first; `next` continues it (null: the end).
 * @typedef {{user: string, games: GameLine[], next: string | null}} PlayerGamesPage
 */

/**
 * `GET /api/players/ID/vs/OTHER`: every finished game the two played together, from
 * ID's side (`wins`: ranked above OTHER; `last_played`: ms, null before any).
 * @typedef {{user: string, opponent: string, games: number, wins: number, losses: number,
 *   draws: number, last_played: number | null}} HeadToHead
 */

/**
 * One of your unfinished games (`GET /api/me/unfinished`).
 * @typedef {object} UnfinishedGame
 * @property {string} room
 * @property {RoomKind} kind
 * @property {string} variant
 * @property {string | null} daily
 * @property {number} moves
 * @property {number} found
 * @property {number} time_ms
 * @property {boolean} paused
 * @property {number} created_at
 */

// ------------------------------------------------------------ tournaments (protocol section 7d)

/**
 * An entrant's result in one round, best first.
 * @typedef {object} RoundResult
 * @property {string} user
 * @property {string} name
 * @property {number} place
 * @property {number} points shared places share their points (4.5)
 * @property {boolean} won
 * @property {number | null} time_ms a winner's time, else when its foundation count was reached
 * @property {number} found
 * @property {number} moves
 * @property {string} [game] `<room>/<gen>` of the game, for its replay
 * @property {string} [replay] the archive's replay path (`/api/replay/<room>/<gen>`)
 */

/**
 * A round: a heat, or a series day and variant.
 * @typedef {object} TournamentRound
 * @property {number} round
 * @property {string} label
 * @property {string} state heats: scheduled/lobby/racing/finished/cancelled; days: scheduled/open/closed
 * @property {string} commitment SHA-256 of the deal text ("" until prepared)
 * @property {RoundResult[]} results
 * @property {boolean} [certified]
 * @property {number} [start_at]
 * @property {string} [room] a heat's room, once open
 * @property {number} [gen]
 * @property {string} [seed] once the round is over
 * @property {string} [date] a series day
 * @property {string} [variant] a series day's variant
 */

/** @typedef {{rank: number, user: string, name: string, points: number, wins: number, rounds: number}} Standing */

/**
 * The `tournament` object (also `GET /api/tournaments/ID` and its archive).
 * @typedef {object} Tournament
 * @property {string} id
 * @property {string} name
 * @property {"series" | "heats"} format
 * @property {string[]} variants
 * @property {boolean} public
 * @property {number} cap
 * @property {{user: string, name: string}} organizer
 * @property {number} created_at
 * @property {number} opens_at
 * @property {number} closes_at
 * @property {"open" | "closed"} registration
 * @property {"upcoming" | "running" | "finished" | "cancelled"} state
 * @property {{user: string, name: string}[]} entrants
 * @property {TournamentRound[]} rounds
 * @property {Standing[]} standings
 * @property {{at: number, by: string, text: string, kind?: string, args?: Record<string, string | number>}[]} log
 * @property {number} [ended_at]
 * @property {{from: string, to: string}} [series]
 * @property {{count: number, start_at: number, pause: number, time_limit: number}} [heats]
 */

/**
 * A tournament of `GET /api/tournaments`, in brief.
 * @typedef {object} ListedTournament
 * @property {string} id
 * @property {string} name
 * @property {"series" | "heats"} format
 * @property {string[]} variants
 * @property {string} state
 * @property {number} entrants
 * @property {number} cap
 * @property {string} organizer
 * @property {string} [from]
 * @property {string} [to]
 * @property {number} [start_at]
 * @property {number} [heats]
 */

/**
 * `GET /api/players/<USERNAME or ID>/profile` (docs/protocol.md section 10): `kind`
 * account or guest, `member_since` ms (a guest's first kept game; null: unknown), its
 * statistics, daily results, kept tournaments, first page of games (`next` continues it
 * on the games page) and, for a signed-in viewer, the viewer's record against it (`vs`,
 * from the viewer's side; null for yourself or anonymous).
 * @typedef {object} Profile
 * @property {string} user
 * @property {string} name
 * @property {"account" | "bot" | "guest"} kind
 * @property {string | null} owner
 * @property {number | null} member_since
 * @property {StatsTotals} totals
 * @property {StatsCategory[]} categories
 * @property {{stats: {streak: number, longest_streak: number, days_played: number, days_won: number},
 *   recent: {date: string, variant: string, won: boolean, time_ms: number | null,
 *   moves: number, found: number}[]}} daily
 * @property {{id: string, name: string, format: string, state: string, entrants: number,
 *   ended_at: number}[]} tournaments
 * @property {GameLine[]} games
 * @property {string | null} next
 * @property {HeadToHead | null} vs
 */
