--[[
  Sweep stalled jobs: move every job whose lease expired out of `active`, back to `pending`,
  or to `dead` once its stall counter reaches maxStalled. The whole sweep is one script, so the
  server runs it on its single command thread and no other command (no other sweep) runs between
  detect, move and count.

  Same effect as calibration/sweep-stalled-per-command.lua (one command per job and step), with
  fewer calls inside the script: one removal from active, one push (RPUSH, or ZADD for a
  sorted-set pending) and one ZADD to dead per batch, the pushes with every id of the batch as
  arguments through unpack(). HINCRBY and HSET stay per job (each touches its own hash). Lua's
  unpack() refuses more than about 8,000 values, and the ZADD takes two per job, so a batch must
  stay below 4,000 jobs: the tool caps --batch at 3,000.

  The removal is ZREMRANGEBYRANK rather than ZREM of every id: ZRANGEBYSCORE from -inf with
  LIMIT 0 returns the lowest-ranked members in rank order, so the n ids it returned are exactly
  ranks 0..n-1, and nothing runs in between. Removing by rank skips handing n ids back to the
  server and searching the sorted set for each (5-8% of the sweep's server time at 100,000 jobs).

  The increment and the scores are the strings '1' and '0': a Lua number handed to redis.call is
  formatted as a float on every call (Redis 7.0 uses printf "%.17g"), a cost paid per job for
  nothing.

  Input:
    KEYS[1] active   sorted set: member = job id, score = lease deadline (ms since the epoch)
    KEYS[2] pending  list: recovered jobs are RPUSHed here (a sorted set when ARGV[5] is 'zset')
    KEYS[3] dead     sorted set: dead-lettered jobs (score 0)

    ARGV[1] now in ms, from the server's clock (this script reads TIME itself and ignores it)
    ARGV[2] batch: at most this many jobs per call (at most 3,000), so one call holds the server briefly
    ARGV[3] maxStalled: a job whose counter reaches it goes to dead
    ARGV[4] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id
    ARGV[5] optional, an extension of the contract: 'zset' when pending is a sorted set, to push
            with ZADD pending 0 id as EchoMQ does; absent or 'list' means RPUSH. Scripts written
            for the four-argument contract may ignore it and still run with --pending list.

  Output:
    a flat array of the ids this call moved (where each went is read from the server)
]]
local rcall = redis.call

local t = rcall('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local batch = tonumber(ARGV[2])
local maxStalled = tonumber(ARGV[3])
local prefix = ARGV[4]
local pendingIsSet = ARGV[5] == 'zset'

local expired = rcall('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, batch)
local n = #expired
if n == 0 then return expired end

rcall('ZREMRANGEBYRANK', KEYS[1], 0, n - 1)

local jobPrefix = prefix .. 'job:'
local toPending, pendingCount = {}, 0
local toDead, deadCount = {}, 0
for i = 1, n do
  local id = expired[i]
  local jobKey = jobPrefix .. id
  if rcall('HINCRBY', jobKey, 'stalled', '1') >= maxStalled then
    rcall('HSET', jobKey, 'state', 'dead')
    toDead[deadCount + 1] = '0'
    toDead[deadCount + 2] = id
    deadCount = deadCount + 2
  else
    rcall('HSET', jobKey, 'state', 'pending')
    if pendingIsSet then
      toPending[pendingCount + 1] = '0'
      toPending[pendingCount + 2] = id
      pendingCount = pendingCount + 2
    else
      pendingCount = pendingCount + 1
      toPending[pendingCount] = id
    end
  end
end

if pendingCount > 0 then
  if pendingIsSet then
    rcall('ZADD', KEYS[2], unpack(toPending))
  else
    rcall('RPUSH', KEYS[2], unpack(toPending))
  end
end
if deadCount > 0 then rcall('ZADD', KEYS[3], unpack(toDead)) end
return expired
