--[[
  Read one slice of a queue's list or sorted set for the audit as job ids (integers), so the
  client never builds a string per member.

  Input:
    KEYS[1] the list (pending) or sorted set (active, dead) to read
    ARGV[1] 'list' or 'zset'
    ARGV[2] start index of the slice
    ARGV[3] stop index of the slice (inclusive; the caller keeps a slice to a few thousand members)
    ARGV[4] jobs: ids outside 1..jobs are not seeded jobs and are packed as 0, and so is any
            member not written as an id is (`0200`, `2.0`, ` 2`, `0x2` name no job hash)
    ARGV[5] zset only: the audit's "now" in ms; a member scored at or before it has an expired lease

  Output:
    one integer per member, in order: the job id (0 for a member that is not a seeded job), plus
    2^31 when it is a sorted-set member whose lease has expired
]]
local rcall = redis.call
local EXPIRED = 2147483648

local kind = ARGV[1]
local jobs = tonumber(ARGV[4])
-- Only the digits of an id as seeding wrote it: tonumber alone would read `0200` or `2e2` as 200.
local function jobId(member)
  if not string.find(member, '^[1-9]%d*$') then return 0 end
  local id = tonumber(member)
  if id <= jobs then return id end
  return 0
end

local out = {}
if kind == 'list' then
  local members = rcall('LRANGE', KEYS[1], ARGV[2], ARGV[3])
  for i = 1, #members do out[i] = jobId(members[i]) end
else
  local now = tonumber(ARGV[5])
  local flat = rcall('ZRANGE', KEYS[1], ARGV[2], ARGV[3], 'WITHSCORES')
  for i = 1, #flat, 2 do
    local id = jobId(flat[i])
    if id > 0 and tonumber(flat[i + 1]) <= now then id = id + EXPIRED end
    out[(i + 1) / 2] = id
  end
end
return out
