/**
 * The master key of a durable PGlite data directory, kept beside the data as `master.key`: the
 * key every stored secret is encrypted under (API keys, webhook secrets, processor keys, stored
 * idempotent answers) and signed links are derived from. The server (`recur serve` without
 * `RECUR_MASTER_KEY`) and `createBilling({ storage: { pglite: dir } })` without `masterKey` both
 * take it from here, so a restart reads what the last run wrote.
 *
 * The rules: an empty or new directory gets a fresh random key (file mode 0600); an existing key is
 * read back; a directory that holds data but no key is refused (a new key could read none of that
 * data, so none is made). PostgreSQL keeps no files of Recur's: there the key must be given
 * ({@link MasterKeyRequired}).
 *
 * A rotation (`recur master-key rotate`) writes the new key as `master.key.next`, re-encrypts
 * every secret under it in one transaction, then moves the old key to `master.key.previous` (with
 * the instant its links stop opening) and renames `master.key.next` to `master.key`; at start the
 * ring holds all three ({@link ringInDataDir}).
 *
 * @since 0.1.0
 */
import type { Secrets } from "@recur/core"
import { Data, Effect, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as DataDirLock from "./DataDirLock.js"

/**
 * The key file's name inside the data directory.
 *
 * @since 0.1.0
 */
export const FILE = "master.key"

const HEX64 = /^[0-9a-fA-F]{64}$/

/**
 * Whether `text` is a master key as configured: 64 hexadecimal characters (32 bytes).
 *
 * @since 0.1.0
 */
export const isValid = (text: string): boolean => HEX64.test(text)

/**
 * The data directory holds data encrypted under a key, but its `master.key` is gone.
 *
 * @since 0.1.0
 */
export class MasterKeyMissing extends Data.TaggedError("MasterKeyMissing")<{
  readonly dataDir: string
  readonly file: string
}> {
  override get message() {
    return (
      `${this.file} is missing, but ${this.dataDir} holds data encrypted with it (API keys, webhook secrets). ` +
      `Restore master.key from your backup (or set RECUR_MASTER_KEY / masterKey to its 64 hex characters); ` +
      `a new key would lock that data out, so none was generated. To start afresh, use an empty RECUR_DATA_DIR.`
    )
  }
}

/**
 * Storage without a place for the key (PostgreSQL) and no key given: a key made up at each start
 * would lose every stored secret and every signed link at the next restart.
 *
 * @since 0.1.0
 */
export class MasterKeyRequired extends Data.TaggedError("MasterKeyRequired")<{
  /** The setting to give: `RECUR_MASTER_KEY`, `masterKey`. */
  readonly setting: string
  /** The storage that needs it, in the caller's words: `DATABASE_URL`, `{ postgres } storage`. */
  readonly storage: string
}> {
  override get message() {
    return (
      `${this.setting} is required with ${this.storage} (64 hex characters; it encrypts stored API keys, ` +
      `webhook secrets and processor keys and signs invoice and portal links, so a key made up at each start ` +
      `would lose them all at the next restart). Generate one once, e.g. with \`openssl rand -hex 32\`, and keep it with your backups.`
    )
  }
}

/**
 * The key file holds something other than a key.
 *
 * @since 0.1.0
 */
export class MasterKeyInvalid extends Data.TaggedError("MasterKeyInvalid")<{ readonly file: string }> {
  override get message() {
    return `${this.file} does not hold a master key (64 hexadecimal characters). Restore it from your backup.`
  }
}

/**
 * The master key of the PGlite data directory `dataDir`: read from its `master.key`, or made and
 * written there when the directory holds no data yet. A directory with data and no key is
 * {@link MasterKeyMissing}; one that cannot be written is `DataDirUnreadable`.
 *
 * @since 0.1.0
 */
export const inDataDir = (
  dataDir: string
): Effect.Effect<Redacted.Redacted<string>, MasterKeyMissing | MasterKeyInvalid | DataDirLock.DataDirUnreadable> =>
  Effect.suspend(
    (): Effect.Effect<
      Redacted.Redacted<string>,
      MasterKeyMissing | MasterKeyInvalid | DataDirLock.DataDirUnreadable
    > => {
      const dir = path.resolve(dataDir)
      const file = path.join(dir, FILE)
      try {
        fs.mkdirSync(dir, { recursive: true })
        if (!fs.existsSync(file)) {
          // a key generated beside existing data could not decrypt its API keys and webhook secrets
          if (fs.existsSync(path.join(dir, "PG_VERSION")))
            return Effect.fail(new MasterKeyMissing({ dataDir: dir, file }))
          const key = [...globalThis.crypto.getRandomValues(new Uint8Array(32))]
            .map((b) => b.toString(16).padStart(2, "0"))
            .join("")
          // `wx`: of two first starts racing, one writes and both read the same key back
          try {
            fs.writeFileSync(file, key, { mode: 0o600, flag: "wx" })
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
          }
        }
        const key = fs.readFileSync(file, "utf8").trim()
        return isValid(key) ? Effect.succeed(Redacted.make(key)) : Effect.fail(new MasterKeyInvalid({ file }))
      } catch (e) {
        return Effect.fail(
          new DataDirLock.DataDirUnreadable({ dataDir: dir, reason: e instanceof Error ? e.message : String(e) })
        )
      }
    }
  )

// ------------------------------------------------------------------ rotation

/**
 * The new key of a rotation under way, written before its transaction and renamed to
 * {@link FILE} after it: a crash at any point leaves a ring that reads every secret.
 *
 * @since 0.1.0
 */
export const NEXT_FILE = "master.key.next"

/**
 * The keys a rotation replaced, one a line: `<64 hex> <until, Unix ms>` — they still decrypt, and
 * verify the links signed under them until that instant.
 *
 * @since 0.1.0
 */
export const PREVIOUS_FILE = "master.key.previous"

/**
 * A new random master key: 64 hexadecimal characters.
 *
 * @since 0.1.0
 */
export const generate = (): string =>
  [...globalThis.crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("")

/** Writes a file whole and durably: a temporary file, fsync, rename, fsync of the directory. */
const writeDurably = (file: string, text: string) => {
  const tmp = `${file}.tmp`
  const fd = fs.openSync(tmp, "w", 0o600)
  try {
    fs.writeSync(fd, text)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  fs.renameSync(tmp, file)
  syncDir(path.dirname(file))
}

const syncDir = (dir: string) => {
  try {
    const fd = fs.openSync(dir, "r")
    try {
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    // not every platform opens directories (Windows): the rename is still atomic
  }
}

const unreadable = (dataDir: string) => (e: unknown) =>
  new DataDirLock.DataDirUnreadable({ dataDir, reason: e instanceof Error ? e.message : String(e) })

/** The previous keys of the directory's {@link PREVIOUS_FILE}, newest first. */
const previousIn = (dir: string): ReadonlyArray<{ readonly key: string; readonly until: number }> => {
  const file = path.join(dir, PREVIOUS_FILE)
  if (!fs.existsSync(file)) return []
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([key, until]) => key !== undefined && isValid(key) && until !== undefined && /^\d+$/.test(until))
    .map(([key, until]) => ({ key: key!, until: Number(until) }))
}

/**
 * The new key of an interrupted rotation ({@link NEXT_FILE}), if one is there.
 *
 * @since 0.1.0
 */
export const nextInDataDir = (
  dataDir: string
): Effect.Effect<Redacted.Redacted<string> | undefined, MasterKeyInvalid | DataDirLock.DataDirUnreadable> =>
  Effect.suspend(() => {
    const file = path.join(path.resolve(dataDir), NEXT_FILE)
    const text = Effect.try({
      try: () => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim() : undefined),
      catch: unreadable(dataDir)
    })
    return Effect.flatMap(text, (key) =>
      key === undefined
        ? Effect.succeed(undefined)
        : isValid(key)
          ? Effect.succeed(Redacted.make(key))
          : Effect.fail(new MasterKeyInvalid({ file }))
    )
  })

/**
 * The key ring of a data directory: its {@link inDataDir} key, the new key of an interrupted
 * rotation (verifying links without end, as what it signed may have committed) and the keys
 * rotations replaced, each with its `until`.
 *
 * @since 0.1.0
 */
export const ringInDataDir = (dataDir: string) =>
  Effect.gen(function* () {
    const current = yield* inDataDir(dataDir)
    const next = yield* nextInDataDir(dataDir)
    const previous = yield* Effect.try({ try: () => previousIn(path.resolve(dataDir)), catch: unreadable(dataDir) })
    const ring: ReadonlyArray<Secrets.PreviousKey> = [
      ...(next === undefined ? [] : [{ key: next }]),
      ...previous.map((p) => ({ key: Redacted.make(p.key), until: p.until }))
    ]
    return { current, previous: ring }
  })

/**
 * Step 1 of a rotation: writes the new key as {@link NEXT_FILE} (durably, mode 0600) before any
 * secret is encrypted under it. Writing the same key again is a no-op (a rotation run again).
 *
 * @since 0.1.0
 */
export const writeNext = (dataDir: string, key: Redacted.Redacted<string>) =>
  Effect.try({
    try: () => writeDurably(path.join(path.resolve(dataDir), NEXT_FILE), Redacted.value(key)),
    catch: unreadable(dataDir)
  })

/**
 * Step 3 of a rotation, once every secret is under the new key: the current key joins
 * {@link PREVIOUS_FILE} with `until` (replaced keys whose `until` has passed at `now` leave it),
 * then {@link NEXT_FILE} is renamed to {@link FILE}. Each write is atomic, and at each point
 * between them the ring still holds both keys.
 *
 * @since 0.1.0
 */
export const promoteNext = (dataDir: string, until: number, now: number) =>
  Effect.try({
    try: () => {
      const dir = path.resolve(dataDir)
      const current = fs.readFileSync(path.join(dir, FILE), "utf8").trim()
      const next = fs.readFileSync(path.join(dir, NEXT_FILE), "utf8").trim()
      if (current !== next) {
        const kept = previousIn(dir).filter((p) => p.until > now && p.key !== current && p.key !== next)
        const lines = [{ key: current, until }, ...kept].map((p) => `${p.key} ${p.until}\n`).join("")
        writeDurably(path.join(dir, PREVIOUS_FILE), lines)
      }
      fs.renameSync(path.join(dir, NEXT_FILE), path.join(dir, FILE))
      syncDir(dir)
    },
    catch: unreadable(dataDir)
  })
