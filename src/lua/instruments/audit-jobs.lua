--[[
  Read the stall counter and state of one slice of jobs for the audit, one number per job, so the
  client gets an integer per job instead of two strings per job.

  Input:
    KEYS[1] the queue's active set: declared only so the call is routed to the queue's slot
    ARGV[1] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id
    ARGV[2] first job id
    ARGV[3] last job id
    ARGV[4] highest residue to read (0-999; default 999)
    ARGV[5] lowest residue to read (0-999; default 0): the call reads the ids first..last whose
            residue (id % 1000) lies in high..low, the same slices seeding used (seedSlices() in
            src/seed.ts; the caller keeps a call to a few thousand ids)
    ARGV[6] optional: the run's id. Given, a hash whose `run` field is not it (the hash deleted by
            another client, then re-created by a sweep's write) reads as missing (state code 0)

  Output:
    one element per job, in the order seeding created them: residue high down to low, ids rising
    within a residue (forEachSliceId() in src/seed.ts). That is the order the job hashes lie in
    the server's memory, so each read finds its hash near the last one instead of at a random
    place. Usually an integer: stalled * 8 + state code, where the state code is 0 missing,
    1 active, 2 pending, 3 dead, 5 done, 4 anything else (STATE_CODES in src/audit/job-state.ts). Where
    the `stalled` field is missing or not written as a plain integer, a string instead: the state
    code digit followed by the field's text (nothing when missing), for the client to parse
    exactly as it would parse the field itself.
]]
local rcall = redis.call
local fmt = string.format
local codes = { active = 1, pending = 2, dead = 3, done = 5 }
-- Integers the reply carries exactly: stalled * 8 must stay within 2^53.
local LIMIT = 2 ^ 49

-- A counter's text is read once per distinct text: a run writes a handful of values ('0', '1',
-- ...) that repeat for every job. The value if the text is a plain integer, else false.
local plain = {}
local function plainInteger(raw)
  local known = plain[raw]
  if known == nil then
    local value = tonumber(raw)
    known = value ~= nil and value % 1 == 0 and math.abs(value) < LIMIT and fmt('%d', value) == raw and value or false
    plain[raw] = known
  end
  return known
end

local jobPrefix = ARGV[1] .. 'job:'
local first = tonumber(ARGV[2])
local last = tonumber(ARGV[3])
local high = tonumber(ARGV[4] or 999)
local low = tonumber(ARGV[5] or 0)
local runId = ARGV[6]
local out, n = {}, 0
for residue = high, low, -1 do
  local id = first + (residue - first % 1000) % 1000
  while id <= last do
    -- The id as %d text: a Lua number joined to a string is formatted as a float ('%.14g'), many
    -- times slower.
    local fields = rcall('HMGET', jobPrefix .. fmt('%d', id), 'stalled', 'state', 'run')
    local raw, state = fields[1], fields[2]
    local code = 0
    if state and not (runId and fields[3] ~= runId) then code = codes[state] or 4 end
    local stalled = raw and plainInteger(raw)
    n = n + 1
    if stalled then
      out[n] = stalled * 8 + code
    else
      out[n] = code .. (raw or '')
    end
    id = id + 1000
  end
end
return out
