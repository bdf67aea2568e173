--[[
  Lease one recovered job again, already expired, as if a worker had taken it from pending and
  died with it: the job that keeps crashing its workers. In one script, so the job moves from
  pending to active in a single step and no observer or sweep ever sees it half-moved.

  The first job in pending is taken, with every entry it has there (a job pushed twice onto a list
  is still one job), unless it has been leased again `maxReleases` times already: such a job has
  used up its cycles and stays in pending, put behind the jobs still to be looked at. In a list
  that is the tail. In a sorted set, where sweeps add members with score 0, it is score 1; a later
  ZADD pending 0 by a sweep brings it back to 0, and it is simply put back again.

  Input:
    KEYS[1] active   sorted set: member = job id, score = lease deadline (ms since the epoch)
    KEYS[2] pending  list of recovered jobs, or a sorted set (score 0) when ARGV[5] is 'zset'

    ARGV[1] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id
    ARGV[2] maxReleases: how many times one job may be leased again (cycles - 1)
    ARGV[3] how many jobs to look at before giving up (a bound on one call's cost)
    ARGV[4] how far in the server's past the new lease expired, in ms
    ARGV[5] 'zset' for a sorted-set pending; anything else means a list

  Output:
    {id, entries}: the job leased again and how many pending entries it had; or an empty array
    when none of the jobs looked at may be leased again.
]]
local rcall = redis.call
local prefix = ARGV[1]
local maxReleases = tonumber(ARGV[2])
local bound = tonumber(ARGV[3])
local expiredBy = tonumber(ARGV[4])
local pendingIsSet = ARGV[5] == 'zset'

-- Every entry of the job in pending: how many there were.
local function takeFromPending(id)
  if pendingIsSet then return rcall('ZREM', KEYS[2], id) end
  return rcall('LREM', KEYS[2], 0, id)
end

-- Leases job `id` again unless it used up its re-leases; returns the reply, or nil to look on.
local function lease(id)
  local jobKey = prefix .. 'job:' .. id
  local releases = tonumber(rcall('HGET', jobKey, 'releases') or '0')
  if releases >= maxReleases then return nil end
  local entries = takeFromPending(id)
  local t = rcall('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  rcall('ZADD', KEYS[1], now - expiredBy - (tonumber(id) % 1000), id)
  rcall('HSET', jobKey, 'state', 'active', 'releases', releases + 1)
  return {id, entries}
end

if pendingIsSet then
  local ids = rcall('ZRANGEBYSCORE', KEYS[2], 0, 0, 'LIMIT', 0, bound)
  for _, id in ipairs(ids) do
    local leased = lease(id)
    if leased then return leased end
    rcall('ZADD', KEYS[2], 'XX', 1, id)
  end
  return {}
end

for _ = 1, bound do
  local id = rcall('LINDEX', KEYS[2], 0)
  if not id then return {} end
  local leased = lease(id)
  if leased then return leased end
  rcall('LMOVE', KEYS[2], KEYS[2], 'LEFT', 'RIGHT')
end
return {}
