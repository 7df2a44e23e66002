--[[
  After a task's end is written, in one command: a success's run time kept for its API's estimate (ARGV[1], empty
  for another end: pushed on the list KEYS[1], the most recent ARGV[2] kept for ARGV[3] ms), its client's slot
  given back (field ARGV[5] of KEYS[2] when ARGV[4] is `1`), its cancel mark (member ARGV[6] of KEYS[3]) gone and
  its final event (ARGV[8]) sent on the store's channel (ARGV[7]); its bytes given back (`endedHeld`: KEYS 4-9
  are `HeldBytes.endKeys(id)`, ARGV 9-14 `HeldBytes.endArgs(id, answer)`).
]]
--- @include "includes/held-bytes"
if ARGV[1] ~= '' then
  redis.call('LPUSH', KEYS[1], ARGV[1])
  redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
if ARGV[4] == '1' then redis.call('HINCRBY', KEYS[2], ARGV[5], -1) end
redis.call('SREM', KEYS[3], ARGV[6])
redis.call('PUBLISH', ARGV[7], ARGV[8])
endedHeld(KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], ARGV[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13],
  ARGV[14])
return 0
