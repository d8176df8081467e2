"""The Lua scripts that make each write one atomic step in Redis/Valkey.

Each script touches the keys of a single room (one hash tag, so one Cluster slot) and
does its checks, writes, stream appends and publishes together: a subscriber never sees
an event that is not stored, and a stored event is always published. Room channels are
sharded channels (SPUBLISH; Redis 7+ and Valkey): on a Cluster a message reaches only
the shard that owns the room's slot, and the script's keys and channels share that slot.
The room code scripts (`CODE_*`) each touch one code key, in a slot of its own.
"""

from __future__ import annotations

from typing import Final

ROOM_CAS: Final = """
-- KEYS[1] room hash, KEYS[2] channel, KEYS[3..] hashes to initialise, then keys to expire
-- ARGV[1] expected revision ('0' for a new room), ARGV[2] new state blob,
-- ARGV[3] number of frames to publish, then the frames,
-- then the number of hash groups and the groups: key index, field count, field, value, ...
-- then expiry groups to the end: milliseconds (0: PERSIST, the keys are kept), key
-- count, key indexes. Expiries come last, so they also cover the keys written here.
local rev = redis.call('HGET', KEYS[1], 'rev') or '0'
if rev ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'rev', tonumber(rev) + 1)
local nframes = tonumber(ARGV[3])
local i = 4
for _ = 1, nframes do
  redis.call('SPUBLISH', KEYS[2], ARGV[i])
  i = i + 1
end
local nhashes = tonumber(ARGV[i])
i = i + 1
for _ = 1, nhashes do
  local key = KEYS[tonumber(ARGV[i])]
  local nfields = tonumber(ARGV[i + 1])
  i = i + 2
  if nfields == 0 then
    redis.call('DEL', key)
  else
    local args = {}
    for j = 0, 2 * nfields - 1 do args[#args + 1] = ARGV[i + j] end
    redis.call('HSET', key, unpack(args))
    i = i + 2 * nfields
  end
end
while i <= #ARGV do
  local ms = tonumber(ARGV[i])
  local nkeys = tonumber(ARGV[i + 1])
  for j = i + 2, i + 1 + nkeys do
    local key = KEYS[tonumber(ARGV[j])]
    if ms > 0 then redis.call('PEXPIRE', key, ms) else redis.call('PERSIST', key) end
  end
  i = i + 2 + nkeys
end
return tonumber(rev) + 1
"""

BOARD_EVENT: Final = """
-- KEYS: 1 board hash, 2 moves list, 3 own stream, 4 spectator stream, 5 room channel,
--       6 times list (parallel to the moves list: ms since the start per move),
--       7 connection key of the racer
-- ARGV: 1 expected seq, 2 connection id ('' for server-side ops), 3 op,
--       4 stream maxlen, 5 own offset ('' for none), 6 own routing header ('' when the
--       writer delivers the own frame itself), 7 own frame,
--       8 spectator offset, 9 spectator routing header (a progress note's when the
--       event changed the board's progress), 10 spectator frame, 11 token count,
--       tokens..., then one msgpack array of field/value pairs to set on the board hash
-- The board's fields this script reads, in one call.
local board = redis.call('HMGET', KEYS[1], 'seq', 'status', 'start_at', 'paused_at',
                         'deadline', 'found')
local seq = board[1]
if not seq then return {'missing'} end
if seq ~= ARGV[1] then return {'stale', seq} end
if ARGV[2] ~= '' and redis.call('GET', KEYS[7]) ~= ARGV[2] then return {'replaced'} end
local op = ARGV[3]
local status = board[2]
if op ~= 'refresh' and status ~= 'playing' then return {'done', status} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local start_at = tonumber(board[3])
-- A practice game's clock may stand still (`paused_at`, set with the room): a move
-- waits until the room runs it again; anything else is timed when it stopped.
local paused_at = tonumber(board[4] or '0')
if (op == 'move' or op == 'undo') then
  if paused_at > 0 then return {'paused'} end
  if now < start_at then return {'early', tostring(start_at - now)} end
  local deadline = tonumber(board[5] or '0')
  if deadline > 0 and now >= deadline then return {'late'} end
end
local old_found = board[6]
local elapsed = now - start_at
if paused_at > 0 then elapsed = math.max(0, paused_at - start_at) end
-- An undo takes back the last move and its time: both lists stay the board's moves.
if op == 'undo' then
  redis.call('RPOP', KEYS[2])
  redis.call('RPOP', KEYS[6])
end
local ntok = tonumber(ARGV[11])
if ntok > 0 then
  local tokens, times = {}, {}
  for i = 1, ntok do
    tokens[i] = ARGV[11 + i]
    times[i] = elapsed
  end
  redis.call('RPUSH', KEYS[2], unpack(tokens))
  redis.call('RPUSH', KEYS[6], unpack(times))
end
-- Only the fields that changed are sent (a board's `seen` and `spec_mask` often do not).
local fields = cmsgpack.unpack(ARGV[12 + ntok])
if #fields > 0 then redis.call('HSET', KEYS[1], unpack(fields)) end
local after = redis.call('HMGET', KEYS[1], 'found', 'status')
if after[1] ~= old_found then redis.call('HSET', KEYS[1], 'found_ms', elapsed) end
if after[2] ~= status then redis.call('HSET', KEYS[1], 'finish_ms', elapsed) end
if ARGV[5] ~= '' then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], ARGV[5] .. '-0', 'f', ARGV[7])
  if ARGV[6] ~= '' then redis.call('SPUBLISH', KEYS[5], ARGV[6] .. ARGV[7]) end
end
if ARGV[8] ~= '' then
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], ARGV[8] .. '-0', 'f', ARGV[10])
  redis.call('SPUBLISH', KEYS[5], ARGV[9] .. ARGV[10])
end
-- A board that already expires (its race finished) takes the keys written here along.
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  for _, key in ipairs({KEYS[2], KEYS[3], KEYS[4], KEYS[6]}) do
    redis.call('PEXPIRE', key, ttl)
  end
end
return {'ok', tostring(now)}
"""

UNLIST_IF: Final = """
-- KEYS[1] a sorted set index; ARGV[1] member, ARGV[2] the score it must still have
-- (an entry listed again since it was read, with a new score, stays)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
"""

CLAIM: Final = """
-- KEYS[1] connection key, KEYS[2] channel, KEYS[3] room hash;
-- ARGV[1] connection id, ARGV[2] takeover note.
-- A claim expires with its room (a finished room expires; one in play does not).
redis.call('SET', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[3])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
redis.call('SPUBLISH', KEYS[2], ARGV[2])
return 1
"""

SHOUT: Final = """
-- KEYS[1] a room's channel; ARGV[1] a bus message: published on the shard that owns
-- the channel (a script routes by its key, so a Cluster needs nothing more)
return redis.call('SPUBLISH', KEYS[1], ARGV[1])
"""

RELEASE: Final = """
-- KEYS[1] connection key; ARGV[1] connection id: release only if still ours
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""

TAKE_DUE: Final = """
-- KEYS[1] a timer bucket; ARGV[1] now (ms), ARGV[2] at most this many: remove and return
-- the due members, so that exactly one caller runs each
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end
return due
"""

ANALYSIS_CLAIM: Final = """
-- KEYS[1] a game's results hash; ARGV[1] now (ms), ARGV[2] a claim older than this (ms)
-- is stale. Claim the game's analysis for this caller: only for stored results (a
-- missing hash is never created, so nothing outlives the results' expiry), only when no
-- analysis is stored and no fresh claim holds it. 1 claimed, 0 not.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HEXISTS', KEYS[1], 'analysis') == 1 then return 0 end
local claimed = tonumber(redis.call('HGET', KEYS[1], 'analysis_claim') or '0')
if claimed > 0 and tonumber(ARGV[1]) - claimed < tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'analysis_claim', ARGV[1])
return 1
"""

ANALYSIS_SAVE: Final = """
-- KEYS[1] a game's results hash; ARGV[1] the analysis: stored beside the results (same
-- key, so the same expiry), the claim dropped; nothing when the results are gone.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'analysis', ARGV[1])
redis.call('HDEL', KEYS[1], 'analysis_claim')
return 1
"""

RESULTS_CACHE: Final = """
-- KEYS[1] a game's results hash; ARGV[1] its results, ARGV[2] milliseconds to keep them.
-- Only where there are none: results still on their way to the history database have
-- no expiry, and must not get one here.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

CODE_CLAIM: Final = """
-- KEYS[1] a room code's key. ARGV[1] room id, ARGV[2] ms to live.
-- Claims a free code for the room (its key must not exist): 1, or 0 when it is taken.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'room', ARGV[1], 'rev', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

CODE_KEEP: Final = """
-- KEYS[1] a room code's key. ARGV[1] room id, ARGV[2] room revision just written,
-- ARGV[3] ms to live (0: kept, like the room hash).
-- The code key copies the room hash's expiry as of that revision; a copy of an older
-- revision arriving late changes nothing. A key that expired meanwhile is claimed
-- again; one that another room holds is left alone: 0.
local room = redis.call('HGET', KEYS[1], 'room')
if room and room ~= ARGV[1] then return 0 end
if room and tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') > tonumber(ARGV[2]) then
  return 0
end
redis.call('HSET', KEYS[1], 'room', ARGV[1], 'rev', ARGV[2])
if tonumber(ARGV[3]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  redis.call('PERSIST', KEYS[1])
end
return 1
"""

CODE_DROP: Final = """
-- KEYS[1] a room code's key. ARGV[1] room id. Deletes the key if it names that room.
if redis.call('HGET', KEYS[1], 'room') == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
