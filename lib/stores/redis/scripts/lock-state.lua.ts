/**
 * Lua that reads who holds a lock key, in either format (see lock-value.ts): this version's string or an
 * earlier version's hash. Leaves `fence` (decimal digits) and `holder` set when the key holds a lock, `nil`
 * otherwise (missing, or a value this library did not write), and `flag` to the value's flag (`'-'` for a
 * hash).
 */
export function lockStateLua(lockKey: string): string {
  return `
local fence, holder, flag
local value = redis.pcall('GET', ${lockKey})
if type(value) == 'string' then
  flag, fence, holder = string.match(value, '^([-wq])[^|]*|(%d+)|(.*)$')
elseif type(value) == 'table' then
  local fields = redis.pcall('HMGET', ${lockKey}, 'f', 'h')
  if type(fields) == 'table' and fields[1] then
    fence, holder, flag = fields[1], fields[2] or '', '-'
  end
end`;
}
