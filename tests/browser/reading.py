"""What a player can read on a page: card indices left uncovered, boxes that stay inside
their panels, and deals that build a long face-up column (to test the tightest fans).
"""

from __future__ import annotations

from playwright.sync_api import Page

from klondike_live.engine import Board, Variant
from klondike_live.engine.moves import F2T, T2F, W2F

# For every face-up card drawn on the boards matching `selector` that is not wholly
# under another card: its index (the top corner's rank and suit, measured by the glyph
# box of its text) must lie inside the card, outside every card drawn above it, and be
# at least 10 px tall. Returns how many cards it checked and what it found wrong.
INDEX_CHECK = """
(selector) => {
  const problems = [];
  let checked = 0;
  const meets = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
    && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  for (const board of document.querySelectorAll(selector)) {
    if (!board.offsetParent) continue;
    const label = board.getAttribute('aria-label') || selector;
    const cards = [...board.querySelectorAll('.card')].map((node) => ({
      node,
      rect: node.getBoundingClientRect(),
      z: Number(getComputedStyle(node).zIndex) || 0,
    }));
    for (const card of cards) {
      if (card.node.classList.contains('back')) continue;
      const above = cards.filter((o) => o !== card && o.z > card.z && meets(o.rect, card.rect));
      const x = card.rect.left + 2, y = card.rect.top + 2;
      const buried = above.some((o) => x >= o.rect.left && x <= o.rect.right
        && y >= o.rect.top && y <= o.rect.bottom);
      if (buried) continue;
      checked += 1;
      const corner = card.node.querySelector('.corner.top');
      const name = card.node.getAttribute('aria-label');
      if (!corner) { problems.push(`${label}: ${name} has no index`); continue; }
      const range = document.createRange();
      range.selectNodeContents(corner);
      const g = range.getBoundingClientRect();
      const r = card.rect;
      if (g.left < r.left - 0.5 || g.right > r.right + 0.5 || g.top < r.top - 0.5
          || g.bottom > r.bottom + 0.5) {
        problems.push(`${label}: ${name}'s index sticks out of the card`);
      }
      const over = above.filter((o) => meets(o.rect, g));
      if (over.length) {
        const by = over[0].node.getAttribute('aria-label');
        const depth = Math.round(g.bottom - over[0].rect.top);
        problems.push(`${label}: ${name}'s index is under ${by} (${depth} px)`);
      }
      if (g.height < 10) {
        problems.push(`${label}: ${name}'s index is ${g.height.toFixed(1)} px tall`);
      }
    }
  }
  return {checked, problems};
}
"""


def unreadable_indices(page: Page, selector: str = ".board") -> tuple[int, list[str]]:
    """(cards checked, problems) of INDEX_CHECK on the page's boards matching selector."""
    # A resize lays the boards out again on the next frames: let that start, then end.
    page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.wait_for_function("document.getAnimations().length === 0")
    result: dict[str, object] = page.evaluate(INDEX_CHECK, selector)
    checked = result["checked"]
    problems = result["problems"]
    assert isinstance(checked, int) and isinstance(problems, list)
    return checked, [str(p) for p in problems]


def assert_indices_readable(page: Page, selector: str = ".board", *, at_least: int = 1) -> None:
    """Every visible face-up card on those boards shows its whole index (and there are
    at least `at_least` of them, so the check cannot pass on an empty page)."""
    checked, problems = unreadable_indices(page, selector)
    size = page.viewport_size
    where = f"{size['width']}x{size['height']}" if size else "?"
    assert not problems, f"at {where}: " + "; ".join(problems[:8])
    assert checked >= at_least, f"at {where}: only {checked} face-up cards to check"


def longest_run(board: Board) -> int:
    """The most face-up cards in one column."""
    return max(len(pile) - down for pile, down in zip(board.tableau, board.face_down, strict=True))


def moves_to_long_column(seed: str, variant: Variant, want: int = 9) -> list[str] | None:
    """A short line of play (no foundation moves) that leaves `want` face-up cards in
    one column, found by a beam search over the deal; None when the search finds none."""
    start = Board.from_seed(seed, variant)
    beam: list[tuple[Board, list[str]]] = [(start, [])]
    seen = {start.key()}
    for _ in range(250):
        following: list[tuple[Board, list[str]]] = []
        for board, line in beam:
            for move in board.legal_moves():
                if move.kind in (T2F, W2F, F2T):
                    continue
                after = board.copy()
                after.play(move)
                if after.key() in seen:
                    continue
                seen.add(after.key())
                path = [*line, str(move)]
                if longest_run(after) >= want:
                    return path
                following.append((after, path))
        following.sort(key=lambda item: (-longest_run(item[0]), -_face_up(item[0]), len(item[1])))
        beam = following[:40]
        if not beam:
            return None
    return None


def _face_up(board: Board) -> int:
    return sum(len(pile) - down for pile, down in zip(board.tableau, board.face_down, strict=True))


def overflowing(page: Page, inner: str, outer: str) -> list[str]:
    """Elements matching `inner` whose box crosses the right or left edge of their
    closest `outer` ancestor (its padding box)."""
    found: list[str] = page.evaluate(
        """([inner, outer]) => {
          const out = [];
          for (const node of document.querySelectorAll(inner)) {
            const box = node.closest(outer);
            if (!box || !node.offsetParent) continue;
            const a = node.getBoundingClientRect(), b = box.getBoundingClientRect();
            if (a.right > b.right + 0.5 || a.left < b.left - 0.5)
              out.push(`${node.tagName.toLowerCase()} "${node.textContent.trim().slice(0, 30)}"`
                + ` spans ${Math.round(a.left)}..${Math.round(a.right)}`
                + ` in a box ${Math.round(b.left)}..${Math.round(b.right)}`);
          }
          return out;
        }""",
        [inner, outer],
    )
    return found


# Every text on the page fits its box at the window's size: the page no wider than the
# window; no element holding text wider inside than its box (scrollWidth > clientWidth),
# clipped by its own overflow, or outside the window (unless a box that scrolls sideways
# holds it: a table may scroll inside its own box); and no word broken inside (its
# letters on two lines; breaking at a hyphen or a slash is between words). Screen-reader
# only text (a 1 px box) is not laid out to be seen; form controls draw their own text;
# tokens longer than 24 characters (links, seeds, digests) are not words.
TEXT_FIT = """
() => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  const name = (el) => {
    const id = el.dataset.testid ? `[data-testid=${el.dataset.testid}]`
      : el.id ? `#${el.id}` : typeof el.className === 'string' && el.className.trim()
      ? '.' + el.className.trim().split(/\\s+/).join('.') : '';
    const text = (el.innerText || el.textContent || '').trim().replace(/\\s+/g, ' ');
    return `${el.tagName.toLowerCase()}${id} "${text.slice(0, 40)}"`;
  };
  const scrollsSideways = (el) => {
    for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
      const x = getComputedStyle(a).overflowX;
      if (x === 'auto' || x === 'scroll') return true;
    }
    return false;
  };
  const tiny = (el) => {
    for (let a = el; a && a !== document.body; a = a.parentElement) {
      const r = a.getBoundingClientRect();
      if (r.width <= 1 || r.height <= 1) return true;
    }
    return false;
  };
  if (document.documentElement.scrollWidth > width + 1) {
    problems.push(`the page is ${document.documentElement.scrollWidth} px wide in ${width} px`);
  }
  const boxes = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.data.trim()) continue;
    const parent = node.parentElement;
    if (!parent || parent.closest('script, style, template, select, textarea, option')) continue;
    if (!parent.checkVisibility() || tiny(parent)) continue;
    let box = parent;
    while (box.parentElement && getComputedStyle(box).display === 'inline') box = box.parentElement;
    boxes.add(box);
    for (const match of node.data.matchAll(/[^\\s\\-\\u2010\\u2013\\u2014\\/\\u00b7]+/g)) {
      const word = match[0];
      if (word.length < 2 || word.length > 24 || !/\\p{L}/u.test(word)) continue;
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + word.length);
      const lines = [...range.getClientRects()].filter((r) => r.width > 0);
      if (lines.length < 2) continue;
      const top = Math.min(...lines.map((r) => r.top));
      const bottom = Math.max(...lines.map((r) => r.top));
      if (bottom - top < lines[0].height / 2) continue;
      let cut = 1;
      for (; cut < word.length; cut += 1) {
        range.setStart(node, match.index + cut);
        range.setEnd(node, match.index + cut + 1);
        if (range.getBoundingClientRect().top - top > lines[0].height / 2) break;
      }
      problems.push(`${name(box)}: "${word.slice(0, cut)}/${word.slice(cut)}" broken mid-word`);
    }
  }
  for (const el of boxes) {
    const style = getComputedStyle(el);
    const rect = el.getBoundingClientRect();
    const scrolls = style.overflowX === 'auto' || style.overflowX === 'scroll';
    if (!scrolls && el.scrollWidth > el.clientWidth + 1) {
      const clipped = style.overflowX === 'visible' ? 'overflows' : 'is clipped';
      problems.push(`${name(el)} ${clipped}: ${el.scrollWidth} px of text in ${el.clientWidth} px`);
    }
    const clipsY = style.overflowY === 'hidden' || style.overflowY === 'clip';
    if (clipsY && el.scrollHeight > el.clientHeight + 1) {
      problems.push(`${name(el)} is clipped: ${el.scrollHeight} px high in ${el.clientHeight} px`);
    }
    if ((rect.right > width + 1 || rect.left < -1) && !scrollsSideways(el)) {
      problems.push(`${name(el)} spans ${Math.round(rect.left)}..${Math.round(rect.right)}`
        + ` in a ${width} px window`);
    }
  }
  return [...new Set(problems)];
}
"""


def unfitting_text(page: Page) -> list[str]:
    """What TEXT_FIT finds wrong on the page at its current size."""
    # A resize lays the page out again on the next frames: let that start, then end
    # (a hint's endless pulse moves nothing).
    page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.wait_for_function(
        "document.getAnimations()"
        ".filter((a) => a.effect?.getTiming().iterations !== Infinity).length === 0"
    )
    found: list[str] = page.evaluate(TEXT_FIT)
    return found
