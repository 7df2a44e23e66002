--[[
  A claimed job starts in one round trip: its request's body (KEYS[4], nil when none is kept apart) read and,
  unless the task's cancel mark (KEYS[1], member ARGV[1]) is there, its `started` message (ARGV[3]) sent on the
  store's channel (ARGV[2]); replies {left, body}: left is -1 when the mark is there, else how many jobs are left
  to claim (BullMQ's wait list KEYS[2] and prioritized set KEYS[3]).
]]
local body = redis.call('GET', KEYS[4])
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return {-1, body} end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return {redis.call('LLEN', KEYS[2]) + redis.call('ZCARD', KEYS[3]), body}
