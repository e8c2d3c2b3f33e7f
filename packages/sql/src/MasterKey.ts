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
 * @since 0.1.0
 */
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
