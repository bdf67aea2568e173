--[[
  A worker takes the next job from a sorted-set pending (EchoMQ's own keyspace): ZPOPMIN and the
  push into the run's running list in one script, so a job is never in neither place, just as
  LMOVE guarantees for a list pending.

  Input:
    KEYS[1] pending  sorted set of recovered jobs (member = job id)
    KEYS[2] running  list of jobs a worker has taken

  Output:
    the job id taken, or nil when pending is empty.
]]
local popped = redis.call('ZPOPMIN', KEYS[1])
if #popped == 0 then return nil end
local id = popped[1]
redis.call('RPUSH', KEYS[2], id)
return id
