/**
 * Success bodies encoded by compiled encoders (`Codec.encoder`) instead of `Schema.encode`.
 *
 * `HttpApiBuilder` encodes a handler's value through the endpoint's success schema on every
 * request; for a page of ten invoices that is an `Either` and an issue tree per field. Here each
 * handler of a group is wrapped once, at build time: its value is encoded by the compiled encoder
 * of the same schema (same checks, same output, same `ParseError` on a bad value, property-tested
 * in core) and answered as JSON with the status and content type the schema's annotations give,
 * exactly as `HttpApiBuilder` would. `HttpApiBuilder` passes a handler's `HttpServerResponse`
 * through untouched. Endpoints whose success is a union, empty, or not JSON keep the builder's own
 * path. The handlers build their groups with {@link group}, so no group can miss it.
 *
 * @internal
 */
import { HttpApiBuilder, type HttpApiEndpoint, HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { Codec } from "@recur/core"
import { Chunk, Effect, SchemaAST as AST } from "effect"

type AnyHandlers = HttpApiBuilder.Handlers<any, any, any, any>

/** The group's handlers with their success bodies encoded by compiled encoders. */
export const compiledSuccess = <H extends AnyHandlers>(handlers: H): H => {
  const items = Chunk.map(handlers.handlers, (item: HttpApiBuilder.Handlers.Item<any, any>) => {
    if (item.withFullRequest) return item
    const schema = (item.endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps).successSchema
    const ast = schema.ast
    if (AST.isUnion(ast) || HttpApiSchema.isVoid(ast)) return item
    const encoding = HttpApiSchema.getEncoding(ast)
    if (encoding.kind !== "Json") return item
    const status = HttpApiSchema.getStatusSuccessAST(ast)
    const encode = Codec.encoder(schema)
    const handler = item.handler
    return {
      ...item,
      handler: (request: any) =>
        Effect.map(handler(request), (value) =>
          HttpServerResponse.isServerResponse(value) ? value : HttpServerResponse.unsafeJson(encode(value), { status, contentType: encoding.contentType }))
    }
  })
  // `Handlers` is a plain object on the builder's prototype: the same group, the wrapped items
  const self = Object.create(Object.getPrototypeOf(handlers))
  self.group = handlers.group
  self.handlers = items
  return self
}

/** `HttpApiBuilder.group`, with the group's handlers passed through {@link compiledSuccess}. */
export const group: typeof HttpApiBuilder.group = ((api: any, name: any, build: (handlers: any) => any) =>
  HttpApiBuilder.group(api, name, (handlers: any) => {
    const built = build(handlers)
    return Effect.isEffect(built) ? Effect.map(built as Effect.Effect<AnyHandlers, unknown, unknown>, compiledSuccess) : compiledSuccess(built)
  })) as typeof HttpApiBuilder.group
