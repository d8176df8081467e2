"""The solver's compact position: move generation, apply/restore, canonical keys.

The engine's `Board` is built for clarity and checked play; the search needs something
leaner. `Position` keeps the same facts in the cheapest form Python offers:

- `piles`: seven `bytes` (bottom to top; a face-down card is stored as its index plus
  `FACE_DOWN`, so the piles serve in the key as they are), `down`: face-down counts;
- `talon`: stock and waste as one `bytes` in dealing order (waste bottom .. waste top,
  then stock top .. stock bottom) with `pos` = cards in the waste, so the waste top is
  `talon[pos - 1]` and recycling is just `pos = 0`;
- `found`: highest rank per suit (C D H S), `passno`: the pass number.

Moves are plain tuples `(kind, a, b, c)` (see the `K_*` constants), never engine `Move`
objects. A stock move `(K_TALON, q, recycled, dst)` means "turn the stock (recycling
once first if `recycled`) until card `talon[q - 1]` is the waste top, and play it to
`dst`" (`dst == FOUNDATION` for its foundation); `tokens()` expands it back to the
notation's `D`/`R` tokens. `K_DRAW`/`K_RECYCLE` exist only for the search with stock
collapsing switched off.

This module must stay pure: no I/O, no asyncio.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from klondike_live.engine.board import Board
from klondike_live.engine.cards import RANK, RED, SUIT, SUITS
from klondike_live.engine.variant import UNLIMITED

K_T2F: Final = 0
K_T2T: Final = 1
K_TALON: Final = 2
K_F2T: Final = 3
K_DRAW: Final = 4
K_RECYCLE: Final = 5
K_EMPTY: Final = 6

FOUNDATION: Final = 7
"""`dst` of a stock move that plays the card to its foundation."""

SMove = tuple[int, int, int, int]
Snapshot = tuple[tuple[bytes, ...], tuple[int, ...], bytes, int, int, tuple[int, ...]]

_SINGLE: Final = tuple(bytes((c,)) for c in range(52))
FACE_DOWN: Final = 64
"""Added to a card's index while it lies face down in a pile."""
# The suits of the other colour: for a red card the black ones, and the other way round.
_OPPOSITE: Final = tuple((1, 2) if not RED[c] else (0, 3) for c in range(52))
# The two cards a card may be placed on: one rank higher, the other colour.
_PARENTS: Final = tuple(
    tuple(x for x in range(52) if RANK[x] == RANK[c] + 1 and RED[x] != RED[c]) for c in range(52)
)

_KINGS: Final = tuple(c for c in range(52) if RANK[c] == 13)
# The two cards that may be placed on a card: one rank lower, the other colour.
_CHILDREN: Final = tuple(
    tuple(x for x in range(52) if RANK[x] == RANK[c] - 1 and RED[x] != RED[c]) for c in range(52)
)


@dataclass(frozen=True, slots=True)
class Reductions:
    """Switches for each verdict-preserving reduction (all on by default).

    `tt`: transposition table with pass dominance (off: only cycles on the current path
    are cut). `autoplay`: safe foundation moves are made without branching. `stock`:
    stock moves collapsed to "turn to the k-th reachable card and play it". `partial`:
    a move leaving face-up cards behind is tried only when it frees a card for the
    foundation. `symmetry`: one move per king to the empty columns, no king moved off the
    bottom of a column, and piles sorted in the key. `ordering`: promising moves first.
    `empty`: a column's whole run is moved off (emptying the column) only when a king
    could go to the empty column straight after. `dead`: a position with a card that
    can never leave its place, over a card it needs, is lost (not searched).
    """

    tt: bool = True
    autoplay: bool = True
    stock: bool = True
    partial: bool = True
    symmetry: bool = True
    ordering: bool = True
    empty: bool = True
    dead: bool = True

    @classmethod
    def none(cls) -> Reductions:
        """Every reduction switched off: the brute-force reference search."""
        return cls(False, False, False, False, False, False, False, False)


class Position:
    """A mutable search position; `snapshot()`/`restore()` undo any sequence of moves."""

    __slots__ = ("down", "draw", "f2t", "found", "max_passes", "passno", "piles", "pos", "talon")

    def __init__(self, board: Board) -> None:
        self.piles: list[bytes] = [
            bytes([c + FACE_DOWN if i < d else c for i, c in enumerate(p)])
            for p, d in zip(board.tableau, board.face_down, strict=True)
        ]
        self.down: list[int] = list(board.face_down)
        self.talon: bytes = bytes(board.waste) + bytes(board.stock)
        self.pos: int = len(board.waste)
        self.found: list[int] = list(board.foundations)
        self.passno: int = board.pass_number
        self.draw: int = board.variant.draw
        self.max_passes: int = board.variant.passes
        self.f2t: bool = board.variant.f2t

    # ------------------------------------------------------------------ state

    def snapshot(self) -> Snapshot:
        """Everything that moves change, as an immutable value."""
        return (
            tuple(self.piles),
            tuple(self.down),
            self.talon,
            self.pos,
            self.passno,
            tuple(self.found),
        )

    def restore(self, snap: Snapshot) -> None:
        """Return to a snapshot taken earlier."""
        piles, down, self.talon, self.pos, self.passno, found = snap
        self.piles[:] = piles
        self.down[:] = down
        self.found[:] = found

    def key(self, symmetry: bool, with_pos: bool = True) -> bytes:
        """Canonical key of the position without the pass number (kept apart for dominance).

        The foundations are implied (every card not in a pile or the talon is on them).
        With `symmetry`, piles are sorted, so positions that differ only by which column
        holds what share a key. Without `with_pos` the waste/stock split is left out too,
        for the search's dominance table.
        """
        # Face-down cards are stored shifted by FACE_DOWN, so the piles are the key as is.
        piles = sorted(self.piles) if symmetry else self.piles
        if with_pos:
            return b"\xfe".join(piles) + b"\xff" + self.talon + _SINGLE[self.pos]
        return b"\xfe".join(piles) + b"\xff" + self.talon

    def pass_key(self) -> int:
        """The pass number where it matters (limited passes), else 0."""
        return 0 if self.max_passes == UNLIMITED else self.passno

    def is_won(self) -> bool:
        """All 52 cards are on the foundations."""
        f = self.found
        return f[0] + f[1] + f[2] + f[3] == 52

    def is_trivially_won(self) -> bool:
        """Talon empty and every tableau card face up: the rest goes up one by one."""
        return not self.talon and not any(self.down)

    def left(self) -> int:
        """Cards not yet on the foundations."""
        f = self.found
        return 52 - f[0] - f[1] - f[2] - f[3]

    def can_recycle(self) -> bool:
        """A further pass is allowed (the stock can be turned over again)."""
        return self.max_passes == UNLIMITED or self.passno < self.max_passes

    # ------------------------------------------------------------------ moves

    def moves(self, red: Reductions) -> list[SMove]:
        """The moves to search from here, best first when `red.ordering`."""
        piles, down, found = self.piles, self.down, self.found
        symmetry = red.symmetry
        # The pile each card tops (-1: none), by card: a list, which indexes faster than a
        # dict answers, as plain Python and compiled alike (top cards are face up, 0..51).
        top_at = [-1] * 52
        empties: list[int] = []
        to_found: list[SMove] = []
        for t in range(7):
            p = piles[t]
            if p:
                c = p[-1]
                top_at[c] = t
                if found[SUIT[c]] == RANK[c] - 1:
                    to_found.append((K_T2F, t, 0, 0))
            else:
                empties.append(t)
        if symmetry and empties:
            empties = empties[:1]
        flips: list[SMove] = []
        others: list[SMove] = []
        partial = red.partial
        parents = _PARENTS
        # With `empty`, a column is emptied only with a king to go there at once: the
        # king moves that could follow (`king_sources`), worked out when first needed.
        kings: list[int] | None = None
        for s in range(7):
            p = piles[s]
            d = down[s]
            n = len(p)
            if n == d:
                continue
            # The whole face-up run: turns a card (d > 0) or empties the column (d == 0).
            head = p[d]
            bucket = flips if d else others
            if RANK[head] == 13:
                if empties and not (symmetry and d == 0):
                    for t in empties:
                        bucket.append((K_T2T, s, t, d))
            elif d == 0 and red.empty:
                for parent in parents[head]:
                    t = top_at[parent]
                    if t >= 0:
                        if kings is None:
                            kings = self.king_sources(red.stock)
                        for code in kings:
                            others.append((K_EMPTY, s, t, code))
            else:
                for parent in parents[head]:
                    t = top_at[parent]
                    if t >= 0:
                        bucket.append((K_T2T, s, t, d))
            # Part of the run, leaving face-up cards behind.
            for i in range(d + 1, n):
                x = p[i - 1]
                if partial and found[SUIT[x]] != RANK[x] - 1:
                    continue
                for parent in parents[p[i]]:
                    t = top_at[parent]
                    if t >= 0:
                        others.append((K_T2T, s, t, i))
        talon_moves: list[SMove] = []
        if self.talon:
            self._talon_moves(red, top_at, empties, to_found, talon_moves)
        if self.f2t:
            for suit in range(4):
                r = found[suit]
                if not r:
                    continue
                c = suit * 13 + r - 1
                if r == 13:
                    for t in empties:
                        others.append((K_F2T, suit, t, 0))
                for parent in _PARENTS[c]:
                    t = top_at[parent]
                    if t >= 0:
                        others.append((K_F2T, suit, t, 0))
        if red.ordering:
            # Uncover the pile with the most face-down cards first.
            flips.sort(key=lambda m: -down[m[1]])
            return to_found + flips + talon_moves + others
        return to_found + talon_moves + flips + others

    # ------------------------------------------------------------------ dead ends

    def is_dead(self) -> bool:
        """A card that can never leave its place lies over a card that must go up first.

        Such a card `x` (not a king: a king can always wait for an empty column) is a
        face-down card or the head of a face-up run in a pile, or, when no recycle is
        left, a card in the waste, with a lower card of its suit somewhere under it, and
        each of its two tableau parents (one rank higher, the other colour) also under it
        or, without f2t, on its foundation. It cannot go up before the card under it;
        it cannot go onto a parent, which is never uncovered or never comes back; it
        moves with no run but its own (the cards under it are face down, or a waste).
        So the cards under it never go up and the position is lost.
        """
        piles, down = self.piles, self.down
        for s in range(7):
            p, d = piles[s], down[s]
            for i in range(1, min(d + 1, len(p))):
                x = p[i] - FACE_DOWN if i < d else p[i]
                if x not in _KINGS and self._blocked(x, p, i, FACE_DOWN):
                    return True
        if not self.can_recycle():
            talon = self.talon
            for i in range(1, self.pos):
                if talon[i] not in _KINGS and self._blocked(talon[i], talon, i, 0):
                    return True
        return False

    def dead_after(self, before: Snapshot, m: SMove, raised: bool = True) -> bool:
        """`is_dead()` after move `m` (and its safe moves) from snapshot `before`, when
        `before` was not dead: only a card whose parent just went up (when `raised`: some
        card did), or one just buried in the waste of the last pass, can be stuck now.
        """
        if raised:
            old, found = before[5], self.found
            for suit in range(4):
                r = old[suit]
                while r < found[suit]:
                    for x in _CHILDREN[suit * 13 + r]:
                        if found[SUIT[x]] < RANK[x] and self._stuck(x):
                            return True
                    r += 1
        if m[0] == K_TALON and not self.can_recycle():
            # `_blocked` inlined for each card just buried: a draw-1 turn buries many.
            talon, found, f2t = self.talon, self.found, self.f2t
            for i in range(max(1, 0 if m[2] else before[3]), self.pos):
                x = talon[i]
                parents = _PARENTS[x]
                if not parents:
                    continue  # a king
                a, b = parents
                if (f2t or found[SUIT[a]] < RANK[a]) and talon.find(a, 0, i) < 0:
                    continue
                if (f2t or found[SUIT[b]] < RANK[b]) and talon.find(b, 0, i) < 0:
                    continue
                if any(talon.find(c, 0, i) >= 0 for c in range(SUIT[x] * 13, x)):
                    return True
        return False

    def _stuck(self, x: int) -> bool:
        """Card `x` (below a king, not on its foundation) is stuck where it lies."""
        piles, down = self.piles, self.down
        for s in range(7):
            p, d = piles[s], down[s]
            i = p.find(x + FACE_DOWN, 0, d)
            if i < 0:
                if d < len(p) and p[d] == x:
                    i = d
                else:
                    continue
            return i > 0 and self._blocked(x, p, i, FACE_DOWN)
        if not self.can_recycle():
            i = self.talon.find(x, 0, self.pos)
            if i > 0:
                return self._blocked(x, self.talon, i, 0)
        return False

    def _blocked(self, x: int, seq: bytes, end: int, offset: int) -> bool:
        """`x` lies over `seq[:end]` (cards stored plus `offset`): both its parents are
        there or up (without f2t), and so is a lower card of its suit."""
        found, f2t = self.found, self.f2t
        for parent in _PARENTS[x]:
            if seq.find(parent + offset, 0, end) < 0 and (
                f2t or found[SUIT[parent]] < RANK[parent]
            ):
                return False
        return any(seq.find(c + offset, 0, end) >= 0 for c in range(SUIT[x] * 13, x))

    def king_sources(self, collapsed: bool) -> list[int]:
        """The king moves that could fill a column emptied now, encoded for `K_EMPTY`.

        A king that heads a face-up run on face-down cards (`u * 32 + index`), one the
        stock can turn up now, the cheapest way (`256 + 2 * q + recycled`), or with f2t
        one on its foundation (`512 + suit`); kings already at the bottom of a column are
        left out (moving one gives the same position). Without stock collapsing
        (`collapsed` false) no compound move is made: the emptying move itself is then
        made alone, encoded as `-1`, when any king could be turned up.

        Why the `empty` reduction (a column's whole run is moved elsewhere only as
        `K_EMPTY`, with a king following) keeps verdicts: such a move changes nothing but
        the empty column; the run's cards are as reachable from the other pile, and the
        card they now cover only loses a use. Only a king can use an empty column, so in
        a winning line the move can be put off until just before the first king goes
        there (each move in between has its twin from the run's old column; one that
        moves the run away again, or plays it up, ends in the same position either way).
        If no king ever goes there, the move can be left out.
        """
        piles, down = self.piles, self.down
        out: list[int] = []
        for u in range(7):
            d = down[u]
            if d and len(piles[u]) > d and piles[u][d] in _KINGS:
                out.append(u * 32 + d)
        talon = self.talon
        if talon:
            pos, n, draw = self.pos, len(talon), self.draw
            recycle = self.can_recycle()
            turned = False
            for k in _KINGS:
                i = talon.find(k)
                if i < 0:
                    continue
                q = i + 1
                if q == pos or (q > pos and ((q - pos) % draw == 0 or q == n)):
                    out.append(256 + 2 * q)
                elif recycle and (q % draw == 0 or q == n):
                    out.append(256 + 2 * q + 1)
                else:
                    continue
                turned = True
            if not collapsed:
                out = [c for c in out if c < 256]
                if turned:
                    out.append(-1)
        if self.f2t:
            for suit in range(4):
                if self.found[suit] == 13:
                    out.append(512 + suit)
        return out

    @staticmethod
    def king_move(code: int, s: int) -> SMove:
        """The king move of a `K_EMPTY` move into column `s`, from its code."""
        if code < 256:
            return (K_T2T, code >> 5, s, code & 31)
        if code < 512:
            return (K_TALON, (code - 256) >> 1, (code - 256) & 1, s)
        return (K_F2T, code - 512, s, 0)

    def _talon_moves(
        self,
        red: Reductions,
        top_at: list[int],
        empties: list[int],
        to_found: list[SMove],
        out: list[SMove],
    ) -> None:
        talon, pos, found = self.talon, self.pos, self.found
        n = len(talon)
        reach: list[tuple[int, int]] = []
        if red.stock:
            draw = self.draw
            if pos:
                reach.append((pos, 0))
            q = pos
            while q < n:
                q = min(q + draw, n)
                reach.append((q, 0))
            if self.can_recycle():
                # One recycle reaches every card a pass can show; more would only cost passes.
                q = 0
                while q < n:
                    q = min(q + draw, n)
                    if q < pos or ((q - pos) % draw and q != n):
                        reach.append((q, 1))
        else:
            if pos:
                reach.append((pos, 0))
            if pos < n:
                out.append((K_DRAW, 0, 0, 0))
            elif self.can_recycle():
                out.append((K_RECYCLE, 0, 0, 0))
        for q, rec in reach:
            c = talon[q - 1]
            if found[SUIT[c]] == RANK[c] - 1:
                to_found.append((K_TALON, q, rec, FOUNDATION))
            if RANK[c] == 13:
                for t in empties:
                    out.append((K_TALON, q, rec, t))
                continue
            for parent in _PARENTS[c]:
                t = top_at[parent]
                if t >= 0:
                    out.append((K_TALON, q, rec, t))

    def apply(self, m: SMove) -> None:
        """Make move `m` (one of `moves()`), turning up any uncovered card."""
        kind = m[0]
        piles = self.piles
        if kind == K_T2T:
            s, t, i = m[1], m[2], m[3]
            p = piles[s]
            piles[t] += p[i:]
            piles[s] = p = p[:i]
        elif kind == K_T2F:
            s = m[1]
            p = piles[s]
            self.found[SUIT[p[-1]]] += 1
            piles[s] = p = p[:-1]
        elif kind == K_TALON:
            q = m[1]
            talon = self.talon
            c = talon[q - 1]
            self.talon = talon[: q - 1] + talon[q:]
            self.pos = q - 1
            if m[2]:
                self.passno += 1
            if m[3] == FOUNDATION:
                self.found[SUIT[c]] += 1
            else:
                piles[m[3]] += _SINGLE[c]
            return
        elif kind == K_EMPTY:
            s = m[1]
            piles[m[2]] += piles[s]
            piles[s] = b""
            if m[3] >= 0:
                self.apply(self.king_move(m[3], s))
            return
        elif kind == K_F2T:
            suit = m[1]
            r = self.found[suit]
            self.found[suit] = r - 1
            piles[m[2]] += _SINGLE[suit * 13 + r - 1]
            return
        elif kind == K_DRAW:
            self.pos = min(self.pos + self.draw, len(self.talon))
            return
        else:
            self.pos = 0
            self.passno += 1
            return
        d = self.down[s]
        if d and len(p) == d:
            self.down[s] = d - 1
            piles[s] = p[:-1] + _SINGLE[p[-1] - FACE_DOWN]

    def safe_move(self) -> SMove | None:
        """A foundation move that can never hurt, or None.

        A tableau top (or, in draw-1, the waste top) goes up when it fits and is an ace or
        a two, or (foundation cards staying put) both cards of rank-1 of the other colour
        are already up, so nothing could ever need to be placed on it. In draw-3 a waste
        card is left alone: taking it out of the talon regroups the cards after it.
        """
        found = self.found
        f2t = self.f2t
        for s, p in enumerate(self.piles):
            if p:
                c = p[-1]
                r = RANK[c]
                if found[SUIT[c]] == r - 1:  # rare: only then is the rule worked out
                    if r <= 2:
                        return (K_T2F, s, 0, 0)
                    a, b = _OPPOSITE[c]
                    if not f2t and found[a] >= r - 1 and found[b] >= r - 1:
                        return (K_T2F, s, 0, 0)
        if self.draw == 1 and self.pos:
            c = self.talon[self.pos - 1]
            r = RANK[c]
            if found[SUIT[c]] == r - 1:
                a, b = _OPPOSITE[c]
                if r <= 2 or (not f2t and found[a] >= r - 1 and found[b] >= r - 1):
                    return (K_TALON, self.pos, 0, FOUNDATION)
        return None

    def safe_after(self, m: SMove) -> SMove | None:
        """`safe_move()` after move `m`, when there was none before and `m` added no card
        to the foundations: only the piles and the waste top that `m` changed can offer one.
        """
        kind = m[0]
        if kind == K_T2T:
            return self._safe_top(m[1])
        if kind == K_TALON:
            found = self._safe_top(m[3])
            return found if found is not None else self._safe_waste()
        if kind == K_F2T:
            return self._safe_top(m[2])
        if kind == K_EMPTY:
            return self.safe_move()
        return self._safe_waste()

    def _safe_top(self, s: int) -> SMove | None:
        p = self.piles[s]
        return (K_T2F, s, 0, 0) if p and self._is_safe(p[-1]) else None

    def _safe_waste(self) -> SMove | None:
        if self.draw == 1 and self.pos and self._is_safe(self.talon[self.pos - 1]):
            return (K_TALON, self.pos, 0, FOUNDATION)
        return None

    def _is_safe(self, c: int) -> bool:
        found = self.found
        r = RANK[c]
        if found[SUIT[c]] != r - 1:
            return False
        if r <= 2:
            return True
        a, b = _OPPOSITE[c]
        return not self.f2t and found[a] >= r - 1 and found[b] >= r - 1

    def finishing_moves(self) -> list[SMove]:
        """From a trivially won position: every remaining card to its foundation."""
        out: list[SMove] = []
        piles, found = self.piles, self.found
        while self.left():
            for s in range(7):
                p = piles[s]
                if p and found[SUIT[p[-1]]] == RANK[p[-1]] - 1:
                    m = (K_T2F, s, 0, 0)
                    out.append(m)
                    self.apply(m)
                    break
            else:
                raise AssertionError("a trivially won position with no card to go up")
        return out

    # ------------------------------------------------------------------ notation

    def tokens(self, m: SMove) -> list[str]:
        """The notation tokens of move `m` in the current position (before applying it)."""
        kind = m[0]
        if kind == K_T2F:
            return [f"{m[1] + 1}F"]
        if kind == K_T2T:
            return [f"{m[1] + 1}{m[2] + 1}"]
        if kind == K_F2T:
            return [f"F{SUITS[m[1]]}{m[2] + 1}"]
        if kind == K_DRAW:
            return ["D"]
        if kind == K_RECYCLE:
            return ["R"]
        if kind == K_EMPTY:
            # The emptying move leaves the talon and the king's pile as they were.
            first = [f"{m[1] + 1}{m[2] + 1}"]
            return first if m[3] < 0 else first + self.tokens(self.king_move(m[3], m[1]))
        q, rec, dst = m[1], m[2], m[3]
        draw, pos, n = self.draw, self.pos, len(self.talon)
        if rec:
            out = ["D"] * -(-(n - pos) // draw) + ["R"] + ["D"] * -(-q // draw)
        else:
            out = ["D"] * -(-(q - pos) // draw)
        out.append("WF" if dst == FOUNDATION else f"W{dst + 1}")
        return out

    def cost(self, m: SMove) -> int:
        """How many tokens move `m` takes in the current position."""
        if m[0] == K_EMPTY:
            return 1 if m[3] < 0 else 1 + self.cost(self.king_move(m[3], m[1]))
        if m[0] != K_TALON:
            return 1
        q, draw, pos = m[1], self.draw, self.pos
        if m[2]:
            return 2 - (-(len(self.talon) - pos) // draw) - (-q // draw)
        return 1 - (-(q - pos) // draw)
