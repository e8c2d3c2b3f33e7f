/**
 * Every name a module exports, with its meanings (value, type, namespace), read by the
 * TypeScript checker — from a package's published declarations or from its sources — so the
 * two can be compared name by name, and a program can be written that touches each one.
 */
import ts from "typescript"

export interface Exported {
  /** `Proration.Outcome`: the path from the module's namespace. */
  readonly path: string
  readonly value: boolean
  readonly type: boolean
  /** Type parameters of the type meaning (0 when none). */
  readonly typeParameters: number
}

const typeParameterCount = (symbol: ts.Symbol): number => {
  for (const d of symbol.declarations ?? []) {
    if (
      (ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d) || ts.isClassDeclaration(d)) &&
      d.typeParameters !== undefined
    ) {
      // parameters with a default may be left out; the required ones may not
      return d.typeParameters.filter((p) => p.default === undefined).length
    }
  }
  return 0
}

/**
 * The exports of each given module specifier, resolved as `fromFile` (a file in the project
 * whose `tsconfig` options are `options`) would resolve them.
 */
export const exportsOf = (
  fromFile: string,
  specifiers: ReadonlyArray<string>,
  options: ts.CompilerOptions
): Map<string, Array<Exported>> => {
  const source = specifiers.map((s, i) => `import * as M${i} from ${JSON.stringify(s)}\nvoid M${i}\n`).join("")
  const host = ts.createCompilerHost(options)
  const read = host.readFile.bind(host)
  const exists = host.fileExists.bind(host)
  host.readFile = (f) => (f === fromFile ? source : read(f))
  host.fileExists = (f) => f === fromFile || exists(f)
  const program = ts.createProgram({ rootNames: [fromFile], options, host })
  const checker = program.getTypeChecker()
  const file = program.getSourceFile(fromFile)
  if (!file) throw new Error(`cannot read ${fromFile}`)
  const result = new Map<string, Array<Exported>>()
  file.statements.filter(ts.isImportDeclaration).forEach((statement, i) => {
    const specifier = specifiers[i] as string
    const moduleSymbol = checker.getSymbolAtLocation(statement.moduleSpecifier)
    if (!moduleSymbol) throw new Error(`${specifier} does not resolve to declarations`)
    const found: Array<Exported> = []
    const seen = new Set<ts.Symbol>()
    const walk = (container: ts.Symbol, prefix: string) => {
      for (const raw of checker.getExportsOfModule(container)) {
        const symbol = raw.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(raw) : raw
        const path = prefix ? `${prefix}.${raw.name}` : raw.name
        const flags = symbol.flags
        const namespace = (flags & (ts.SymbolFlags.ValueModule | ts.SymbolFlags.NamespaceModule)) !== 0
        found.push({
          path,
          value: (flags & ts.SymbolFlags.Value) !== 0,
          type: (flags & ts.SymbolFlags.Type) !== 0,
          typeParameters: typeParameterCount(symbol)
        })
        if (namespace && !seen.has(symbol)) {
          seen.add(symbol)
          walk(symbol, path)
        }
      }
    }
    walk(moduleSymbol, "")
    result.set(
      specifier,
      found.sort((a, b) => a.path.localeCompare(b.path))
    )
  })
  return result
}

/** A program that uses every export: each value read, each type named (with `any` arguments). */
export const touchProgram = (exportsBySpecifier: Map<string, Array<Exported>>): string => {
  const lines: Array<string> = []
  let n = 0
  ;[...exportsBySpecifier].forEach(([specifier, exported], i) => {
    lines.push(`import * as M${i} from ${JSON.stringify(specifier)}`)
    for (const e of exported) {
      const ref = `M${i}.${e.path}`
      if (e.value) lines.push(`export const v${n++} = ${ref}`)
      if (e.type) {
        const args = e.typeParameters > 0 ? `<${Array.from({ length: e.typeParameters }, () => "any").join(", ")}>` : ""
        lines.push(`export type T${n++} = ${ref}${args}`)
      }
    }
  })
  return `${lines.join("\n")}\n`
}

/** Diagnostics of a program, formatted (empty when it typechecks). */
export const diagnostics = (rootNames: ReadonlyArray<string>, options: ts.CompilerOptions): Array<string> => {
  const program = ts.createProgram({ rootNames, options })
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n")
    if (!d.file || d.start === undefined) return message
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start)
    return `${d.file.fileName}(${line + 1},${character + 1}): TS${d.code} ${message}`
  })
}

/** The options of a strict user project: no skipLibCheck, the checks a careful team turns on. */
export const strictOptions = (): ts.CompilerOptions => ({
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  // effect's own declarations name CryptoKey and JsonWebKey, PGlite's WebAssembly: the DOM library
  // declares them (without skipLibCheck, every project using effect needs it)
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
  types: ["node"],
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  skipLibCheck: false,
  noEmit: true
})
