--[[
  Increment one field of a hash by one, inside a script: the counter half of the sweep script on
  its own, so two increments sent at the same moment can be watched landing one after the other.
  HINCRBY reads and writes the field in one step on the server; no client holds the old value.

  Input:
    KEYS[1] the hash (a job hash, emq:{Q}:job:<id>)
    ARGV[1] the field to increment (stalled)

  Output:
    the field's value after this call's increment
]]
return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
