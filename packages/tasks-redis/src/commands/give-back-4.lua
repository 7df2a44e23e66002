--[[
  A task's bytes given back: its body (KEYS[4]) dropped and its count (task ARGV[1]; KEYS 1-3, the count) set to
  ARGV[2] bytes, expiring at ARGV[3] (empty: none), for a task that ended without the end script (cancelled while
  queued) or was never queued.
]]
--- @include "includes/held-bytes"
redis.call('DEL', KEYS[4])
count(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
return 0
