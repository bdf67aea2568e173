--[[
  Delete a queue's keys only while its owner marker still holds the value `emq-race clean` read
  when it listed the queue. Between that read and the deletion (a prompt answered, the queues
  before it cleaned) the run's marker may have gone, and the name been taken by another run or by
  another program: its lists and sets are then not the kept run's, and stay. The check and the
  deletion are one step, so nothing can come between them.

  Input:
    KEYS[1]       owner  the queue's owner marker
    KEYS[2..n]    the keys to delete, all of the same queue

    ARGV[1] the marker's value as clean read it

  Output:
    the number of keys deleted; -1 when the marker held anything else, or was gone (nothing deleted)
]]
local rcall = redis.call

if rcall('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if #KEYS < 2 then return 0 end
return rcall('UNLINK', unpack(KEYS, 2))
