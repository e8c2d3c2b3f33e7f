/**
 * Compiled encoders and decoders: `Schema.encodeSync` and `Schema.decodeUnknownSync` without the
 * `ParseResult` machinery on the hot path.
 *
 * Storage and the outbox encode every record and event the engine writes. `Schema.encode` builds
 * an `Either` and an issue tree per field even when everything is valid, which made encoding the
 * largest single cost of a renewal. {@link encoder} walks the schema's AST once and returns a
 * plain function that checks the same things (types, literals, refinements, class instances)
 * and builds the same encoded value. Whenever it meets a value it cannot vouch for, or a schema
 * node it does not know, it hands the whole value to `Schema.encodeSync`, so a bad value fails
 * with exactly the `ParseError` it always did. {@link decoder} is the mirror for reads (stored
 * rows, after `JSON.parse`). The equivalence is a property test over every stored entity, both
 * ways (`test/Codec.test.ts`).
 *
 * @since 0.1.0
 */
import { Either, Option, ParseResult, Schema, SchemaAST as AST } from "effect"

/** Thrown inside a compiled encoder: "not sure", fall back to `Schema.encodeSync`. */
const FALLBACK: unique symbol = Symbol("recur/Codec/fallback")
const fallback = (): never => {
  throw FALLBACK
}

type Encode = (u: unknown) => unknown

const isRecord = (u: unknown): u is Record<string | symbol, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const compiled = new WeakMap<AST.AST, Encode>()

const compile = (ast: AST.AST): Encode => {
  const known = compiled.get(ast)
  if (known) return known
  // a placeholder breaks cycles (suspended schemas): it calls the finished encoder
  let done: Encode | undefined
  compiled.set(ast, (u) => done!(u))
  done = build(ast)
  compiled.set(ast, done)
  return done
}

const viaSchema = (ast: AST.AST): Encode => {
  const encode = ParseResult.encodeUnknownEither(Schema.make(ast))
  return (u) => {
    const r = encode(u)
    return Either.isRight(r) ? r.right : fallback()
  }
}

/** A quick type-side test that rules a union member out, where one is cheap. */
const guardOf = (ast: AST.AST): ((u: unknown) => boolean) | undefined => {
  switch (ast._tag) {
    case "Literal":
      return (u) => u === ast.literal
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "BigIntKeyword":
      return (u) => typeof u === "bigint"
    case "UndefinedKeyword":
      return (u) => u === undefined
    case "Declaration":
      return Schema.is(Schema.make(ast))
    case "Refinement":
      return guardOf(ast.from)
    case "Transformation":
      return guardOf(ast.to)
    case "TypeLiteral":
      return isRecord
    default:
      return undefined
  }
}

/**
 * The nodes that read the same both ways (unions, arrays, structs, records, suspended schemas):
 * each child goes through `compile` of the direction at hand; a union member is skipped when
 * `guard` rules it out; anything else goes through `via` (the schema's own parser).
 */
const structural = (
  ast: AST.AST,
  direction: { readonly compile: (ast: AST.AST) => Encode; readonly guard: (ast: AST.AST) => ((u: unknown) => boolean) | undefined; readonly via: (ast: AST.AST) => Encode }
): Encode => {
  const { compile: child, guard, via } = direction
  switch (ast._tag) {
    case "Union": {
      // members are told apart by a cheap guard where there is one (no exception on the way)
      const members = ast.types.map((t) => ({ guard: guard(t), run: child(t) }))
      return (u) => {
        for (const m of members) {
          if (m.guard !== undefined && !m.guard(u)) continue
          try {
            return m.run(u)
          } catch (e) {
            if (e !== FALLBACK) throw e
          }
        }
        return fallback()
      }
    }
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return via(ast)
      const item = child(ast.rest[0]!.type)
      return (u) => (Array.isArray(u) ? u.map(item) : fallback())
    }
    case "TypeLiteral": {
      if (ast.indexSignatures.length === 0) {
        const props = ast.propertySignatures.map((ps) => ({ name: ps.name, optional: ps.isOptional, run: child(ps.type) }))
        return (u) => {
          if (!isRecord(u)) return fallback()
          // only the declared keys (Schema's default `onExcessProperty: "ignore"`); a missing key
          // is skipped when optional, else read as undefined (Effect's default)
          const out: Record<PropertyKey, unknown> = {}
          for (const p of props) {
            if (p.optional && !Object.prototype.hasOwnProperty.call(u, p.name)) continue
            out[p.name] = p.run(u[p.name])
          }
          return out
        }
      }
      const [sig] = ast.indexSignatures
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 1 && sig!.parameter._tag === "StringKeyword") {
        const value = child(sig!.type)
        return (u) => {
          if (!isRecord(u)) return fallback()
          const out: Record<string, unknown> = {}
          for (const k of Object.keys(u)) out[k] = value(u[k])
          return out
        }
      }
      return via(ast)
    }
    case "Suspend": {
      let inner: Encode | undefined
      return (u) => (inner ??= child(ast.f()))(u)
    }
    default:
      return via(ast)
  }
}

const build = (ast: AST.AST): Encode => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => (typeof u === "string" ? u : fallback())
    case "NumberKeyword":
      return (u) => (typeof u === "number" ? u : fallback())
    case "BooleanKeyword":
      return (u) => (typeof u === "boolean" ? u : fallback())
    case "BigIntKeyword":
      return (u) => (typeof u === "bigint" ? u : fallback())
    case "Literal":
      return (u) => (u === ast.literal ? u : fallback())
    case "UndefinedKeyword":
      return (u) => (u === undefined ? u : fallback())
    case "UnknownKeyword":
    case "AnyKeyword":
      return (u) => u
    case "Refinement": {
      const from = compile(ast.from)
      return (u) => {
        const encoded = from(u)
        return Option.isNone(ast.filter(u, AST.defaultParseOption, ast)) ? encoded : fallback()
      }
    }
    case "Declaration": {
      // class instances, DateTime…: encoding is the identity once the value is one of them
      const is = Schema.is(Schema.make(ast))
      return (u) => (is(u) ? u : fallback())
    }
    case "Transformation": {
      const to = compile(ast.to)
      const from = compile(ast.from)
      const t = ast.transformation
      if (t._tag === "ComposeTransformation") return (u) => from(to(u))
      if (t._tag !== "FinalTransformation") return viaSchema(ast)
      return (u) => {
        const r = t.encode(to(u), AST.defaultParseOption, ast, u)
        // synchronous transformations answer with an Either; anything else goes the long way
        return Either.isEither(r) ? (Either.isRight(r) ? from(r.right) : fallback()) : fallback()
      }
    }
    default:
      return structural(ast, { compile, guard: guardOf, via: viaSchema })
  }
}

/**
 * A synchronous encoder for `schema`, equal to `Schema.encodeSync(schema)` on every input:
 * the encoded value for a valid one, the same `ParseError` thrown for an invalid one. Compiled
 * once per schema.
 *
 * @example
 * const encodeTrade = Codec.encoder(Trade.Trade)
 * const json = JSON.stringify(encodeTrade(trade))
 * @since 0.1.0
 */
export const encoder = <A, I, R>(schema: Schema.Schema<A, I, R>): (a: A) => I => {
  const known = encoders.get(schema)
  if (known) return known as (a: A) => I
  const encode = withFallback(compile(schema.ast), ParseResult.encodeUnknownSync(schema as Schema.Schema<A, I, never>))
  encoders.set(schema, encode)
  return encode as (a: A) => I
}

/** The compiled function, and the schema's own on whatever it hands back as unsure. */
const withFallback = (fast: Encode, slow: Encode): Encode => (u) => {
  try {
    return fast(u)
  } catch (e) {
    if (e !== FALLBACK) throw e
    return slow(u)
  }
}

const encoders = new WeakMap<object, (a: any) => unknown>()

/**
 * The compiled encoder alone, without the fallback: throws on whatever it would hand to
 * `Schema.encodeSync`. For tests that check the fast path covers a schema.
 *
 * @internal
 */
export const compiledOnly = <A, I, R>(schema: Schema.Schema<A, I, R>): (a: A) => I => compile(schema.ast) as (a: A) => I

// ---------------------------------------------------------------------------------------------
// Decoders
// ---------------------------------------------------------------------------------------------

/** A quick encoded-side test that rules a union member out, where one is cheap. */
const encodedGuardOf = (ast: AST.AST): ((u: unknown) => boolean) | undefined => {
  switch (ast._tag) {
    case "Refinement":
      return encodedGuardOf(ast.from)
    case "Transformation":
      return encodedGuardOf(ast.from)
    case "Declaration":
      return undefined
    default:
      return guardOf(ast)
  }
}

const decoders = new WeakMap<AST.AST, Encode>()

const compileDecode = (ast: AST.AST): Encode => {
  const known = decoders.get(ast)
  if (known) return known
  let done: Encode | undefined
  decoders.set(ast, (u) => done!(u))
  done = buildDecode(ast)
  decoders.set(ast, done)
  return done
}

const viaSchemaDecode = (ast: AST.AST): Encode => {
  const decode = ParseResult.decodeUnknownEither(Schema.make(ast))
  return (u) => {
    const r = decode(u)
    return Either.isRight(r) ? r.right : fallback()
  }
}

const buildDecode = (ast: AST.AST): Encode => {
  switch (ast._tag) {
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "BigIntKeyword":
    case "Literal":
    case "UndefinedKeyword":
    case "UnknownKeyword":
    case "AnyKeyword":
      // the same checks both ways
      return compile(ast)
    case "Refinement": {
      const from = compileDecode(ast.from)
      return (u) => {
        const decoded = from(u)
        return Option.isNone(ast.filter(decoded, AST.defaultParseOption, ast)) ? decoded : fallback()
      }
    }
    case "Declaration": {
      // what reaches a declaration when decoding is already its type (a class instance built by
      // the transformation before it); anything else goes the long way
      const is = Schema.is(Schema.make(ast))
      return (u) => (is(u) ? u : fallback())
    }
    case "Transformation": {
      const to = compileDecode(ast.to)
      const from = compileDecode(ast.from)
      const t = ast.transformation
      if (t._tag === "ComposeTransformation") return (u) => to(from(u))
      if (t._tag !== "FinalTransformation") return viaSchemaDecode(ast)
      return (u) => {
        const r = t.decode(from(u), AST.defaultParseOption, ast, u)
        return Either.isEither(r) ? (Either.isRight(r) ? to(r.right) : fallback()) : fallback()
      }
    }
    default:
      return structural(ast, { compile: compileDecode, guard: encodedGuardOf, via: viaSchemaDecode })
  }
}

/**
 * A synchronous decoder for `schema`, equal to `Schema.decodeUnknownSync(schema)` on every input:
 * the decoded value for a valid one, the same `ParseError` thrown for an invalid one. Compiled
 * once per schema. Storage decodes every record it reads with it.
 *
 * @example
 * const decodeInvoice = Codec.decoder(Invoice.Invoice)
 * const invoice = decodeInvoice(JSON.parse(row.data))
 * @since 0.1.0
 */
export const decoder = <A, I, R>(schema: Schema.Schema<A, I, R>): (u: unknown) => A => {
  const known = decodersBySchema.get(schema)
  if (known) return known as (u: unknown) => A
  const decode = withFallback(compileDecode(schema.ast), ParseResult.decodeUnknownSync(schema as Schema.Schema<A, I, never>))
  decodersBySchema.set(schema, decode)
  return decode as (u: unknown) => A
}

const decodersBySchema = new WeakMap<object, (u: unknown) => unknown>()

/**
 * The compiled decoder alone, without the fallback. For tests.
 *
 * @internal
 */
export const compiledDecodeOnly = <A, I, R>(schema: Schema.Schema<A, I, R>): (u: unknown) => A => compileDecode(schema.ast) as (u: unknown) => A
