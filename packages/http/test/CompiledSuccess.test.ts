import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, DateTime, Effect, Layer, Schema } from "effect"
import fc from "fast-check"
import { compiledSuccess } from "../src/internal/compiledSuccess.js"

// A success schema with what the API's bodies hold: a class, a transformation (DateTime), an
// optional key, a nullable field, a literal union, a nested array; plus a non-200 status, a union
// success (left to the builder) and an empty one.
class Line extends Schema.Class<Line>("Line")({ amount: Schema.BigInt, label: Schema.NullOr(Schema.String) }) {}
const Body = Schema.Struct({
  code: Schema.Literal("success"),
  at: Schema.DateTimeUtcFromNumber,
  status: Schema.Literals(["open", "paid"]),
  note: Schema.optional(Schema.String),
  lines: Schema.Array(Line)
})
type Body = typeof Body.Type
const Api = HttpApi.make("t").add(
  HttpApiGroup.make("g")
    .add(HttpApiEndpoint.post("body", "/body").setPayload(Schema.Struct({ i: Schema.Number })).addSuccess(Body))
    .add(HttpApiEndpoint.get("created", "/created").addSuccess(Body, { status: 201 }))
    .add(HttpApiEndpoint.get("either", "/either").addSuccess(Schema.Struct({ a: Schema.String })).addSuccess(Schema.Struct({ b: Schema.Number }), { status: 202 }))
    .add(HttpApiEndpoint.get("empty", "/empty"))
)

const bodies: Array<Body> = []
const handlers = (compiled: boolean) =>
  HttpApiBuilder.group(Api, "g", (h) => {
    const built = h
      .handle("body", ({ payload }) => Effect.succeed(bodies[payload.i]!))
      .handle("created", () => Effect.succeed(bodies[0]!))
      .handle("either", () => Effect.succeed({ b: 7 }))
      .handle("empty", () => Effect.void)
    if (!compiled) return built
    const wrapped = compiledSuccess(built)
    wrappedNames.splice(0, wrappedNames.length, ...Chunk.toReadonlyArray(wrapped.handlers).filter((item, i) => item.handler !== Chunk.unsafeGet(built.handlers, i).handler).map((item) => item.endpoint.name))
    return wrapped
  })
const wrappedNames: Array<string> = []
const web = (compiled: boolean) =>
  HttpApiBuilder.toWebHandler(Layer.mergeAll(HttpApiBuilder.api(Api).pipe(Layer.provide(handlers(compiled))), HttpServer.layerContext))

const answer = async (h: ReturnType<typeof web>, path: string, body?: unknown) => {
  const res = await h.handler(new Request(`http://x${path}`, body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }))
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() }
}

const line = fc.record({ amount: fc.bigInt(), label: fc.option(fc.string(), { nil: null }) }).map((l) => new Line(l))
const body: fc.Arbitrary<Body> = fc.record(
  {
    code: fc.constant("success" as const),
    at: fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => DateTime.makeUnsafe(ms)),
    status: fc.constantFrom("open" as const, "paid" as const),
    note: fc.string(),
    lines: fc.array(line, { maxLength: 4 })
  },
  { requiredKeys: ["code", "at", "status", "lines"] }
)

describe("compiled success encoding", () => {
  it("answers byte for byte as HttpApiBuilder's own encoding: body, status, content type (property)", async () => {
    const plain = web(false)
    const fast = web(true)
    try {
      await fc.assert(
        fc.asyncProperty(body, async (b) => {
          bodies[0] = b
          const [x, y] = [await answer(plain, "/body", { i: 0 }), await answer(fast, "/body", { i: 0 })]
          expect(y).toEqual(x)
          expect(x.status).toBe(200)
          expect(JSON.parse(y.text)).toEqual(Schema.encodeSync(Body)(b))
        }),
        { numRuns: 150 }
      )
      for (const path of ["/created", "/either", "/empty"]) {
        const [x, y] = [await answer(plain, path), await answer(fast, path)]
        expect(y).toEqual(x)
      }
      // the JSON bodies went through the compiled encoder; the union and the empty one did not
      expect(wrappedNames).toEqual(["body", "created"])
      expect((await answer(fast, "/created")).status).toBe(201)
      expect((await answer(fast, "/either")).status).toBe(202)
      expect((await answer(fast, "/empty")).status).toBe(204)
    } finally {
      await plain.dispose()
      await fast.dispose()
    }
  })

  it("a value the schema rejects is never answered as success", async () => {
    const fast = web(true)
    try {
      bodies[1] = { code: "success", at: DateTime.makeUnsafe(0), status: "closed", lines: [] } as unknown as Body
      const r = await answer(fast, "/body", { i: 1 })
      expect(r.status).toBeGreaterThanOrEqual(400)
      expect(r.text).not.toContain("closed")
    } finally {
      await fast.dispose()
    }
  })
})
