--[[
  Sweep stalled jobs, one command per job and step: move every job whose lease expired out of
  `active`, back to `pending`, or to `dead` once its stall counter reaches maxStalled. The whole
  sweep is one script, so the server runs it on its single command thread and no other command (no
  other sweep) runs between detect, move and count.

  This is the plain shape docs/strategies.md shows. The shipped sweep-stalled.lua has the same
  effect with fewer calls per batch; this one stays as the benchmark's calibration, not used by any
  mode.

  Input:
    KEYS[1] active   sorted set: member = job id, score = lease deadline (ms since the epoch)
    KEYS[2] pending  list: recovered jobs are RPUSHed here
    KEYS[3] dead     sorted set: dead-lettered jobs (score 0)

    ARGV[1] now in ms, from the server's clock (this script reads TIME itself and ignores it)
    ARGV[2] batch: at most this many jobs per call, so one call holds the server briefly
    ARGV[3] maxStalled: a job whose counter reaches it goes to dead
    ARGV[4] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id

  Output:
    a flat array of the ids this call moved (where each went is read from the server)
]]
local rcall = redis.call

local t = rcall('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local batch = tonumber(ARGV[2])
local maxStalled = tonumber(ARGV[3])
local prefix = ARGV[4]

local expired = rcall('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, batch)
for _, id in ipairs(expired) do
  rcall('ZREM', KEYS[1], id)
  local jobKey = prefix .. 'job:' .. id
  -- The increment and the score go as strings, as the shipped script sends them: a Lua number
  -- handed to redis.call is formatted as a float on every call, a cost that has nothing to do with
  -- one call per command, and that would flatter the shipped script's ratio against this one.
  local stalled = rcall('HINCRBY', jobKey, 'stalled', '1')
  if stalled >= maxStalled then
    rcall('HSET', jobKey, 'state', 'dead')
    rcall('ZADD', KEYS[3], '0', id)
  else
    rcall('RPUSH', KEYS[2], id)
    rcall('HSET', jobKey, 'state', 'pending')
  end
end
return expired
