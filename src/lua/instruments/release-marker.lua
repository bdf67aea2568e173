--[[
  Delete a queue's owner marker only if it still holds exactly the value given: a run releasing
  its own claim, or `emq-race clean` removing the marker it read, never a marker written since by
  someone else.

  Input:
    KEYS[1] owner  the queue's owner marker

    ARGV[1] the marker's value as the caller wrote or read it

  Output:
    1 when the marker was deleted; 0 when it held anything else, or was gone
]]
local rcall = redis.call

if rcall('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return rcall('DEL', KEYS[1])
