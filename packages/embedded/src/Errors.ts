/**
 * What the Promise facade rejects with: plain `Error` subclasses, one per kind of answer the
 * REST API gives, each with the API's `code` and HTTP `status`, the request field at fault
 * (`param`) and the engine's own error (`error`, a tagged value of core's `Errors`). Catch
 * {@link RecurError} for all of them, or a subclass for one kind.
 *
 * @example
 * try {
 *   await billing.subscriptions.get(merchantId, "sub_unknown")
 * } catch (e) {
 *   if (e instanceof NotFoundError) console.log(e.status, e.code) // 404 resource_not_found
 * }
 * @since 0.1.0
 */
import { Errors } from "@recur/core"
import { ErrorReplies, RequestBodies } from "@recur/contract"
import { Cause, type SchemaIssue } from "effect"

/**
 * Any failure of a facade call.
 *
 * @since 0.1.0
 */
export class RecurError extends Error {
  /** The REST API's error code for the same failure (`InvalidParameter`, `resource_not_found`, …). */
  readonly code: string
  /** The HTTP status the REST API answers with for the same failure. */
  readonly status: number
  /** The input field at fault, named as in the REST API (`line_items[0].price_id`), when there is one. */
  readonly param: string | undefined
  /** The engine's error (core `Errors.RecurError`), or `undefined` for a system failure. */
  readonly error: Errors.RecurError | undefined

  constructor(args: {
    readonly message: string
    readonly code: string
    readonly status: number
    readonly param?: string | undefined
    readonly error?: Errors.RecurError | undefined
    readonly cause?: unknown
  }) {
    super(args.message, args.cause !== undefined ? { cause: args.cause } : undefined)
    this.name = new.target.name
    this.code = args.code
    this.status = args.status
    this.param = args.param
    this.error = args.error
  }
}

/**
 * 400 `InvalidParameter`: a field is missing, malformed or out of range (`param` names it).
 *
 * @since 0.1.0
 */
export class InvalidParameterError extends RecurError {}

/**
 * 400 `invalid_request_error`: the request as a whole cannot be served (e.g. a live merchant's clock).
 *
 * @since 0.1.0
 */
export class InvalidRequestError extends RecurError {}

/**
 * 401 `unauthorizedError`: an API key that is unknown or revoked.
 *
 * @since 0.1.0
 */
export class UnauthorizedError extends RecurError {}

/**
 * 404 `resource_not_found`: no such object for this merchant.
 *
 * @since 0.1.0
 */
export class NotFoundError extends RecurError {}

/**
 * 409 `state_conflict` or `duplicate_resource`: the object's state does not allow the change,
 * another change won a race (retry), or the object already exists.
 *
 * @since 0.1.0
 */
export class ConflictError extends RecurError {}

/**
 * 500 `system_error`: storage or another port failed, or a defect; `cause` holds what happened.
 * Nothing was changed half-way: the engine's writes are transactional.
 *
 * @since 0.1.0
 */
export class SystemError extends RecurError {}

/**
 * 503 `service_unavailable`: a payment processor that had to answer first (whether a merchant's
 * keys work) did not. Nothing was changed; retry.
 *
 * @since 0.1.0
 */
export class UnavailableError extends RecurError {}

/**
 * 423 `data_dir_locked`: `createBilling({ storage: { pglite: dir } })` found the data directory
 * held by another process — a running server, worker or CLI command, another `createBilling` —
 * or by this one through another open. PGlite keeps the database in one process's memory, so a
 * second opener would overwrite the first's writes: nothing was opened. `pid`, `host` and
 * `since` name the holder; stop it (or close the other client), or use another directory. (The
 * REST API never answers it: the server refuses to start, in one line.)
 *
 * @example
 * try {
 *   await createBilling({ storage: { pglite: "./.recur" } })
 * } catch (e) {
 *   if (e instanceof DataDirLockedError) console.error(`held by process ${e.pid} on ${e.host}`)
 * }
 * @since 0.1.0
 */
export class DataDirLockedError extends RecurError {
  /** The directory. */
  readonly dataDir: string
  /** The holder's process id. */
  readonly pid: number
  /** The holder's host name. */
  readonly host: string
  /** When the holder took the directory (ISO 8601). */
  readonly since: string

  constructor(locked: {
    readonly message: string
    readonly dataDir: string
    readonly pid: number
    readonly host: string
    readonly since: string
  }) {
    super({ message: locked.message, code: "data_dir_locked", status: 423 })
    this.dataDir = locked.dataDir
    this.pid = locked.pid
    this.host = locked.host
    this.since = locked.since
  }
}

/** `@recur/sql`'s `DataDirLock.DataDirLocked`, known by its tag (this module names no storage). */
const isDataDirLocked = (
  u: unknown
): u is {
  readonly message: string
  readonly dataDir: string
  readonly pid: number
  readonly host: string
  readonly since: string
} => typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "DataDirLocked"

const classes = {
  invalid_parameter: InvalidParameterError,
  invalid_request: InvalidRequestError,
  unauthorized: UnauthorizedError,
  not_found: NotFoundError,
  conflict: ConflictError,
  duplicate: ConflictError,
  unavailable: UnavailableError
} as const

const isDomainError = (u: unknown): u is Errors.RecurError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && u._tag in ErrorReplies.bindings

/**
 * One of core's errors as the facade's error.
 *
 * @since 0.1.0
 */
export const fromDomain = (e: Errors.RecurError): RecurError => {
  const reply = ErrorReplies.replyTo(e)
  return new classes[reply.reply]({
    message: e.message,
    code: reply.code,
    status: reply.httpStatus,
    param: reply.param,
    error: e,
    cause: e
  })
}

/**
 * A failed call's cause as the facade's error: the engine's error when there is one, otherwise a
 * {@link SystemError} carrying the squashed cause.
 *
 * @since 0.1.0
 */
export const fromCause = (cause: Cause.Cause<unknown>): RecurError => {
  const failure = Cause.findErrorOption(cause)
  if (failure._tag === "Some" && isDomainError(failure.value)) return fromDomain(failure.value)
  if (failure._tag === "Some" && isDataDirLocked(failure.value)) return new DataDirLockedError(failure.value)
  const race = ErrorReplies.lostRace(cause)
  if (race !== undefined) return fromDomain(race)
  const squashed = Cause.squash(cause)
  return new SystemError({
    message: squashed instanceof Error ? squashed.message : "Recur failed to complete the call",
    code: "system_error",
    status: 500,
    cause: squashed
  })
}

/**
 * Input that does not decode as the REST API's body, as core's `InvalidParameter` naming the
 * first field at fault (the REST adapter answers the same input the same way).
 *
 * @since 0.1.0
 */
export const invalidInput = (issue: SchemaIssue.Issue): Errors.InvalidParameter => {
  const issues = RequestBodies.issuesOf(issue).map((i) => ({ field: i.field || "body", message: i.message }))
  return new Errors.InvalidParameter({
    param: issues[0]?.field ?? "body",
    reason: issues[0]?.message ?? "Invalid input",
    issues
  })
}
