--[[
  Rewrite a queue's owner marker only while it still holds exactly what this run wrote: the one
  step behind every change of a claim after its first SET NX. Renewing an unconfirmed claim
  (ARGV[3] > 0 keeps it expiring), turning it into an owned one once the queue was found empty
  (ARGV[3] = 0 drops the expiry), and the heartbeat of a run that owns the queue (ARGV[4] > 0) are
  all this script. A marker that expired, or that someone removed or replaced, is left as it is:
  the claim is no longer this run's, and nothing is written.

  Input:
    KEYS[1] owner      the queue's owner marker
    KEYS[2] heartbeat  the queue's heartbeat (written only when ARGV[4] > 0)

    ARGV[1] the marker's value as this run last wrote it
    ARGV[2] the value to write in its place (may be the same)
    ARGV[3] the marker's expiry in ms; 0 for none
    ARGV[4] the heartbeat's expiry in ms; 0 to leave the heartbeat alone
    ARGV[5] the heartbeat's value (the run id)

  Output:
    1 when the marker held ARGV[1] and was rewritten; 0 when it held anything else (nothing written)
]]
local rcall = redis.call

if rcall('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local markerTtl = tonumber(ARGV[3])
if markerTtl > 0 then
  rcall('SET', KEYS[1], ARGV[2], 'PX', markerTtl)
else
  rcall('SET', KEYS[1], ARGV[2])
end
local heartbeatTtl = tonumber(ARGV[4])
if heartbeatTtl > 0 then rcall('SET', KEYS[2], ARGV[5], 'PX', heartbeatTtl) end
return 1
