/**
 * The Lua script RedisWindowLimiter runs for a check or a batch, atomic in Redis: the sliding window
 * of sliding-window.ts, operation for operation (Lua's numbers are doubles too), and the memory caps
 * of the embedded limiter (window-slots.ts) with the same rule for who gives up windows.
 *
 * Caps: every window is charged REDIS_WINDOW_FIXED_BYTES plus two bytes a character of its key (the
 * key is held twice: as a key and in its workspace's index) to its workspace and to the total while
 * it is indexed. Each workspace has an index (a sorted set of its counters, by
 * the instant each expires) and a byte count; `expiring` orders the workspaces by their soonest
 * expiry so that expired windows of any workspace can be found without a scan. A new window finds
 * room in window-slots.ts's order: the workspace over its own cap gives up its windows that expire
 * soonest (those charged longest ago for their length: the least recently used); at the total cap,
 * expired windows (of any workspace) are swept first, then the workspace's own. Nothing of another
 * workspace that is still live, and no window of the batch, is ever given up; with nothing left to
 * give, the new window is not kept (its check was answered from an empty window, as in memory).
 * The sweeps and evictions are bounded per run (MAX_STEPS), so one check never runs long.
 *
 * The global keys (total, expiring) put a run's keys in more than one hash slot: the windows need one
 * Redis server (with replicas if wished), not a Redis Cluster.
 */

/**
 * What a window costs Redis besides its key's characters (the hash and its three fields, the TTL,
 * the index entry), rounded up from what Redis's INFO reports per window (bench/redis-window-memory.ts).
 */
export const REDIS_WINDOW_FIXED_BYTES = 300;

/**
 * KEYS[1..n]: the items' counters; then the workspace's index and byte count, the total byte count,
 * and the set of workspaces by soonest expiry. ARGV[1]: nowMs; ARGV[2], ARGV[3]: the workspace and
 * total caps in bytes; ARGV[4]: the workspace's own key stem (its index and count are stem..'#i'
 * and stem..'#b'); then per item limit, durationMs, cost.
 * Returns {allPassed, then per item: passed, remaining, resetMs, then evicted, unkept}, all integers.
 */
export const WINDOW_SCRIPT = `
local nowMs = tonumber(ARGV[1])
local workspaceCap, totalCap, stem = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local n = #KEYS - 4
local index, wsBytes, totalKey, expiring = KEYS[n + 1], KEYS[n + 2], KEYS[n + 3], KEYS[n + 4]
local FIXED, MAX_STEPS, SWEEP_BATCH = ${REDIS_WINDOW_FIXED_BYTES}, 256, 32
-- changed: the workspace's set of windows changed, so its place in expiring may have.
local steps, evicted, unkept, changed = 0, 0, 0, false
-- Integers written as such: PEXPIRE takes nothing else, and it keeps every digit.
local function int(x) return string.format('%d', x) end
local function num(key) return tonumber(redis.call('GET', key) or '0') end

local function windowsAt(key, durationMs)
  local startMs = math.floor(nowMs / durationMs) * durationMs
  local stored = redis.call('HMGET', key, 's', 'c', 'p')
  if not stored[1] then return startMs, 0, 0 end
  local storedStartMs = tonumber(stored[1])
  local count = tonumber(stored[2])
  if storedStartMs >= startMs then return storedStartMs, count, tonumber(stored[3]) end
  if storedStartMs == startMs - durationMs then return startMs, 0, count end
  return startMs, 0, 0
end

-- Drops one indexed window of a workspace (given its index and count) and what it was charged.
local function drop(idx, bytesKey, key)
  redis.call('DEL', key)
  redis.call('ZREM', idx, key)
  redis.call('DECRBY', bytesKey, FIXED + 2 * #key)
  redis.call('DECRBY', totalKey, FIXED + 2 * #key)
end

-- Keeps a workspace's place in expiring (its soonest expiry), or removes it with its empty keys.
local function place(workspaceStem)
  local idx = workspaceStem .. '#i'
  local first = redis.call('ZRANGE', idx, 0, 0, 'WITHSCORES')
  if first[1] then
    redis.call('ZADD', expiring, first[2], workspaceStem)
  else
    redis.call('ZREM', expiring, workspaceStem)
    redis.call('DEL', idx, workspaceStem .. '#b')
  end
end

-- Sweeps a workspace's expired windows (a batch at most); returns how many went.
local function sweep(workspaceStem)
  local idx, bytesKey = workspaceStem .. '#i', workspaceStem .. '#b'
  local expired = redis.call('ZRANGEBYSCORE', idx, '-inf', int(nowMs), 'LIMIT', 0, SWEEP_BATCH)
  for _, key in ipairs(expired) do drop(idx, bytesKey, key) end
  steps = steps + 1 + #expired
  return #expired
end

-- Gives up the workspace's own window that expires soonest, outside the batch; false if none.
local function giveOwn(batch)
  local candidates = redis.call('ZRANGE', index, 0, n)
  for _, key in ipairs(candidates) do
    if not batch[key] then
      drop(index, wsBytes, key)
      evicted = evicted + 1
      changed = true
      steps = steps + 1
      return true
    end
  end
  return false
end

-- Sweeps expired windows of the workspace that has the soonest; false if none has any.
local function sweepAny()
  local soonest = redis.call('ZRANGEBYSCORE', expiring, '-inf', int(nowMs), 'LIMIT', 0, 1)
  if not soonest[1] then return false end
  sweep(soonest[1])
  place(soonest[1])
  return true
end

-- Whether a new window of need bytes may be kept, after giving up what the rule allows.
local function makeRoom(need, batch)
  while num(wsBytes) + need > workspaceCap do
    if steps >= MAX_STEPS or not giveOwn(batch) then return false end
  end
  while num(totalKey) + need > totalCap do
    if steps >= MAX_STEPS then return false end
    if not sweepAny() and not giveOwn(batch) then return false end
  end
  return true
end

local pending = {}
local usedBefore, resets, passed = {}, {}, {}
local allPassed = true
for i = 1, n do
  local key = KEYS[i]
  local limit, durationMs, cost = tonumber(ARGV[3 * i + 2]), tonumber(ARGV[3 * i + 3]), tonumber(ARGV[3 * i + 4])
  local startMs, current, previous = windowsAt(key, durationMs)
  local remainingMs = durationMs - math.max(0, nowMs - startMs)
  local earlier = pending[key] or 0
  usedBefore[i] = current + math.floor((previous * remainingMs) / durationMs) + earlier
  pending[key] = earlier + cost
  resets[i] = startMs + durationMs
  passed[i] = usedBefore[i] + cost <= limit
  allPassed = allPassed and passed[i]
end

local out = { allPassed and 1 or 0 }
for i = 1, n do
  local limit, cost = tonumber(ARGV[3 * i + 2]), tonumber(ARGV[3 * i + 4])
  if passed[i] then
    local charged = allPassed and cost or 0
    out[#out + 1] = 1
    out[#out + 1] = math.max(0, math.floor(limit - usedBefore[i] - charged))
  else
    out[#out + 1] = 0
    out[#out + 1] = 0
  end
  out[#out + 1] = resets[i]
end

if allPassed then
  local batch = {}
  for i = 1, n do batch[KEYS[i]] = true end
  if sweep(stem) > 0 then changed = true end
  for i = 1, n do
    local key, durationMs, cost = KEYS[i], tonumber(ARGV[3 * i + 3]), tonumber(ARGV[3 * i + 4])
    if cost > 0 then
      local known = redis.call('ZSCORE', index, key)
      if known or makeRoom(FIXED + 2 * #key, batch) then
        -- Re-read: an earlier item of the batch may have charged the same counter.
        local startMs, current, previous = windowsAt(key, durationMs)
        redis.call('HSET', key, 's', int(startMs), 'c', int(current + cost), 'p', int(previous))
        redis.call('PEXPIRE', key, int(startMs + 2 * durationMs - nowMs))
        redis.call('ZADD', index, int(startMs + 2 * durationMs), key)
        if not known then
          redis.call('INCRBY', wsBytes, FIXED + 2 * #key)
          redis.call('INCRBY', totalKey, FIXED + 2 * #key)
          changed = true
        end
      else
        unkept = unkept + 1
      end
    end
  end
  -- A charge of a window already there only moves its expiry later: a soonest expiry left behind
  -- in expiring costs one sweep that finds nothing and places it again (sweepAny).
  if changed then place(stem) end
end
out[#out + 1] = evicted
out[#out + 1] = unkept
return out
`;
