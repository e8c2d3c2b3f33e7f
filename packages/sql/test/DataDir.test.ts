import { describe, expect, it } from "@effect/vitest"
import { Pg } from "@recur/sql"
import { Effect, Exit, Layer } from "effect"
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const fresh = () => mkdtempSync(join(tmpdir(), "recur-datadir-"))

/** Opens the directory (migrating it), then closes it. */
const open = (dataDir: string) => Effect.scoped(Layer.build(Pg.layerPglite({ dataDir, maintenance: false })))

/** The failure opening `dataDir` ends with, as its tag and message. */
const failureOf = (dataDir: string) =>
  Effect.map(Effect.exit(open(dataDir)), (exit) => {
    if (Exit.isSuccess(exit)) return undefined
    const error = exit.cause.reasons.find((r) => r._tag === "Fail")
    const e = (error as { error?: { _tag: string; message: string } } | undefined)?.error
    return e ? { tag: e._tag, message: e.message } : { tag: "defect", message: String(exit.cause) }
  })

describe("PGlite data directory", { timeout: 120_000 }, () => {
  it.effect(
    "a damaged directory (PG_VERSION removed) is refused with a plain message, and nothing is written to it",
    () =>
      Effect.gen(function* () {
        const dir = fresh()
        try {
          yield* open(dir)
          rmSync(join(dir, "PG_VERSION"))
          const before = readdirSync(dir).sort()
          const failure = yield* failureOf(dir)
          expect(failure?.tag).toBe("DataDirUnrecognised")
          expect(failure?.message).toContain("PG_VERSION is missing")
          expect(failure?.message).toContain("Restore the directory from a backup")
          expect(readdirSync(dir).sort()).toEqual(before)
          expect(existsSync(join(dir, "PG_VERSION"))).toBe(false)
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "a directory holding someone else's files is refused; an empty one (or only master.key) is initialised",
    () =>
      Effect.gen(function* () {
        const foreign = fresh()
        const keyOnly = fresh()
        try {
          writeFileSync(join(foreign, "notes.txt"), "mine")
          expect((yield* failureOf(foreign))?.tag).toBe("DataDirUnrecognised")
          expect(readdirSync(foreign)).toEqual(["notes.txt"])
          writeFileSync(join(keyOnly, "master.key"), "00".repeat(32))
          expect(yield* failureOf(keyOnly)).toBeUndefined()
          expect(existsSync(join(keyOnly, "PG_VERSION"))).toBe(true)
        } finally {
          rmSync(foreign, { recursive: true, force: true })
          rmSync(keyOnly, { recursive: true, force: true })
        }
      }),
    { timeout: 120_000 }
  )

  it.effect(
    'a directory that cannot be written (here: a path through a file) is a plain message, not {"name":"ErrnoError"}',
    () =>
      Effect.gen(function* () {
        const parent = fresh()
        try {
          writeFileSync(join(parent, "a-file"), "")
          const dir = join(parent, "a-file", "data")
          const failure = yield* failureOf(dir)
          expect(failure?.tag).toBe("DataDirUnreadable")
          expect(failure?.message).toContain(`Recur could not open the data directory ${dir}`)
          expect(failure?.message).toContain("readable and writable")
        } finally {
          rmSync(parent, { recursive: true, force: true })
        }
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "a deleted WAL is a plain message naming the directory, not RuntimeError: Aborted()",
    () =>
      Effect.gen(function* () {
        const dir = fresh()
        try {
          yield* open(dir)
          rmSync(join(dir, "pg_wal"), { recursive: true, force: true })
          const failure = yield* failureOf(dir)
          expect(failure?.tag).toBe("DataDirUnreadable")
          expect(failure?.message).toContain(`Recur could not open the data directory ${dir}`)
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }),
    { timeout: 120_000 }
  )
})
