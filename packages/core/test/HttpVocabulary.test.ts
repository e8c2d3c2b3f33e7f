import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"

// Core speaks the domain: its commands take ids, amounts and literal unions, its errors carry ids,
// amounts and states. The merchant API's contract — routes, request bodies and the paths of their
// fields, HTTP statuses — lives in `@recur/contract`, and the HTTP server in `@recur/http`. This
// guard reads every source file of core (code, string literals and comments apart, with
// TypeScript's parser) and fails on HTTP vocabulary, with its file, line and the words.
// The few places where core must speak of HTTP — the outbound webhook delivery, which judges a
// merchant endpoint's answer by its status, and the log redaction, which recognises URL shapes —
// are listed in `allowed` below, each with its reason and its exact words; an entry that no longer
// matches anything fails too, so the list cannot go stale.

const src = join(import.meta.dirname, "..", "src")
const files = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((f) => {
    const path = join(dir, f)
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : []
  })

/** Which part of a file a rule reads. */
type Part = "code" | "literals" | "regexes" | "comments"

interface Rule {
  readonly name: string
  readonly pattern: RegExp
  readonly in: ReadonlyArray<Part>
}

/** An HTTP status a sentence gives (the numbers HTTP defines, 1xx to 5xx). */
const STATUS = String.raw`[1-5]\d\d`

const rules: ReadonlyArray<Rule> = [
  {
    name: "a route of the merchant API",
    pattern: /\/api\/v\d|\\\/api\\\/v/g,
    in: ["code", "literals", "regexes", "comments"]
  },
  {
    name: "an HTTP method and path",
    pattern: /\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \/[\w{}<>:./-]*/g,
    in: ["code", "literals", "comments"]
  },
  {
    name: "an HTTP library or the adapters",
    pattern:
      /@effect\/platform[\w-]*|effect\/unstable\/http\w*|@recur\/(http|contract|server)["']|\bHttp(Api\w*|Router|Server\w*|Client\w*|Body|Headers|Method|App|Middleware)\b/g,
    in: ["code", "literals", "comments"]
  },
  {
    name: "a reply's HTTP status field",
    pattern: /\b(httpStatus|statusCode|HttpStatus)\b/g,
    in: ["code", "literals", "comments"]
  },
  {
    name: "a request path (a field inside a body's list)",
    pattern: /\b[a-z][a-z_]*\[(\d+\]|\$\{)(\.[a-z_]+)*/g,
    in: ["literals", "comments"]
  },
  {
    name: "an HTTP status compared or set in code",
    pattern: new RegExp(
      String.raw`\b\w*(status|Status|code)\s*(===|!==|==|!=|>=|<=|>|<|:)\s*${STATUS}\b|\b${STATUS}\s*(===|!==|==|!=|>=|<=|>|<)\s*[\w.]*(status|Status)\b`,
      "g"
    ),
    in: ["code"]
  },
  {
    name: "an HTTP status in words",
    pattern: new RegExp(
      [
        String.raw`\(${STATUS}(\)|\s+on\b|\s+\x60?[a-z]+_)`, // "(409)", "(400 on `card_number`)", "(409 state_conflict"
        String.raw`\b(answers?|answered|is|a|an|never a|not a|with a|returns?|gets?)\s+${STATUS}\b`, // "answers 503", "is 409", "a 409"
        String.raw`\b${STATUS}\s+(answer|response|reply|status|[A-Z][a-z]+\b)`, // "a 410 answer", "410 Gone"
        String.raw`\b${STATUS}\s+\x60?[a-z]+_[a-z_]+\b` // "409 state_conflict"
      ].join("|"),
      "g"
    ),
    in: ["literals", "comments"]
  }
]

/**
 * Where core speaks of HTTP on purpose. Each entry: the file, the rule, the exact words matched,
 * and why they belong in core.
 */
const allowed: ReadonlyArray<{
  readonly file: string
  readonly rule: string
  readonly match: string
  readonly why: string
}> = [
  {
    file: "webhooks/WebhookDelivery.ts",
    rule: "an HTTP status compared or set in code",
    match: "status >= 200",
    why: "outbound webhooks: a merchant endpoint's answer counts as delivered when its status is 2xx (the delivery rule core owns)"
  },
  {
    file: "webhooks/WebhookDispatch.ts",
    rule: "an HTTP status compared or set in code",
    match: "status === 410",
    why: "outbound webhooks: an endpoint that answers 410 Gone is disabled (the endpoint machine's `gone` trigger)"
  },
  {
    file: "webhooks/WebhookDispatch.ts",
    rule: "an HTTP status in words",
    match: "410 answer",
    why: "outbound webhooks: documents the rule above"
  },
  {
    file: "webhooks/WebhookMachines.ts",
    rule: "an HTTP status in words",
    match: "answered 410",
    why: "outbound webhooks: the endpoint machine's descriptions of its `gone` trigger (docs/states.md is generated from them)"
  },
  {
    file: "webhooks/WebhookDelivery.ts",
    rule: "an HTTP status compared or set in code",
    match: "status < 300",
    why: "outbound webhooks: as above"
  },
  ...["tax_rates[${", "tax_rates[${", "tax_rates[2].percentage"].map((match) => ({
    file: "taxes/TaxRates.ts",
    rule: "a request path (a field inside a body's list)",
    match,
    why: "not the API's: a configured tax table (the server's RECUR_TAX_RATES, the facade's taxRates) names the entry at fault"
  })),
  {
    file: "kernel/Redaction.ts",
    rule: "a route of the merchant API",
    match: String.raw`\/api\/v`,
    why: "log redaction: the signed-link pattern must leave the merchant API's own unsigned invoice route alone"
  }
]

/**
 * A file's text split into its code, its string literals, its regular expressions and its
 * comments: each the file's length with the rest blanked, so offsets and lines stay.
 */
const partsOf = (text: string): Record<Part, string> => {
  const source = ts.createSourceFile("file.ts", text, ts.ScriptTarget.Latest, true)
  const literals: Array<readonly [number, number, Part]> = []
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    )
      literals.push([node.getStart(source), node.getEnd(), "literals"])
    else if (ts.isRegularExpressionLiteral(node)) literals.push([node.getStart(source), node.getEnd(), "regexes"])
    ts.forEachChild(node, visit)
  }
  visit(source)
  literals.sort((a, b) => a[0] - b[0])
  const blank = (s: string) => s.replace(/[^\n]/g, " ")
  const out: Record<Part, Array<string>> = { code: [], literals: [], regexes: [], comments: [] }
  const put = (part: Part, s: string) => {
    for (const p of ["code", "literals", "regexes", "comments"] as const) out[p].push(p === part ? s : blank(s))
  }
  let i = 0
  let next = 0
  while (i < text.length) {
    const lit = literals[next]
    if (lit !== undefined && i === lit[0]) {
      put(lit[2], text.slice(lit[0], lit[1]))
      i = lit[1]
      next++
    } else if (text.startsWith("//", i) || text.startsWith("/*", i)) {
      const end = text.startsWith("//", i)
        ? (text.indexOf("\n", i) + 1 || text.length + 1) - 1
        : text.indexOf("*/", i + 2) + 2
      put("comments", text.slice(i, end))
      i = end
    } else {
      const stop = Math.min(
        lit?.[0] ?? text.length,
        ...["//", "/*"].map((m) => (text.indexOf(m, i) < 0 ? text.length : text.indexOf(m, i)))
      )
      put("code", text.slice(i, Math.max(stop, i + 1)))
      i = Math.max(stop, i + 1)
    }
  }
  return {
    code: out.code.join(""),
    literals: out.literals.join(""),
    regexes: out.regexes.join(""),
    comments: out.comments.join("")
  }
}

interface Found {
  readonly file: string
  readonly line: number
  readonly rule: string
  readonly match: string
}

const vocabularyIn = (file: string, text: string): ReadonlyArray<Found> => {
  const parts = partsOf(text)
  const found: Array<Found> = []
  for (const rule of rules) {
    for (const part of rule.in) {
      for (const m of parts[part].matchAll(rule.pattern)) {
        const line = text.slice(0, m.index).split("\n").length
        found.push({ file, line, rule: rule.name, match: m[0].trim() })
      }
    }
  }
  return found
}

describe("HTTP vocabulary", () => {
  it("no source file of core names a route, a request path, an HTTP status or an HTTP library", () => {
    const found = files(src).flatMap((f) => vocabularyIn(relative(src, f), readFileSync(f, "utf8")))
    const isAllowed = (f: Found) => allowed.some((a) => a.file === f.file && a.rule === f.rule && a.match === f.match)
    expect(found.filter((f) => !isAllowed(f)).map((f) => `${f.file}:${f.line}: ${f.rule}: ${f.match}`)).toEqual([])
    // every exception still has something to excuse
    expect(
      allowed
        .filter((a) => !found.some((f) => a.file === f.file && a.rule === f.rule && a.match === f.match))
        .map((a) => `${a.file}: ${a.rule}: ${a.match}`)
    ).toEqual([])
  })

  it("each rule finds what it is about, in the part of a file it reads", () => {
    const sample = [
      "/**",
      " * The body of `POST /api/v1/session`; refused (409), the adapter answers 503.",
      " * A quantity is refused on `line_items[0].quantity`.",
      " */",
      'import { HttpApiEndpoint } from "effect/unstable/httpapi"',
      "const reply = { httpStatus: 404 }",
      // a template literal in the sample: the placeholder spelled in two pieces
      "if (reply.status === 409) fail(`records[$" + "{i}].usage_count`)",
      "const first = session.line_items[0]",
      'const note = "a 409 state_conflict"'
    ].join("\n")
    expect(vocabularyIn("sample.ts", sample).map((f) => `${f.line} ${f.rule}: ${f.match}`)).toEqual([
      "2 a route of the merchant API: /api/v1",
      "2 an HTTP method and path: POST /api/v1/session",
      "5 an HTTP library or the adapters: HttpApiEndpoint",
      "5 an HTTP library or the adapters: effect/unstable/httpapi",
      "6 a reply's HTTP status field: httpStatus",
      "7 a request path (a field inside a body's list): records[${",
      "3 a request path (a field inside a body's list): line_items[0].quantity",
      "6 an HTTP status compared or set in code: httpStatus: 404",
      "7 an HTTP status compared or set in code: status === 409",
      "9 an HTTP status in words: a 409",
      "2 an HTTP status in words: (409)",
      "2 an HTTP status in words: answers 503"
    ])
  })
})
