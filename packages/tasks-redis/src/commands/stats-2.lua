--[[
  One round trip for `stats`: the waiting and active lists of BullMQ's queue (KEYS), each job's name (the API,
  field ARGV[3]) read from its hash (ARGV[1] is the job key prefix), ARGV[2] jobs a list at most, counted by name;
  `[name, waiting, active, ...]`.
]]
local counts = {}
local names = {}
for k = 1, 2 do
  local ids = redis.call('LRANGE', KEYS[k], 0, tonumber(ARGV[2]) - 1)
  for _, id in ipairs(ids) do
    local name = redis.call('HGET', ARGV[1] .. id, ARGV[3])
    if name then
      if not counts[name] then counts[name] = {0, 0}; names[#names + 1] = name end
      counts[name][k] = counts[name][k] + 1
    end
  end
end
local out = {}
for _, name in ipairs(names) do
  out[#out + 1] = name; out[#out + 1] = counts[name][1]; out[#out + 1] = counts[name][2]
end
return out
