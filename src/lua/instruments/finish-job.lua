--[[
  A worker finishes a job it ran: the job's state set to done and its entry taken out of the run's
  running list, in one script. One call, so that it is all or nothing on whichever server runs it:
  a MULTI ... EXEC is several commands on the wire, and a connection carried to another server
  between them (--fault failover's switch) could deliver the EXEC without its MULTI.

  Input:
    KEYS[1] the job's hash (emq:{Q}:job:<id>)
    KEYS[2] running  list of jobs a worker has taken
    ARGV[1] the job's id

  Output:
    the entries of the id taken out of running (1; 0 if it was not there)
]]
redis.call('HSET', KEYS[1], 'state', 'done')
return redis.call('LREM', KEYS[2], 1, ARGV[1])
