#!lua name=__LIBRARY__
--[[
  The atomic sweep as a Redis Function library, loaded once with FUNCTION LOAD and called with
  FCALL. Its body is sweep-stalled.lua itself, put in place of the body marker below when the
  library is loaded, so the function and the script cannot drift apart: the function's parameters
  are named KEYS and ARGV, which is all the script needs to run as a function's body. Function
  names are global to the server, so the tool fills in the library and function names with ones
  that carry the run's id before loading, and deletes the library when the run ends.

  Input (FCALL <function> 3 active pending dead now batch maxStalled prefix [pendingType]):
    KEYS and ARGV exactly as in sweep-stalled.lua's header.

  Output:
    a flat array of the ids this call moved
]]
local function sweep(KEYS, ARGV)
__SWEEP_STALLED__
end

redis.register_function('__FUNCTION__', sweep)
