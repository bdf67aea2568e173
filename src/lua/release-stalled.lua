--[[
  Lease one recovered job again, already expired, as if a worker had taken it from pending and
  died with it: the job that keeps crashing its workers. In one script, so the job moves from
  pending to active in a single step and no observer or sweep ever sees it half-moved.

  The job at the head of pending is taken, with every entry it has in pending (a job pushed twice
  is still one job), unless it has been leased again `maxReleases` times already: such a job has
  used up its cycles and is moved to the tail instead, where it stays in pending.

  Input:
    KEYS[1] active   sorted set: member = job id, score = lease deadline (ms since the epoch)
    KEYS[2] pending  list of recovered jobs

    ARGV[1] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id
    ARGV[2] maxReleases: how many times one job may be leased again (cycles - 1)
    ARGV[3] how many head entries to look at before giving up (a bound on one call's cost)
    ARGV[4] how far in the server's past the new lease expired, in ms

  Output:
    {id, entries}: the job leased again and how many pending entries it had; or an empty array
    when none of the entries looked at may be leased again.
]]
local rcall = redis.call
local prefix = ARGV[1]
local maxReleases = tonumber(ARGV[2])
local bound = tonumber(ARGV[3])
local expiredBy = tonumber(ARGV[4])

for _ = 1, bound do
  local id = rcall('LINDEX', KEYS[2], 0)
  if not id then return {} end
  local jobKey = prefix .. 'job:' .. id
  local releases = tonumber(rcall('HGET', jobKey, 'releases') or '0')
  if releases < maxReleases then
    local entries = rcall('LREM', KEYS[2], 0, id)
    local t = rcall('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    rcall('ZADD', KEYS[1], now - expiredBy - (tonumber(id) % 1000), id)
    rcall('HSET', jobKey, 'state', 'active', 'releases', releases + 1)
    return {id, entries}
  end
  rcall('LMOVE', KEYS[2], KEYS[2], 'LEFT', 'RIGHT')
end
return {}
