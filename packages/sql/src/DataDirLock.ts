/**
 * One process per PGlite data directory. PGlite keeps the whole database in its own memory and
 * writes it back to the directory: two processes on one directory each overwrite the other's
 * writes, and what either acknowledged can be gone after a restart. The first opener writes
 * `recur.lock` (its pid, host and start) into the directory; any other opener, in another process
 * or the same one, fails with {@link DataDirLocked} naming the holder. A lock left by a process
 * that died (`kill -9`) is taken over.
 *
 * @since 0.1.0
 */
import { Data, Effect, type Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * The data directory is held by another live process (or by this one, through another open).
 *
 * @since 0.1.0
 */
export class DataDirLocked extends Data.TaggedError("DataDirLocked")<{
  readonly dataDir: string
  readonly pid: number
  readonly host: string
  readonly since: string
}> {
  override get message() {
    return (
      `The data directory ${this.dataDir} is in use by process ${this.pid} on ${this.host} (since ${this.since}). ` +
      `Only one Recur process (server, worker, CLI or createBilling) may open it at a time: stop that process, or use another directory.`
    )
  }
}

/**
 * The data directory cannot be opened: the lock file cannot be written (a read-only directory,
 * a path through a file) or PGlite fails on it (a missing WAL, files from another PostgreSQL
 * version). The cause, in a sentence.
 *
 * @since 0.1.0
 */
export class DataDirUnreadable extends Data.TaggedError("DataDirUnreadable")<{
  readonly dataDir: string
  readonly reason: string
}> {
  override get message() {
    return (
      `Recur could not open the data directory ${this.dataDir} (${this.reason.slice(0, 200)}). ` +
      `Check that the directory is readable and writable by this user and complete (pg_wal, global, base); ` +
      `if it is damaged, restore it from a backup.`
    )
  }
}

/**
 * The lock file's name inside the data directory.
 *
 * @since 0.1.0
 */
export const LOCK_FILE = "recur.lock"

interface Holder {
  readonly pid: number
  readonly host: string
  readonly since: string
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const read = (file: string): Holder | undefined => {
  try {
    const h = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<Holder>
    return typeof h.pid === "number"
      ? { pid: h.pid, host: String(h.host ?? "?"), since: String(h.since ?? "?") }
      : undefined
  } catch {
    return undefined
  }
}

/** Takes the lock or says who holds it; a lock whose process is gone is taken over. */
const tryTake = (dataDir: string): Holder | "taken" => {
  fs.mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, LOCK_FILE)
  const me: Holder = { pid: process.pid, host: os.hostname(), since: new Date().toISOString() }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(me), { flag: "wx" })
      return "taken"
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    }
    const holder = read(file)
    // a lock from another host cannot be checked: it is trusted; a dead local holder is stale
    if (holder !== undefined && (holder.host !== me.host || alive(holder.pid))) return holder
    fs.rmSync(file, { force: true })
  }
  return read(file) ?? { pid: -1, host: "?", since: "?" }
}

/**
 * Holds `dataDir` for the current scope: released (the lock file removed) when the scope closes.
 *
 * @since 0.1.0
 */
export const acquire = (dataDir: string): Effect.Effect<void, DataDirLocked | DataDirUnreadable, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.flatMap(
      Effect.try({
        try: () => tryTake(dataDir),
        catch: (e) =>
          new DataDirUnreadable({
            dataDir,
            reason: e instanceof Error ? e.message : String(e)
          })
      }),
      (r) =>
        r === "taken"
          ? Effect.void
          : Effect.fail(new DataDirLocked({ dataDir, pid: r.pid, host: r.host, since: r.since }))
    ),
    () =>
      Effect.sync(() => {
        const file = path.join(dataDir, LOCK_FILE)
        const holder = read(file)
        if (holder?.pid === process.pid) fs.rmSync(file, { force: true })
      })
  )
