#!lua name=__LIBRARY__
--[[
  The atomic sweep as a Redis Function library: the same logic as sweep-stalled.lua, loaded once
  with FUNCTION LOAD and called with FCALL. Function names are global to the server, so the tool
  replaces __LIBRARY__ and __FUNCTION__ with names that carry the run's id before loading, and
  deletes the library when the run ends.

  Input (FCALL __FUNCTION__ 3 active pending dead now batch maxStalled prefix [pendingType]):
    KEYS[1] active   sorted set: member = job id, score = lease deadline (ms since the epoch)
    KEYS[2] pending  a list (RPUSH) or, when ARGV[5] is 'zset', a sorted set (ZADD 0)
    KEYS[3] dead     sorted set: dead-lettered jobs (score 0)

    ARGV[1] now in ms, from the server's clock (this function reads TIME itself and ignores it)
    ARGV[2] batch: at most this many jobs per call (at most 3,000: unpack() limit, as in sweep-stalled.lua)
    ARGV[3] maxStalled: a job whose counter reaches it goes to dead
    ARGV[4] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id
    ARGV[5] optional: 'zset' to push with ZADD pending 0 id; anything else (or nothing) RPUSHes

  Output:
    a flat array of the ids this call moved
]]
local function sweep(keys, args)
  local rcall = redis.call
  local t = rcall('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local batch = tonumber(args[2])
  local maxStalled = tonumber(args[3])
  local prefix = args[4]
  local pendingIsSet = args[5] == 'zset'

  local expired = rcall('ZRANGEBYSCORE', keys[1], '-inf', now, 'LIMIT', 0, batch)
  local n = #expired
  if n == 0 then return expired end

  -- As in sweep-stalled.lua: one ZREM, one push and one ZADD to dead per batch, through unpack().
  rcall('ZREM', keys[1], unpack(expired))
  local jobPrefix = prefix .. 'job:'
  local toPending, pendingCount = {}, 0
  local toDead, deadCount = {}, 0
  for i = 1, n do
    local id = expired[i]
    local jobKey = jobPrefix .. id
    if rcall('HINCRBY', jobKey, 'stalled', 1) >= maxStalled then
      rcall('HSET', jobKey, 'state', 'dead')
      toDead[deadCount + 1] = 0
      toDead[deadCount + 2] = id
      deadCount = deadCount + 2
    else
      rcall('HSET', jobKey, 'state', 'pending')
      if pendingIsSet then
        toPending[pendingCount + 1] = 0
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
      rcall('ZADD', keys[2], unpack(toPending))
    else
      rcall('RPUSH', keys[2], unpack(toPending))
    end
  end
  if deadCount > 0 then rcall('ZADD', keys[3], unpack(toDead)) end
  return expired
end

redis.register_function('__FUNCTION__', sweep)
