--[[
  Delete the job hashes one run seeded, and no others: `emq-race clean` hands a chunk of job keys
  by name, and a hash goes only if its `run` field holds that run's id (seed-jobs.lua writes it
  into every job). A hash without the field, with another run's id, or a key that is not a hash
  at all is left in place; the caller finds and reports what is left.

  Input:
    KEYS[1..n] job hashes  emq:{Q}:job:<id>, all of one queue

    ARGV[1] the run id from the queue's owner marker

  Output:
    the number of hashes deleted
]]
local rcall = redis.call

local runId = ARGV[1]
local deleted = 0
for _, key in ipairs(KEYS) do
  local run = redis.pcall('HGET', key, 'run')
  if type(run) == 'table' then
    -- A key of another type answers WRONGTYPE: not a job this run seeded. Any other refusal
    -- (an ACL without HGET) is raised again by the plain call, which names its line.
    if not string.find(tostring(run.err), 'WRONGTYPE', 1, true) then rcall('HGET', key, 'run') end
  elseif run == runId then
    deleted = deleted + rcall('UNLINK', key)
  end
end
return deleted
