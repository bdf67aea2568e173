--[[
  Observe one job: where it stands at this instant, read in one script so that no other command
  runs between the checks. Every check is bounded: O(log N) in the sorted sets (pending too, when
  it is one), and at most ARGV[3] entries from the tail of each list (a job a sweep just pushed
  sits near the tail).

  Input:
    KEYS[1] active   sorted set of leased jobs
    KEYS[2] pending  list of recovered jobs (RPUSHed, so the newest are at the tail), or a sorted set
    KEYS[3] dead     sorted set of dead-lettered jobs
    KEYS[4] running  list of jobs a worker has taken

    ARGV[1] the job id to check, or '' to check the job at the head of active (the next to expire)
    ARGV[2] the queue's key prefix `emq:{Q}:`; the job hash is prefix .. 'job:' .. id
    ARGV[3] how many entries from the tail of pending and running to look at
    ARGV[4] optional: `zset` when pending is a sorted set (looked up with ZSCORE), else a list

  Output:
    nil when ARGV[1] is '' and active is empty (nothing to observe); otherwise
    {id, inActive, inPending, inDead, inRunning, done, conclusive}, each flag 0 or 1. conclusive is
    0 when the job was not found in a list longer than the bound: it might stand further in.
]]
local rcall = redis.call
local id = ARGV[1]
local bound = tonumber(ARGV[3])

if id == '' then
  local head = rcall('ZRANGE', KEYS[1], 0, 0)
  if #head == 0 then return nil end
  id = head[1]
end

local function inList(key)
  if rcall('LPOS', key, id, 'RANK', -1, 'MAXLEN', bound) then return 1, 1 end
  if rcall('LLEN', key) > bound then return 0, 0 end
  return 0, 1
end

local inActive = rcall('ZSCORE', KEYS[1], id) and 1 or 0
local inDead = rcall('ZSCORE', KEYS[3], id) and 1 or 0
local inPending, pendingSure
if ARGV[4] == 'zset' then
  inPending, pendingSure = rcall('ZSCORE', KEYS[2], id) and 1 or 0, 1
else
  inPending, pendingSure = inList(KEYS[2])
end
local inRunning, runningSure = inList(KEYS[4])
local done = rcall('HGET', ARGV[2] .. 'job:' .. id, 'state') == 'done' and 1 or 0

local conclusive = 1
if inActive + inDead + inPending + inRunning + done == 0 and (pendingSure == 0 or runningSure == 0) then
  conclusive = 0
end
return {id, inActive, inPending, inDead, inRunning, done, conclusive}
