--[[
  Read the stall counter and state of jobs first..last for the audit, one number per job, so the
  client gets an integer per job instead of two strings per job.

  Input:
    KEYS[1] the queue's active set: declared only so the call is routed to the queue's slot
    ARGV[1] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id
    ARGV[2] first job id
    ARGV[3] last job id (the caller keeps a call to a few thousand ids)

  Output:
    one element per job, in id order. Usually an integer: stalled * 8 + state code, where the
    state code is 0 missing, 1 active, 2 pending, 3 dead, 5 done, 4 anything else (STATE_CODES in
    src/audit.ts). Where the `stalled` field is missing or not written as a plain integer, a string
    instead: the state code digit followed by the field's text (nothing when missing), for the
    client to parse exactly as it would parse the field itself.
]]
local rcall = redis.call
local codes = { active = 1, pending = 2, dead = 3, done = 5 }
-- Integers the reply carries exactly: stalled * 8 must stay within 2^53.
local LIMIT = 2 ^ 49

local jobPrefix = ARGV[1] .. 'job:'
local out, n = {}, 0
for id = tonumber(ARGV[2]), tonumber(ARGV[3]) do
  local fields = rcall('HMGET', jobPrefix .. id, 'stalled', 'state')
  local raw, state = fields[1], fields[2]
  local code = 0
  if state then code = codes[state] or 4 end
  local stalled = raw and tonumber(raw)
  n = n + 1
  if stalled and stalled % 1 == 0 and math.abs(stalled) < LIMIT and string.format('%d', stalled) == raw then
    out[n] = stalled * 8 + code
  else
    out[n] = code .. (raw or '')
  end
end
return out
