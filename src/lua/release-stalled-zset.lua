--[[
  src/lua/release-stalled.lua for a sorted-set pending (`--pending zset`): lease one recovered job
  again, already expired, as if a worker had taken it from pending and died with it. In one script,
  so the job moves from pending to active in a single step and no observer or sweep ever sees it
  half-moved.

  A set holds each id once, so a job has one entry at most. Sweeps add members with score 0; a job
  that has used up its re-leases is given score 1 instead, which puts it behind every job still to
  be looked at (the list form moves it to the tail). It stays in pending, as in the list form; a
  later ZADD pending 0 by a sweep brings it back to score 0, and it is simply put back again.

  Input:
    KEYS[1] active   sorted set: member = job id, score = lease deadline (ms since the epoch)
    KEYS[2] pending  sorted set of recovered jobs (member = job id, score 0)

    ARGV[1] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id
    ARGV[2] maxReleases: how many times one job may be leased again (cycles - 1)
    ARGV[3] how many score-0 members to look at before giving up (a bound on one call's cost)
    ARGV[4] how far in the server's past the new lease expired, in ms

  Output:
    {id, entries}: the job leased again and how many pending entries it had (1); or an empty array
    when none of the members looked at may be leased again.
]]
local rcall = redis.call
local prefix = ARGV[1]
local maxReleases = tonumber(ARGV[2])
local bound = tonumber(ARGV[3])
local expiredBy = tonumber(ARGV[4])

local ids = rcall('ZRANGEBYSCORE', KEYS[2], 0, 0, 'LIMIT', 0, bound)
for _, id in ipairs(ids) do
  local jobKey = prefix .. 'job:' .. id
  local releases = tonumber(rcall('HGET', jobKey, 'releases') or '0')
  if releases < maxReleases then
    local entries = rcall('ZREM', KEYS[2], id)
    local t = rcall('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    rcall('ZADD', KEYS[1], now - expiredBy - (tonumber(id) % 1000), id)
    rcall('HSET', jobKey, 'state', 'active', 'releases', releases + 1)
    return {id, entries}
  end
  rcall('ZADD', KEYS[2], 'XX', 1, id)
end
return {}
