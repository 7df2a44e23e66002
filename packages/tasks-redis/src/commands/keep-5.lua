--[[
  A task's answer kept before its job is marked completed (a reader that sees it completed finds the answer):
  when the answer ARGV[2] and the overhead ARGV[6] fit under the bound ARGV[5] in place of what task ARGV[1]
  counted (its body), it is written at KEYS[4] for ARGV[4] ms, counted until then (as of ARGV[3]), and the body
  (KEYS[5]) expires then too (it is dropped as the task's end is written; should that never come, it still goes).
  KEYS 1-3: the count (`HeldBytes.countKeys`). 1: kept, 0: it does not fit.
]]
--- @include "includes/held-bytes"
purge(KEYS[1], KEYS[2], KEYS[3], ARGV[3])
local size = string.len(ARGV[2]) + tonumber(ARGV[6])
local own = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if heldNow(KEYS[2]) - own + size > tonumber(ARGV[5]) then return 0 end
redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[4])
redis.call('PEXPIRE', KEYS[5], ARGV[4])
count(KEYS[1], KEYS[2], KEYS[3], ARGV[1], size, tonumber(ARGV[3]) + tonumber(ARGV[4]))
return 1
