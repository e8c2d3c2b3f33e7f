import { Clock, Effect } from "effect"

/**
 * Effect's live clock, shifted by `offsetMs`: records made under `shifted(-31 days)` are due for
 * renewal now. Used to seed billing runs (benchmark and crash suite) without waiting a month.
 */
export const shifted = (offsetMs: number): Clock.Clock => {
  const real = Clock.Clock.defaultValue()
  return {
    currentTimeMillisUnsafe: () => real.currentTimeMillisUnsafe() + offsetMs,
    currentTimeMillis: Effect.sync(() => real.currentTimeMillisUnsafe() + offsetMs),
    currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe() + BigInt(offsetMs) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => real.currentTimeNanosUnsafe() + BigInt(offsetMs) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: real.monotonicTimeNanos,
    sleep: (duration) => real.sleep(duration)
  }
}

/** Runs `effect` on a clock `offsetMs` away from the live one. */
export const withShiftedClock =
  (offsetMs: number) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.provideService(effect, Clock.Clock, shifted(offsetMs))
