--[[
  Read the stall counter and state of jobs first..last for the audit, packed into one binary
  string so the client gets a few bytes per job instead of two strings per job.

  Input:
    KEYS[1] the queue's active set: declared only so the call is routed to the queue's slot
    ARGV[1] the queue's key prefix `emq:{Q}:`; job hashes are prefix .. 'job:' .. id
    ARGV[2] first job id
    ARGV[3] last job id (the caller keeps a call to a few thousand ids)

  Output:
    a binary string, 9 bytes per job in id order: the `stalled` field as a little-endian double
    (NaN where the field is missing or not a number), then the `state` field as one byte:
    0 missing, 1 active, 2 pending, 3 dead, 4 anything else (STATE_CODES in src/audit.ts)
]]
local rcall = redis.call
local pack = struct.pack
local codes = { active = 1, pending = 2, dead = 3 }
local nan = 0 / 0

local prefix = ARGV[1]
local out = {}
for id = tonumber(ARGV[2]), tonumber(ARGV[3]) do
  local fields = rcall('HMGET', prefix .. 'job:' .. id, 'stalled', 'state')
  local stalled = fields[1] and tonumber(fields[1]) or nan
  local state = fields[2]
  local code = 0
  if state then code = codes[state] or 4 end
  out[#out + 1] = pack('<dB', stalled, code)
end
return table.concat(out)
