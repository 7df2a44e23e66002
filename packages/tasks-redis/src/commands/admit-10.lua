--[[
  A submit's admission in one round trip: the unfinished jobs in BullMQ's lists (KEYS 1-5: wait, paused, active,
  delayed, prioritized, `unfinishedJobKeys`) under ARGV[1], then the client's count (KEYS[6], field ARGV[3] when
  ARGV[2] is `1`) taken under its share ARGV[4], then the body (ARGV[6]) and the overhead (ARGV[9]) under the bound
  ARGV[8] on the bytes held (KEYS 7-9, purged as of ARGV[7]); the body is kept at KEYS[10] for task ARGV[5].
  0: admitted, 1: full, 2: the client's share is used, 3: the bytes are.
]]
--- @include "includes/held-bytes"
local unfinished = redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[2]) + redis.call('LLEN', KEYS[3])
  + redis.call('ZCARD', KEYS[4]) + redis.call('ZCARD', KEYS[5])
if unfinished >= tonumber(ARGV[1]) then return 1 end
if ARGV[2] == '1' then
  if redis.call('HINCRBY', KEYS[6], ARGV[3], 1) > tonumber(ARGV[4]) then
    redis.call('HINCRBY', KEYS[6], ARGV[3], -1)
    return 2
  end
end
purge(KEYS[7], KEYS[8], KEYS[9], ARGV[7])
local size = string.len(ARGV[6]) + tonumber(ARGV[9])
if heldNow(KEYS[8]) + size > tonumber(ARGV[8]) then
  if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[6], ARGV[3], -1) end
  return 3
end
redis.call('SET', KEYS[10], ARGV[6])
count(KEYS[7], KEYS[8], KEYS[9], ARGV[5], size, nil)
return 0
