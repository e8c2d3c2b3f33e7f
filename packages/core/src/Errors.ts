/**
 * The typed failures of Recur's services. Core never names an HTTP status: the REST adapter
 * binds one to each error where it declares its endpoints.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The object does not exist for this merchant (another merchant's object included).
 *
 * @since 0.1.0
 */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resource: Schema.String,
  id: Schema.String
}) {
  override get message() {
    return `No such ${this.resource}: ${this.id}`
  }
}

/**
 * A field is missing, malformed, out of range or not in its enum.
 *
 * @since 0.1.0
 */
export class InvalidParameter extends Schema.TaggedError<InvalidParameter>()("InvalidParameter", {
  param: Schema.String,
  reason: Schema.String,
  issues: Schema.optional(Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String })))
}) {
  override get message() {
    return `${this.param}: ${this.reason}`
  }
}

/**
 * A well-formed but contradictory request (mutually exclusive fields, both cursors, a
 * foreign cursor).
 *
 * @since 0.1.0
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  reason: Schema.String,
  param: Schema.optional(Schema.String)
}) {
  override get message() {
    return this.reason
  }
}

/**
 * The operation is not allowed in the object's current state.
 *
 * @since 0.1.0
 */
export class StateConflict extends Schema.TaggedError<StateConflict>()("StateConflict", {
  resource: Schema.String,
  id: Schema.String,
  state: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `${this.resource} ${this.id} is ${this.state}: ${this.reason}`
  }
}

/**
 * A per-merchant unique value is taken.
 *
 * @since 0.1.0
 */
export class DuplicateResource extends Schema.TaggedError<DuplicateResource>()("DuplicateResource", {
  resource: Schema.String,
  param: Schema.String
}) {
  override get message() {
    return `A ${this.resource} with this ${this.param} already exists`
  }
}

/**
 * Authentication failed (missing, malformed, unknown, expired or revoked key). Never says
 * which, so a caller learns nothing about keys.
 *
 * @since 0.1.0
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {}) {
  override get message() {
    return "ApiKey authentication is required"
  }
}
