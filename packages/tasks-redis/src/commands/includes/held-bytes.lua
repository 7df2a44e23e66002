--[[
  The bytes a queue's tasks hold (`HeldBytes`), shared by the scripts that write and drop them: a hash `held` of
  each task's bytes, their sum `total`, and a sorted set `expiry` of when the finished ones expire.
]]

-- Finished tasks' counts dropped per call at most, as their answers expire (a call's work stays bounded).
local PURGE_LIMIT = 1000

-- The counts of finished tasks whose time has passed (scored up to `now`) leave `held` and `total`.
local function purge(held, total, expiry, now)
  local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', now, 'LIMIT', 0, PURGE_LIMIT)
  for _, id in ipairs(gone) do
    redis.call('DECRBY', total, tonumber(redis.call('HGET', held, id) or '0'))
    redis.call('HDEL', held, id)
  end
  if #gone > 0 then redis.call('ZREM', expiry, unpack(gone)) end
end

-- A task's bytes become `bytes` (0: it is no longer counted), expiring at `expires` when given.
local function count(held, total, expiry, id, bytes, expires)
  redis.call('INCRBY', total, bytes - tonumber(redis.call('HGET', held, id) or '0'))
  if bytes == 0 then
    redis.call('HDEL', held, id)
    redis.call('ZREM', expiry, id)
    return
  end
  redis.call('HSET', held, id, bytes)
  if expires then redis.call('ZADD', expiry, string.format('%d', expires), id) end
end

local function heldNow(total)
  return tonumber(redis.call('GET', total) or '0')
end

--[[
  What a task's end gives back: its body goes; a task that did not succeed (`succeeded` '0') keeps only its
  `overhead` counted, one whose answer is in its job ('2') that answer's `inline` bytes and its overhead (either
  way an answer it kept apart on an earlier attempt goes), for its time to live `ttl` from `now` (an answer kept
  apart, '1', was counted as it was kept); BullMQ's events stream loses its entries older than that time (their
  ids are BullMQ's clock in ms).
]]
local function endedHeld(held, total, expiry, body, answer, events, id, succeeded, now, ttl, overhead, inline)
  redis.call('DEL', body)
  if succeeded ~= '1' then
    redis.call('DEL', answer)
    local bytes = tonumber(overhead)
    if succeeded == '2' then bytes = bytes + tonumber(inline or '0') end
    count(held, total, expiry, id, bytes, tonumber(now) + tonumber(ttl))
  end
  redis.call('XTRIM', events, 'MINID', string.format('%d', tonumber(now) - tonumber(ttl)))
end
