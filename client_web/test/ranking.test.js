// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { leaderSeat, liveRanking, ReachedTimes } from "../src/ranking.js";

/** @import { LiveRacer } from "../src/ranking.js" */

/**
 * @param {number} seat
 * @param {Partial<LiveRacer>} rest
 * @returns {LiveRacer}
 */
const racer = (seat, rest) => ({ seat, name: `R${seat}`, found: 0, moves: 0, status: "playing", ...rest });

/** @param {LiveRacer[]} racers */
const ranks = (racers) => liveRanking(racers).map((r) => [r.seat, r.rank]);

test("ranking: winners by finish time, then cards home, then the earlier to reach that count", () => {
  assert.deepEqual(
    ranks([
      racer(0, { found: 10, foundAt: 9000 }),
      racer(1, { found: 52, status: "won", doneAt: 2000 }),
      racer(2, { found: 10, foundAt: 7000 }),
      racer(3, { found: 30, status: "resigned", foundAt: 8000 }),
      racer(4, { found: 52, status: "won", doneAt: 1000 }),
      racer(5, { found: 12, foundAt: 9500 }),
    ]),
    [
      [4, 1],
      [1, 2],
      [3, 3],
      [5, 4],
      [2, 5],
      [0, 6],
    ],
  );
});

test("two winners: the earlier finisher leads, whatever the seats and the order given", () => {
  const first = racer(3, { found: 52, status: "won", doneAt: 1000 });
  const second = racer(0, { found: 52, status: "won", doneAt: 2000 });
  for (const racers of [
    [first, second],
    [second, first],
  ]) {
    assert.equal(leaderSeat(racers), 3);
    assert.deepEqual(ranks(racers), [
      [3, 1],
      [0, 2],
    ]);
  }
  // A finish this page did not see came before it was watching: before any it saw.
  const unseen = racer(2, { found: 52, status: "won" });
  assert.equal(leaderSeat([first, unseen]), 2);
  assert.equal(leaderSeat([racer(1, { found: 52 }), first]), 3, "a winner leads any count");
});

test("ties are ties: equal keys share a rank, and no one leads a tie for first", () => {
  const tied = [
    racer(2, { found: 4, foundAt: 500 }),
    racer(3, { found: 4, foundAt: 500 }),
    racer(4, { found: 1 }),
  ];
  assert.deepEqual(ranks(tied), [
    [2, 1],
    [3, 1],
    [4, 3],
  ]);
  assert.equal(leaderSeat(tied), null);
  const winners = [
    racer(0, { status: "won", found: 52, doneAt: 10 }),
    racer(1, { status: "won", found: 52, doneAt: 10 }),
  ];
  assert.deepEqual(ranks(winners), [
    [0, 1],
    [1, 1],
  ]);
  assert.equal(leaderSeat(winners), null);
  // The earlier to reach the count breaks what would be a tie.
  assert.equal(leaderSeat([racer(2, { found: 4, foundAt: 700 }), racer(3, { found: 4, foundAt: 500 })]), 3);
});

test("no leader before anyone scores or on a one-player board; the input is kept", () => {
  assert.equal(leaderSeat([racer(0, {}), racer(1, {})]), null);
  assert.equal(leaderSeat([racer(0, { found: 5 })]), null);
  assert.equal(leaderSeat([racer(0, { found: 3 }), racer(1, { found: 5 })]), 1);
  const racers = [racer(0, { found: 1 }), racer(1, { found: 5 })];
  liveRanking(racers);
  assert.deepEqual(
    racers.map((r) => r.seat),
    [0, 1],
  );
});

test("reached times: a count first seen has no time, a new count the time it was seen", () => {
  const times = new ReachedTimes();
  times.note(0, 3, 100);
  assert.equal(times.at(0, 3), null, "reached before the page saw the board");
  times.note(0, 3, 200);
  assert.equal(times.at(0, 3), null);
  times.note(0, 4, 300);
  times.note(0, 4, 400);
  assert.equal(times.at(0, 4), 300);
  assert.equal(times.at(0, 3), null);
  assert.equal(times.at(1, 0), null);
  times.clear();
  times.note(0, 4, 500);
  assert.equal(times.at(0, 4), null);
});
