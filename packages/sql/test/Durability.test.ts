import { describe, expect, it } from "@effect/vitest"
import { Entities, Store } from "@recur/core"
import { Migrations, Pg } from "@recur/sql"
import { Fixtures } from "@recur/testing"
import { Effect, Option } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const writer = fileURLToPath(new URL("./fixtures/durable-writer.ts", import.meta.url))

/** Runs the writer, waits for `n` acknowledgements, then kill -9. */
const writeThenKill = (dataDir: string, merchant: string, n: number) =>
  new Promise<Array<string>>((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", writer, dataDir, merchant], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    const acked: Array<string> = []
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += String(d)))
    child.stdout.on("data", (d: Buffer) => {
      for (const line of String(d).split("\n")) if (line.startsWith("ACK ")) acked.push(line.slice(4))
      if (acked.length >= n) child.kill("SIGKILL")
    })
    child.on("exit", (_code, signal) => (signal === "SIGKILL" ? resolve(acked) : reject(new Error(`writer exited without being killed: ${stderr}`))))
  })

describe("PGlite on disk", () => {
  it.live("keeps every acknowledged change after kill -9, reopens, and migrations run twice are a no-op", () =>
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
    }), 120_000)
})
