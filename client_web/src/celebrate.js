// @ts-check
/**
 * The win celebration: the classic cascade. The cards leave the foundations one by one,
 * kings first, and bounce down the screen leaving trails. It plays over the page on a
 * canvas that takes no input; any click or key ends it, and it ends by itself. The
 * caller skips it when the player asked for reduced motion.
 */

import { RANK_TEXT, SUIT_SYMBOLS } from "./cards.js";

const LAUNCH_MS = 110;
const MAX_MS = 12_000;
const GRAVITY = 0.45;
const BOUNCE = 0.72;

/**
 * @typedef {object} Flying
 * @property {number} card
 * @property {number} x
 * @property {number} y
 * @property {number} vx
 * @property {number} vy
 */

/**
 * Start the cascade from the four foundation places (viewport rectangles, clubs,
 * diamonds, hearts, spades), asked for at every frame: the page may still move the
 * board once the game is won (the results appear above it), and the cards and their
 * trails move with it. Returns a function that stops it early.
 * @param {() => (DOMRect | undefined)[]} foundations
 * @returns {() => void}
 */
export function celebrate(foundations) {
  const canvas = document.createElement("canvas");
  canvas.className = "celebration";
  canvas.dataset.testid = "celebration";
  canvas.setAttribute("aria-hidden", "true");
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.round(window.innerWidth * ratio);
  canvas.height = Math.round(window.innerHeight * ratio);
  document.body.append(canvas);
  const ctx = canvas.getContext("2d");
  const first = foundations()[0];
  const width = first?.width || 60;
  const height = first?.height || 84;
  /** @type {Flying[]} */
  const flying = [];
  // Kings first, a suit at a time: K♣ K♦ K♥ K♠ Q♣ …
  /** @type {number[]} */
  const queue = [];
  for (let rank = 13; rank >= 1; rank -= 1)
    for (let suit = 0; suit < 4; suit += 1) queue.push(suit * 13 + rank - 1);
  const started = performance.now();
  let anchor = first ? { x: first.left, y: first.top } : null;
  let lastLaunch = -Infinity;
  let frame = 0;
  let done = false;

  const stop = () => {
    if (done) return;
    done = true;
    cancelAnimationFrame(frame);
    canvas.remove();
    window.removeEventListener("pointerdown", stop, true);
    window.removeEventListener("keydown", stop, true);
  };
  window.addEventListener("pointerdown", stop, true);
  window.addEventListener("keydown", stop, true);
  if (!ctx) {
    stop();
    return stop;
  }
  ctx.scale(ratio, ratio);

  /** @param {Flying} item */
  const draw = (item) => {
    const red = Math.floor(item.card / 13) === 1 || Math.floor(item.card / 13) === 2;
    ctx.fillStyle = "#fffdf7";
    ctx.strokeStyle = "#333";
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.roundRect(item.x, item.y, width, height, 5);
    ctx.fill();
    ctx.stroke();
    ctx.fillStyle = red ? "#c8102e" : "#111";
    ctx.font = `bold ${Math.round(width * 0.26)}px system-ui, "DejaVu Sans", sans-serif`;
    ctx.textBaseline = "top";
    const label = `${RANK_TEXT[(item.card % 13) + 1]}${SUIT_SYMBOLS[Math.floor(item.card / 13)]}`;
    ctx.fillText(label, item.x + width * 0.08, item.y + height * 0.06);
    ctx.font = `${Math.round(width * 0.5)}px system-ui, "DejaVu Sans", sans-serif`;
    ctx.textAlign = "center";
    ctx.fillText(SUIT_SYMBOLS[Math.floor(item.card / 13)], item.x + width / 2, item.y + height * 0.4);
    ctx.textAlign = "start";
  };

  /**
   * Where the foundations are now; when the board moved since the last frame, the
   * trails drawn so far and the cards in the air move with it.
   */
  const follow = () => {
    const places = foundations();
    const at = places[0];
    if (at && anchor && (at.left !== anchor.x || at.top !== anchor.y)) {
      const dx = at.left - anchor.x;
      const dy = at.top - anchor.y;
      ctx.save();
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.globalCompositeOperation = "copy";
      ctx.drawImage(canvas, dx * ratio, dy * ratio);
      ctx.restore();
      for (const item of flying) {
        item.x += dx;
        item.y += dy;
      }
    }
    if (at) anchor = { x: at.left, y: at.top };
    return places;
  };

  /** @param {number} now */
  const step = (now) => {
    if (done) return;
    const places = follow();
    if (queue.length && now - lastLaunch >= LAUNCH_MS) {
      const card = /** @type {number} */ (queue.shift());
      const from = places[Math.floor(card / 13)];
      const speed = 2 + Math.random() * 5;
      flying.push({
        card,
        x: from?.left ?? 0,
        y: from?.top ?? 0,
        vx: Math.random() < 0.5 ? -speed : speed,
        vy: -Math.random() * 9,
      });
      lastLaunch = now;
    }
    const floor = window.innerHeight - height;
    for (const item of flying) {
      item.vy += GRAVITY;
      item.x += item.vx;
      item.y += item.vy;
      if (item.y > floor) {
        item.y = floor;
        item.vy = -item.vy * BOUNCE;
      }
      draw(item); // never cleared: each card leaves its trail
    }
    for (let k = flying.length - 1; k >= 0; k -= 1) {
      const item = flying[k];
      if (item.x + width < 0 || item.x > window.innerWidth) flying.splice(k, 1);
    }
    if ((!queue.length && !flying.length) || now - started > MAX_MS) stop();
    else frame = requestAnimationFrame(step);
  };
  frame = requestAnimationFrame(step);
  return stop;
}
