--[[
  Seed the jobs first..last whose residue (id % 1000) lies in high..low as leased (already
  expired, unless ARGV[5] is negative), on the server: each job's hash gets state=active, its
  starting stall count and the run's id, and its id goes into `active` scored by a lease
  deadline in the server's past. One call seeds thousands of jobs with no round trip per job;
  the caller bounds the jobs per call (seedSlices() in src/seed.ts), so one call holds the server
  for milliseconds.

  The deadline rule is now - expiredBy - (id % 1000); with expiredBy = EXPIRED_BY_MS it is
  expiredDeadline() in src/seed.ts.

  Input:
    KEYS[1] active   sorted set the ids are added to

    ARGV[1] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id
    ARGV[2] first job id
    ARGV[3] last job id
    ARGV[4] the server's time in ms when seeding started
    ARGV[5] how many ms before that time the leases expired (negative: leases still valid that long)
    ARGV[6] the stall count every job starts with
    ARGV[7] highest residue to seed (0-999; default 999)
    ARGV[8] lowest residue to seed (0-999; default 0)
    ARGV[9] the run's id, written to each hash as `run`: `emq-race clean` deletes a job hash only
            when it carries the id of the run whose owner marker it is cleaning

  Output:
    the number of jobs seeded
]]
local rcall = redis.call
local fmt = string.format

local prefix = ARGV[1]
local first = tonumber(ARGV[2])
local last = tonumber(ARGV[3])
local base = tonumber(ARGV[4]) - tonumber(ARGV[5])
local stalledBefore = ARGV[6]
local high = tonumber(ARGV[7] or 999)
local low = tonumber(ARGV[8] or 0)
local runId = ARGV[9]

-- ZADD takes two values per job and unpack() refuses more than about 8,000: flush every 3,000.
local PAIRS = 3000
local jobPrefix = prefix .. 'job:'
local scored, count, seeded = {}, 0, 0
-- Jobs go in by ascending deadline, residue from high down to low, not by id: each ZADD then
-- lands beside the one before, so the sorted set's search path stays in the CPU's cache, and its
-- nodes lie in memory in the order a sweep reads them. Ids and scores are formatted with %d once
-- each: a Lua number joined to a string, or handed to redis.call, goes through the much slower
-- floating-point formatting instead.
for residue = high, low, -1 do
  local id = first + (residue - first % 1000) % 1000
  -- A residue none of first..last has (any, when the call seeds fewer than 1,000 jobs) costs no
  -- formatting: a one-job queue, as explain and explore seed for every schedule, would otherwise
  -- format a thousand scores for one job.
  local score = id <= last and fmt('%d', base - residue)
  while id <= last do
    local member = fmt('%d', id)
    rcall('HSET', jobPrefix .. member, 'state', 'active', 'stalled', stalledBefore, 'run', runId)
    scored[count + 1] = score
    scored[count + 2] = member
    count = count + 2
    seeded = seeded + 1
    if count == 2 * PAIRS then
      rcall('ZADD', KEYS[1], unpack(scored, 1, count))
      count = 0
    end
    id = id + 1000
  end
end
if count > 0 then rcall('ZADD', KEYS[1], unpack(scored, 1, count)) end
return seeded
