--[[
  A claimed job starts in one round trip: -1 when the task's cancel mark (KEYS[1], member ARGV[1]) is there, else
  its `started` message (ARGV[3]) goes out on the store's channel (ARGV[2]) and the reply is how many jobs are left
  to claim (BullMQ's wait list KEYS[2] and prioritized set KEYS[3]).
]]
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return -1 end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return redis.call('LLEN', KEYS[2]) + redis.call('ZCARD', KEYS[3])
