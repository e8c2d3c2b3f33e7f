import { describe, expect, it } from "@effect/vitest"
import { Entities, Store } from "@recur/core"
import { Migrations, Pg } from "@recur/sql"
import { Fixtures } from "@recur/testing"
import { Effect, Exit, Layer, Option } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const writer = fileURLToPath(new URL("./fixtures/durable-writer.ts", import.meta.url))

/** Runs the writer until `n` acknowledgements; it then waits, holding the data directory, until killed. */
const startWriter = (dataDir: string, merchant: string, n: number) =>
  new Promise<{ readonly pid: number; readonly acked: ReadonlyArray<string>; readonly kill: () => Promise<void> }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", writer, dataDir, merchant], {
        cwd: root,
        stdio: ["ignore", "pipe", "pipe"]
      })
      const acked: Array<string> = []
      let stderr = ""
      const exited = new Promise<void>((done) => child.on("exit", () => done()))
      child.stderr.on("data", (d) => (stderr += String(d)))
      child.stdout.on("data", (d: Buffer) => {
        for (const line of String(d).split("\n")) if (line.startsWith("ACK ")) acked.push(line.slice(4))
        if (acked.length >= n)
          resolve({
            pid: child.pid!,
            acked,
            kill: () => {
              child.kill("SIGKILL")
              return exited
            }
          })
      })
      child.on("exit", (_code, signal) =>
        signal !== "SIGKILL" ? reject(new Error(`writer exited without being killed: ${stderr}`)) : undefined
      )
    }
  )

/** Runs the writer, waits for `n` acknowledgements, then kill -9. */
const writeThenKill = async (dataDir: string, merchant: string, n: number) => {
  const writer = await startWriter(dataDir, merchant, n)
  await writer.kill()
  return writer.acked
}

/** Opens PGlite on `dataDir` and releases it at once: the exit says whether it could. */
const tryOpen = (dataDir: string) => Effect.exit(Effect.scoped(Layer.build(Pg.layerPglite({ dataDir }))))

describe("PGlite on disk", () => {
  it.live(
    "one process per data directory: a second opener fails naming the holder; a killed holder's lock is taken over",
    () =>
      Effect.gen(function* () {
        const dataDir = mkdtempSync(join(tmpdir(), "recur-locked-"))
        try {
          const merchant = yield* Fixtures.merchantId
          const holder = yield* Effect.promise(() => startWriter(dataDir, merchant, 1))
          const refused = yield* tryOpen(dataDir)
          expect(Exit.isFailure(refused)).toBe(true)
          const error = Exit.isFailure(refused) ? Option.getOrThrow(Exit.findErrorOption(refused)) : undefined
          expect(error).toMatchObject({ _tag: "DataDirLocked", pid: holder.pid, dataDir })
          expect((error as Error).message).toContain(`in use by process ${holder.pid}`)
          yield* Effect.promise(() => holder.kill())
          // the holder died without releasing: its lock is stale, the next opener takes it over
          yield* Effect.scoped(
            Effect.gen(function* () {
              yield* Layer.build(Pg.layerPglite({ dataDir }))
              const again = yield* tryOpen(dataDir)
              const inProcess = Exit.isFailure(again) ? Option.getOrThrow(Exit.findErrorOption(again)) : undefined
              expect(inProcess).toMatchObject({ _tag: "DataDirLocked", pid: process.pid })
            })
          )
          // released when its scope closed
          expect(Exit.isSuccess(yield* tryOpen(dataDir))).toBe(true)
        } finally {
          rmSync(dataDir, { recursive: true, force: true })
        }
      }),
    120_000
  )

  it.live(
    "keeps every acknowledged change after kill -9, reopens, and migrations run twice are a no-op",
    () =>
      Effect.gen(function* () {
        const dataDir = mkdtempSync(join(tmpdir(), "recur-durable-"))
        try {
          const merchant = yield* Fixtures.merchantId
          const acked = yield* Effect.promise(() => writeThenKill(dataDir, merchant, 5))
          expect(acked).toHaveLength(5)
          const survivors = yield* Effect.scoped(
            Effect.provide(
              Effect.gen(function* () {
                const again = yield* Migrations.run
                expect(again).toEqual([])
                const repo = (yield* Store.Storage).repository(Entities.customer)
                return yield* Effect.forEach(acked, (id) => Effect.map(repo.get(merchant, id), Option.isSome))
              }),
              Pg.layerPglite({ dataDir })
            )
          )
          expect(survivors).toEqual([true, true, true, true, true])
        } finally {
          rmSync(dataDir, { recursive: true, force: true })
        }
      }),
    120_000
  )
})
