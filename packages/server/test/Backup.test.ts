import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Journey from "./support/journey.js"
import * as ServerProcess from "./support/serverProcess.js"

// The restore drills of docs/operations.md ("Backups and restores"), performed as written: data
// made through the API of a running `recur serve`, backed up the documented way, restored into a
// new place, a server started on the copy, and everything checked there: the API key, the
// subscription, the invoice and its signed link, a webhook endpoint's encrypted secret. PGlite
// always; PostgreSQL (pg_dump / pg_restore into a new database) when RECUR_TEST_DATABASE_URL is set.

const publicUrl = "https://billing.example.com/billing"

describe("backups and restores", { timeout: 600_000 }, () => {
  it("PGlite: stop the server, archive RECUR_DATA_DIR (master.key with it), unpack elsewhere, start there", async () => {
    const work = mkdtempSync(join(tmpdir(), "recur-backup-"))
    const dataDir = join(work, "data")
    const restored = join(work, "restored")
    const archive = join(work, "recur-backup.tar.gz")
    const hooks = await Journey.receiver()
    try {
      const env = { PORT: "0", RECUR_DATA_DIR: dataDir, RECUR_PUBLIC_URL: publicUrl, RECUR_ACCESS_LOG: "false" }
      const first = await ServerProcess.start({ env })
      const made = await Journey.make(first.local, first.demo!.api_key, hooks.url)
      expect(await first.stop("SIGTERM")).toBe(0)

      // the documented commands: the server stopped, the whole directory in one archive
      execFileSync("tar", ["-C", dataDir, "-czf", archive, "."])
      mkdirSync(restored, { mode: 0o700 })
      execFileSync("tar", ["-C", restored, "-xzf", archive])
      // the key keeps its mode through tar: only the server's user reads it
      expect(statSync(join(restored, "master.key")).mode & 0o777).toBe(0o600)

      const second = await ServerProcess.start({ env: { ...env, RECUR_DATA_DIR: restored } })
      try {
        expect(second.output()).toContain("existing data found")
        expect(second.demo).toBeUndefined()
        expect(await Journey.check(second.local, publicUrl, made, hooks)).toEqual([])
      } finally {
        expect(await second.stop("SIGTERM")).toBe(0)
      }
    } finally {
      await hooks.close()
      rmSync(work, { recursive: true, force: true })
    }
  })

  const url = process.env.RECUR_TEST_DATABASE_URL
  if (url !== undefined)
    it("PostgreSQL: pg_dump while serving, pg_restore into a new database, start there with the same master key", async () => {
      const suffix = `${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`
      const source = `recur_ops_src_${suffix}`
      const target = `recur_ops_dst_${suffix}`
      const at = (db: string) => {
        const u = new URL(url)
        u.pathname = `/${db}`
        return u.toString()
      }
      const psql = (command: string) => execFileSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-qc", command])
      const work = mkdtempSync(join(tmpdir(), "recur-pgdump-"))
      const dump = join(work, "recur.dump")
      const hooks = await Journey.receiver()
      const masterKey = randomBytes(32).toString("hex")
      try {
        psql(`create database ${source}`)
        const env = {
          PORT: "0",
          DATABASE_URL: at(source),
          RECUR_MASTER_KEY: masterKey,
          RECUR_PUBLIC_URL: publicUrl,
          RECUR_ACCESS_LOG: "false"
        }
        const first = await ServerProcess.start({ env })
        let made: Journey.Made
        try {
          made = await Journey.make(first.local, first.demo!.api_key, hooks.url)
          // online: pg_dump reads one consistent snapshot while the server and its worker write
          execFileSync("pg_dump", ["--format=custom", "--no-owner", "--file", dump, at(source)])
        } finally {
          expect(await first.stop("SIGTERM")).toBe(0)
        }
        psql(`create database ${target}`)
        execFileSync("pg_restore", ["--no-owner", "--exit-on-error", "--dbname", at(target), dump])
        const second = await ServerProcess.start({ env: { ...env, DATABASE_URL: at(target) } })
        try {
          expect(second.output()).toContain("existing data found")
          expect(await Journey.check(second.local, publicUrl, made, hooks)).toEqual([])
        } finally {
          expect(await second.stop("SIGTERM")).toBe(0)
        }
      } finally {
        await hooks.close()
        psql(`drop database if exists ${source} with (force)`)
        psql(`drop database if exists ${target} with (force)`)
        rmSync(work, { recursive: true, force: true })
      }
    })
})
