--[[
  After a task's end is written, in one command: a success's run time kept for its API's estimate (ARGV[1], empty
  for another end: pushed on the list KEYS[1], the most recent ARGV[2] kept for ARGV[3] ms), its client's slot
  given back (field ARGV[5] of KEYS[2] when ARGV[4] is `1`), its cancel mark (member ARGV[6] of KEYS[3]) gone and
  its final event (ARGV[8]) sent on the store's channel (ARGV[7]); its bytes given back (`endedHeld`: KEYS 4-9
  are `HeldBytes.endKeys(id)`, ARGV 9-14 `HeldBytes.endArgs(id, answer)`). Only once the job (its hash KEYS[10]) has
  finished, and once a job: a completion sends this behind BullMQ's on one connection without waiting for it
  (`task-settlement.ts`), so it may arrive before it (1: nothing done, sent again after) or be sent again after
  a lost reply (2: done already).
]]
--- @include "includes/held-bytes"
if redis.call('HEXISTS', KEYS[10], 'finishedOn') == 0 then return 1 end
if redis.call('HSETNX', KEYS[10], 'tiffinEnded', '1') == 0 then return 2 end
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
