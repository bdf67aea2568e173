--[[
  Seed jobs first..last as leased (already expired, unless ARGV[5] is negative), on the server: each job's hash gets
  state=active and its starting stall count, and its id goes into `active` scored by a lease
  deadline in the server's past. One call seeds thousands of jobs with no round trip per job; the
  caller bounds the range, so one call holds the server for milliseconds.

  The deadline rule matches expiredDeadline() in src/seed.ts: now - expiredBy - (id % 1000).

  Input:
    KEYS[1] active   sorted set the ids are added to

    ARGV[1] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id
    ARGV[2] first job id
    ARGV[3] last job id (at most 10,000 ids per call)
    ARGV[4] the server's time in ms when seeding started
    ARGV[5] how many ms before that time the leases expired (negative: leases still valid that long)
    ARGV[6] the stall count every job starts with

  Output:
    the number of jobs seeded
]]
local rcall = redis.call

local prefix = ARGV[1]
local first = tonumber(ARGV[2])
local last = tonumber(ARGV[3])
local base = tonumber(ARGV[4]) - tonumber(ARGV[5])
local stalledBefore = ARGV[6]

-- ZADD takes two values per job and unpack() refuses more than about 8,000: flush every 3,000.
local PAIRS = 3000
local jobPrefix = prefix .. 'job:'
local scored, count = {}, 0
for id = first, last do
  rcall('HSET', jobPrefix .. id, 'state', 'active', 'stalled', stalledBefore)
  scored[count + 1] = base - (id % 1000)
  scored[count + 2] = id
  count = count + 2
  if count == 2 * PAIRS then
    rcall('ZADD', KEYS[1], unpack(scored, 1, count))
    count = 0
  end
end
if count > 0 then rcall('ZADD', KEYS[1], unpack(scored, 1, count)) end
return last - first + 1
