import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import ts from "typescript"

// The layout of core's sources (docs/engine.md, "Concept folders"): each concept in its folder,
// no module too long to read in one sitting, none that most of the others depend on, no import
// circle at run time, and one subpath export per published namespace.

const src = join(import.meta.dirname, "..", "src")
const files = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((f) => {
    const path = join(dir, f)
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : []
  })
const sources = files(src)
const name = (file: string) => relative(src, file)

/** Most lines a module of core may have. */
const MAX_LINES = 600

/** Service modules still over the limit, to be split by operation; each may not grow past its ceiling. */
const awaitingSplit: Record<string, number> = {}

/** A module's relative imports: `runtime` excludes `import type` and imports of types only. */
const importsOf = (file: string, text = readFileSync(file, "utf8")) => {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest)
  const all = new Set<string>()
  const runtime = new Set<string>()
  for (const s of sf.statements) {
    if (!(ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) || s.moduleSpecifier === undefined) continue
    const spec = (s.moduleSpecifier as ts.StringLiteral).text
    if (!spec.startsWith(".")) continue
    const target = resolve(dirname(file), spec.replace(/\.js$/, ".ts"))
    all.add(target)
    const typeOnly = ts.isImportDeclaration(s)
      ? s.importClause === undefined
        ? false
        : s.importClause.isTypeOnly ||
          (s.importClause.name === undefined &&
            s.importClause.namedBindings !== undefined &&
            ts.isNamedImports(s.importClause.namedBindings) &&
            s.importClause.namedBindings.elements.every((e) => e.isTypeOnly))
      : s.isTypeOnly
    if (!typeOnly) runtime.add(target)
  }
  return { all, runtime }
}
const graph = new Map(sources.map((f) => [f, importsOf(f)]))

/** The namespaces an index.ts publishes, following `export * from "./folder/index.js"` into folders. */
const namespacesIn = (dir: string, file = "index.ts"): ReadonlyArray<readonly [string, string]> =>
  [...readFileSync(join(src, dir, file), "utf8").matchAll(/export \*(?: as (\w+))? from "\.\/([^"]+)\.js"/g)].flatMap(
    ([, n, path]) =>
      n === undefined
        ? namespacesIn(join(dir, dirname(path!)), `${path!.split("/").pop()}.ts`)
        : [[n, join(dir, path!)] as const]
  )

describe("core's layout", () => {
  it(`no module is over ${MAX_LINES} lines, and those awaiting a split do not grow`, () => {
    const over = sources.flatMap((f) => {
      const lines = readFileSync(f, "utf8").split("\n").length
      const limit = awaitingSplit[name(f)] ?? MAX_LINES
      return lines > limit ? [`${name(f)}: ${lines} lines (at most ${limit})`] : []
    })
    expect(over).toEqual([])
    for (const f of Object.keys(awaitingSplit)) expect(sources.map(name)).toContain(f)
  })

  it("no module is imported by more than half of the others", () => {
    const fanIn = new Map<string, number>()
    for (const { all } of graph.values()) for (const t of all) fanIn.set(t, (fanIn.get(t) ?? 0) + 1)
    const crowded = [...fanIn]
      .filter(([, n]) => n > (sources.length - 1) / 2)
      .map(([f, n]) => `${name(f)}: ${n} of ${sources.length - 1}`)
    expect(crowded).toEqual([])
    expect(fanIn.size).toBeGreaterThan(sources.length / 2)
  })

  it("no import circle at run time", () => {
    const circles: Array<string> = []
    const state = new Map<string, "open" | "done">()
    const visit = (f: string, path: ReadonlyArray<string>) => {
      if (state.get(f) === "done") return
      if (state.get(f) === "open") {
        circles.push([...path.slice(path.indexOf(f)), f].map(name).join(" -> "))
        return
      }
      state.set(f, "open")
      for (const t of graph.get(f)?.runtime ?? []) if (graph.has(t)) visit(t, [...path, f])
      state.set(f, "done")
    }
    for (const f of sources) visit(f, [])
    expect(circles).toEqual([])
  })

  it("tells imports of types only from imports used at run time", () => {
    const sample = [
      `import type { A } from "./a.js"`,
      `import { type B } from "./b.js"`,
      `import { C, type D } from "./c.js"`,
      `import * as E from "./e.js"`,
      `export type { F } from "./f.js"`
    ].join("\n")
    const { all, runtime } = importsOf("/x/m.ts", sample)
    expect([...all].map((f) => relative("/x", f))).toEqual(["a.ts", "b.ts", "c.ts", "e.ts", "f.ts"])
    expect([...runtime].map((f) => relative("/x", f))).toEqual(["c.ts", "e.ts"])
  })

  it("index.ts publishes each concept folder through the folder's index.ts, and nothing else", () => {
    const root = readFileSync(join(src, "index.ts"), "utf8")
    const folders = readdirSync(src).filter((f) => statSync(join(src, f)).isDirectory())
    const published = [...root.matchAll(/^export \* from "\.\/(\w+)\/index\.js"$/gm)].map(([, f]) => f)
    expect(published.sort()).toEqual(folders.sort())
    expect(
      root
        .replace(/\/\*\*[\s\S]*?\*\//, "")
        .trim()
        .split("\n").length
    ).toBe(folders.length)
    for (const f of folders) {
      const index = readFileSync(join(src, f, "index.ts"), "utf8")
      expect(index.startsWith(`/**\n * \`${f}/\``), `${f}/index.ts opens with what the folder holds`).toBe(true)
      for (const [, path] of index.matchAll(/from "([^"]+)"/g)) expect(path).toMatch(/^\.\/\w+\.js$/)
    }
  })

  it("modules import each other, never a folder's index.ts (which is for the package's users)", () => {
    const through = sources.flatMap((f) =>
      [...graph.get(f)!.all]
        .filter((t) => t.endsWith(`${"/"}index.ts`) && name(f) !== "index.ts")
        .map((t) => `${name(f)} -> ${name(t)}`)
    )
    expect(through).toEqual([])
  })

  it("package.json exports each namespace of index.ts by its name, from its folder", () => {
    const pkg = JSON.parse(readFileSync(join(src, "..", "package.json"), "utf8"))
    const namespaces = namespacesIn("")
    expect(namespaces.length).toBeGreaterThan(60)
    for (const exportsMap of [pkg.exports, pkg.publishConfig.exports]) {
      expect(Object.keys(exportsMap).sort()).toEqual([".", ...namespaces.map(([n]) => `./${n}`)].sort())
      for (const [n, path] of namespaces) expect(exportsMap[`./${n}`].import).toBe(`./dist/${path}.js`)
    }
    for (const [n, path] of namespaces) expect(pkg.exports[`./${n}`].source).toBe(`./src/${path}.ts`)
  })
})
