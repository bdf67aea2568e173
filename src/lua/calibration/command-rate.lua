--[[
  Calibration only: the server's own command rate inside a script, the ceiling every script-side
  figure is measured against. Runs `count` HINCRBYs on one scratch hash; the caller times the call
  and subtracts an empty call's round trip (a script cannot time itself: on some servers TIME is
  frozen for the whole call).

  Input:
    KEYS[1] a scratch hash of the benchmark's own queue (deleted by the caller)
    ARGV[1] count: how many commands to run (the caller keeps it to a few hundred thousand)

  Output:
    the number of commands run
]]
local rcall = redis.call
local count = tonumber(ARGV[1])
for _ = 1, count do
  rcall('HINCRBY', KEYS[1], 'n', 1)
end
return count
