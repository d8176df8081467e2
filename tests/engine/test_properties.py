"""Property tests over random seeds, variants and random legal move sequences."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from msgpack import unpackb

from klondike_live.bots.wire import apply_wire_diff, diff_from_wire, view_from_wire
from klondike_live.engine import (
    ALL_CARDS,
    Board,
    Card,
    IllegalMoveError,
    Move,
    Variant,
    View,
    diff,
    view_of,
)
from klondike_live.engine.moves import DRAW, F2T, RECYCLE, T2F, T2T, W2F, W2T
from klondike_live.engine.view import advance, changed_piles, racer_view
from klondike_live.protocol.outgoing import diff_wire, pack, view_wire

UNIVERSE = [Move(DRAW), Move(RECYCLE), Move(W2F)]
UNIVERSE += [Move(W2T, 0, d) for d in range(7)] + [Move(T2F, s) for s in range(7)]
UNIVERSE += [Move(T2T, s, d) for s in range(7) for d in range(7) if s != d]
UNIVERSE += [Move(F2T, suit, d) for suit in range(4) for d in range(7)]

variants = st.sampled_from(
    [
        Variant(),
        Variant(draw=3),
        Variant(draw=1, passes=0),
        Variant(draw=3, passes=0, f2t=True),
        Variant(draw=1, passes=2, f2t=True),
    ]
)
games = st.tuples(
    st.text(max_size=12), variants, st.lists(st.integers(0, 10_000), min_size=1, max_size=120)
)


def play_out(seed: str, variant: Variant, choices: list[int]) -> list[Board]:
    """Boards after each random legal move (copies), starting with the deal."""
    board = Board.from_seed(seed, variant)
    boards = [board.copy()]
    for choice in choices:
        moves = board.legal_moves()
        if not moves:
            break
        board.play(moves[choice % len(moves)])
        boards.append(board.copy())
    return boards


def all_cards(board: Board) -> list[int]:
    cards: list[int] = [c for pile in board.tableau for c in pile]
    cards += [*board.stock, *board.waste]
    cards += [s * 13 + r for s, rank in enumerate(board.foundations) for r in range(rank)]
    return sorted(cards)


def fits(card: int, pile: tuple[Card, ...]) -> bool:
    c = Card(card)
    if not pile:
        return c.rank == 13
    return pile[-1].rank == c.rank + 1 and pile[-1].is_red != c.is_red


def naive_legal(board: Board) -> set[Move]:
    """Legal moves worked out directly from the rules, independently of the engine's code."""
    legal: set[Move] = set()
    tableau, down, found = board.tableau, board.face_down, board.foundations
    variant = board.variant
    if board.stock:
        legal.add(Move(DRAW))
    pass_left = variant.unlimited or board.pass_number < variant.passes
    if not board.stock and board.waste and pass_left:
        legal.add(Move(RECYCLE))
    if board.waste:
        top = board.waste[-1]
        if found[top.suit] == top.rank - 1:
            legal.add(Move(W2F))
        legal.update(Move(W2T, 0, d) for d in range(7) if fits(top, tableau[d]))
    for s in range(7):
        if tableau[s] and found[tableau[s][-1].suit] == tableau[s][-1].rank - 1:
            legal.add(Move(T2F, s))
        for i in range(down[s], len(tableau[s])):
            legal.update(
                Move(T2T, s, d) for d in range(7) if d != s and fits(tableau[s][i], tableau[d])
            )
    if variant.f2t:
        for suit in range(4):
            if found[suit]:
                card = suit * 13 + found[suit] - 1
                legal.update(Move(F2T, suit, d) for d in range(7) if fits(card, tableau[d]))
    return legal


@settings(max_examples=150, deadline=None)
@given(games)
def test_every_card_is_present_exactly_once(game: tuple[str, Variant, list[int]]) -> None:
    """After any sequence of legal moves, the 52 cards are all present exactly once."""
    for board in play_out(*game):
        assert all_cards(board) == list(range(52))


@settings(max_examples=150, deadline=None)
@given(games)
def test_undo_restores_the_exact_position(game: tuple[str, Variant, list[int]]) -> None:
    """Popping every move returns, step by step, to each earlier position exactly."""
    boards = play_out(*game)
    board = boards[-1].copy()
    for earlier in reversed(boards[:-1]):
        board.pop()
        assert board.key() == earlier.key()
        assert board.foundations == earlier.foundations
        assert (board.score, board.pass_number) == (earlier.score, earlier.pass_number)


@settings(max_examples=100, deadline=None)
@given(games)
def test_legal_moves_are_exactly_what_play_accepts(game: tuple[str, Variant, list[int]]) -> None:
    """legal_moves() == the moves of the whole move universe that play() accepts == the rules."""
    for board in play_out(*game)[::5]:
        legal = board.legal_moves()
        assert len(set(legal)) == len(legal)
        accepted = set()
        for move in UNIVERSE:
            try:
                board.play(move)
            except IllegalMoveError:
                continue
            board.pop()
            accepted.add(move)
        assert set(legal) == accepted == naive_legal(board)


@settings(max_examples=100, deadline=None)
@given(games)
def test_stated_run_sizes_are_checked(game: tuple[str, Variant, list[int]]) -> None:
    """A tableau move with a stated size is legal only with the size actually moved."""
    for board in play_out(*game)[::7]:
        for move in board.legal_moves():
            if move.kind != T2T:
                continue
            before = len(board.tableau[move.src])
            board.push(move)
            moved = before - len(board.tableau[move.src])
            board.pop()
            assert board.is_legal(move._replace(size=moved))
            assert not board.is_legal(move._replace(size=moved % 13 + 1))


@settings(max_examples=120, deadline=None)
@given(games, st.lists(st.integers(0, 10_000), max_size=60))
def test_views_never_show_unknown_cards_and_diffs_apply(
    game: tuple[str, Variant, list[int]], other_choices: list[int]
) -> None:
    """Views and diffs hold only known cards; a racer never sees its own face-down cards;
    applying diff(old, new) to old gives new, for a racer and for a spectator."""
    seed, variant, choices = game
    boards = play_out(seed, variant, choices)
    rival = play_out(seed, variant, other_choices)[-1]
    previous: dict[str, object] = {}
    for board in boards:
        for who, known in (
            ("racer", board.seen),
            ("spectator", board.seen & rival.seen),
        ):
            view = view_of(board, known)
            assert all(known >> c & 1 for c in view.cards())
            if who == "racer":
                face_down = {
                    c for p, d in zip(board.tableau, board.face_down, strict=True) for c in p[:d]
                }
                assert not face_down & view.cards()
            old = previous.get(who)
            if old is not None:
                change = diff(old, view)  # type: ignore[arg-type]
                assert all(known >> c & 1 for c in change.cards())
                assert change.apply(old) == view  # type: ignore[arg-type]
            previous[who] = view


@settings(max_examples=100, deadline=None)
@given(games)
def test_racer_view_is_the_view_under_the_racers_knowledge(
    game: tuple[str, Variant, list[int]],
) -> None:
    """The racer's fast view equals the general view under `Board.seen`, every move."""
    for board in play_out(*game):
        assert racer_view(board) == view_of(board, board.seen)


def move_or_undo(board: Board, choice: int) -> tuple[int, ...] | None:
    """A random game's next step, chosen by `choice`: one of the legal moves, or now and
    then (and whenever there is none) an undo; the piles it changed, or None at a dead
    end with nothing to undo."""
    moves = board.legal_moves()
    if board.moves and (not moves or choice % 5 == 0):
        return changed_piles([board.pop()])
    if not moves:
        return None
    move = moves[choice % len(moves)]
    board.play(move)
    return changed_piles([move])


@settings(max_examples=150, deadline=None)
@given(games, st.lists(st.integers(0, 10_000), max_size=60), st.integers(0, 2**52 - 1))
def test_advancing_a_view_equals_building_it_again(
    game: tuple[str, Variant, list[int]], other_choices: list[int], noise: int
) -> None:
    """`advance` after each move or undo (rebuilding only the changed piles) gives the
    same view and the same diff as building the whole view again: for the racer, and for
    viewers under fixed masks (a rival's knowledge, an arbitrary one)."""
    seed, variant, choices = game
    board = Board.from_seed(seed, variant)
    rival = play_out(seed, variant, other_choices)[-1]
    viewers: list[int | None] = [None, rival.seen, noise, 0]
    views = [racer_view(board) if k is None else view_of(board, k) for k in viewers]
    for choice in choices:
        piles = move_or_undo(board, choice)
        if piles is None:
            break
        for index, known in enumerate(viewers):
            whole = racer_view(board) if known is None else view_of(board, known)
            view, change = advance(views[index], board, known, piles)
            assert view == whole
            assert change == diff(views[index], whole)
            views[index] = view


@settings(max_examples=150, deadline=None)
@given(games, st.lists(st.integers(0, 10_000), max_size=60), st.integers(0, 2**52 - 1))
def test_a_wire_diff_decoded_and_applied_gives_the_whole_view_built_again(
    game: tuple[str, Variant, list[int]], other_choices: list[int], noise: int
) -> None:
    """What the client and the bots do with a board stream: the first view decoded from
    its frame, then each diff the server sends after a move or an undo (`advance`,
    encoded and decoded as a frame's `d`) applied by `ViewDiff.apply` through
    `apply_wire_diff`: each time it is the whole view built again, for the racer and for
    viewers under fixed masks."""
    seed, variant, choices = game
    board = Board.from_seed(seed, variant)
    rival = play_out(seed, variant, other_choices)[-1]
    viewers: list[int | None] = [None, rival.seen, noise, 0, ALL_CARDS]

    def whole(known: int | None) -> View:
        return racer_view(board) if known is None else view_of(board, known)

    sent = [whole(known) for known in viewers]
    followed = [view_from_wire(variant, unpackb(pack(view_wire(view)))) for view in sent]
    assert followed == sent
    for choice in choices:
        piles = move_or_undo(board, choice)
        if piles is None:
            break
        for index, known in enumerate(viewers):
            sent[index], change = advance(sent[index], board, known, piles)
            frame_diff = unpackb(pack(diff_wire(change)))
            assert diff_from_wire(frame_diff) == change
            followed[index] = apply_wire_diff(followed[index], frame_diff)
            assert followed[index] == whole(known)


def test_changed_piles_name_each_kind_of_move() -> None:
    """Tableau piles by index, the waste as `WASTE` (7), sorted, once each."""
    assert changed_piles([Move(T2T, 4, 1)]) == (1, 4)
    assert changed_piles([Move(T2F, 2)]) == (2,)
    assert changed_piles([Move(F2T, 3, 6)]) == (6,)
    assert changed_piles([Move(W2T, 0, 5), Move(DRAW)]) == (5, 7)
    assert changed_piles([Move(W2F), Move(RECYCLE)]) == (7,)
    assert changed_piles([Move(T2F, 2), Move(T2F, 2), Move(T2T, 2, 0)]) == (0, 2)
    assert changed_piles([]) == ()
