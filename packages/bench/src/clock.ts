import { Clock, Effect } from "effect"

/**
 * Effect's live clock, shifted by `offsetMs`: records made under `shifted(-31 days)` are due for
 * renewal now. Used to seed billing runs (benchmark and crash suite) without waiting a month.
 */
export const shifted = (offsetMs: number): Clock.Clock => {
  const real = Clock.make()
  return {
    ...real,
    unsafeCurrentTimeMillis: () => real.unsafeCurrentTimeMillis() + offsetMs,
    currentTimeMillis: Effect.sync(() => real.unsafeCurrentTimeMillis() + offsetMs),
    unsafeCurrentTimeNanos: () => real.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => real.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n)
  }
}
