/**
 * A token bucket per key, in this process: `burst` tokens, refilled at `perSecond`. The map is
 * bounded (cleared past 100,000 keys) so a flood of distinct keys cannot grow it without end.
 */
export interface Limit {
  readonly perSecond: number
  readonly burst: number
}

/** Takes a token for `key` at `now` (ms); answers 0 when allowed, else the whole seconds to wait. */
export type Take = (key: string, now: number) => number

export const make = (limit: Limit): Take => {
  const buckets = new Map<string, { tokens: number; at: number }>()
  return (key, now) => {
    const b = buckets.get(key) ?? { tokens: limit.burst, at: now }
    const tokens = Math.min(limit.burst, b.tokens + ((now - b.at) / 1000) * limit.perSecond)
    if (tokens >= 1) {
      buckets.set(key, { tokens: tokens - 1, at: now })
      if (buckets.size > 100_000) buckets.clear()
      return 0
    }
    buckets.set(key, { tokens, at: now })
    return Math.max(1, Math.ceil((1 - tokens) / limit.perSecond))
  }
}
