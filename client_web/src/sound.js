// @ts-check
/**
 * Optional sounds (off by default; the Settings dialog turns them on): short tones made
 * with WebAudio when they play, so the client ships no sound files. The audio context
 * starts on first use, which is always right after the player's own input.
 */

/** @typedef {"move" | "draw" | "refused" | "win"} SoundName */

/** Notes per sound: [frequency (Hz), start (s), length (s), oscillator type]. */
/** @type {Record<SoundName, [number, number, number, OscillatorType][]>} */
const NOTES = {
  move: [[520, 0, 0.06, "triangle"]],
  draw: [[330, 0, 0.05, "triangle"]],
  refused: [[180, 0, 0.12, "square"]],
  win: [
    [523, 0, 0.14, "triangle"],
    [659, 0.12, 0.14, "triangle"],
    [784, 0.24, 0.14, "triangle"],
    [1047, 0.36, 0.32, "triangle"],
  ],
};

/** @type {AudioContext | null} */
let context = null;

/**
 * Play a sound now; does nothing where the browser has no WebAudio.
 * @param {SoundName} name
 */
export function playSound(name) {
  const Context = window.AudioContext;
  if (!Context) return;
  context ??= new Context();
  const ctx = context;
  if (ctx.state === "suspended") ctx.resume().catch(() => {});
  const now = ctx.currentTime;
  for (const [frequency, start, length, type] of NOTES[name]) {
    const oscillator = ctx.createOscillator();
    const gain = ctx.createGain();
    oscillator.type = type;
    oscillator.frequency.value = frequency;
    gain.gain.setValueAtTime(0.0001, now + start);
    gain.gain.exponentialRampToValueAtTime(0.18, now + start + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, now + start + length);
    oscillator.connect(gain).connect(ctx.destination);
    oscillator.start(now + start);
    oscillator.stop(now + start + length + 0.02);
  }
}
