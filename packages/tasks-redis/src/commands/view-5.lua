--[[
  A task's state in one round trip, read at one instant: the fields of its job's hash (KEYS[1]) that a view needs
  (ARGV 6-11, `VIEW_FIELDS`: name, timestamp, progress, processedOn, finishedOn, failedReason; then, when ARGV[5]
  is `1`, its answer, field ARGV[12], else whether it has one: 1 or 0) and where the job is. Replies {0, ending}
  when there is no job (ending: the cancelled-while-queued record in KEYS[4], or nil), {1, fields} when it
  finished, {2, fields} when it is in the active list (KEYS[2]) under its lock (KEYS[5]), else
  {3, fields, position, recent runs}: its place in the wait list (KEYS[3]: BullMQ adds at the head and claims from
  the tail, `WAIT_LIST_ORDER`, so the place is the list's length less the job's index, looked for from the tail
  within ARGV[2] entries) and its API's recent run times (the list ARGV[3] .. its name, ARGV[4] of them). An
  active job whose lock lapsed (its process stopped) is read as queued at place 1: BullMQ's stalled-job check puts
  it back at the end the next claim takes from. The job's request (its data) is not read.
]]
local f = redis.call('HMGET', KEYS[1], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11])
if not f[1] then return {0, redis.call('HGET', KEYS[4], 'ending')} end
if ARGV[5] == '1' then
  f[7] = redis.call('HGET', KEYS[1], ARGV[12])
else
  f[7] = redis.call('HEXISTS', KEYS[1], ARGV[12])
end
if f[5] then return {1, f} end
local runs = ARGV[3] .. f[1]
if redis.call('LPOS', KEYS[2], ARGV[1]) then
  if redis.call('EXISTS', KEYS[5]) == 1 then return {2, f} end
  return {3, f, 1, redis.call('LRANGE', runs, 0, tonumber(ARGV[4]) - 1)}
end
local len = redis.call('LLEN', KEYS[3])
local at = redis.call('LPOS', KEYS[3], ARGV[1], 'RANK', -1, 'MAXLEN', tonumber(ARGV[2]))
local position = len + 1
if at then position = math.max(1, len - at) end
return {3, f, position, redis.call('LRANGE', runs, 0, tonumber(ARGV[4]) - 1)}
