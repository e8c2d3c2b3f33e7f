/**
 * Checks on a parsed JSON request body that no schema makes: how deep it nests, how long its
 * strings are, and whether every string is well-formed UTF-16 (a lone surrogate cannot be
 * stored by PostgreSQL). Iterative, so a hostile nesting cannot overflow the stack.
 */

/** Deepest nesting of objects and arrays a request body may have. */
export const MAX_DEPTH = 32

/** Longest string (UTF-16 code units) any field may hold; the schemas set tighter ones. */
export const MAX_STRING_LENGTH = 5000

/** What is wrong with a body, and where (`param`: the field's path, e.g. `metadata.note`). */
export interface BodyProblem {
  readonly message: string
  readonly param?: string
}

const pathOf = (parent: string, key: string | number) =>
  typeof key === "number" ? `${parent}[${key}]` : parent === "" ? key : `${parent}.${key}`

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const stringProblem = (s: string, param: string): BodyProblem | undefined =>
  LONE_SURROGATE.test(s)
    ? { message: "Text must be well-formed Unicode (no unpaired surrogate).", ...(param ? { param } : {}) }
    : s.length > MAX_STRING_LENGTH
      ? { message: `Text is longer than ${MAX_STRING_LENGTH} characters.`, ...(param ? { param } : {}) }
      : undefined

/** The first problem found in `body` (a value `JSON.parse` returned), or undefined. */
export const inspect = (body: unknown): BodyProblem | undefined => {
  const stack: Array<readonly [unknown, string, number]> = [[body, "", 0]]
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!
    if (typeof value === "string") {
      const problem = stringProblem(value, path)
      if (problem) return problem
    } else if (value !== null && typeof value === "object") {
      if (depth >= MAX_DEPTH)
        return { message: `The request body nests deeper than ${MAX_DEPTH} levels.`, ...(path ? { param: path } : {}) }
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) stack.push([value[i], pathOf(path, i), depth + 1])
      } else
        for (const [k, v] of Object.entries(value)) {
          const keyProblem = stringProblem(k, pathOf(path, k.slice(0, 40)))
          if (keyProblem) return keyProblem
          stack.push([v, pathOf(path, k), depth + 1])
        }
    }
  }
  return undefined
}

/**
 * The path of the first field (or key) of `body` whose text holds a NUL character: `""` for the
 * body itself, undefined when none does. Iterative, depth-bounded as `inspect`.
 */
export const nulPathOf = (body: unknown): string | undefined => {
  const stack: Array<readonly [unknown, string, number]> = [[body, "", 0]]
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!
    if (typeof value === "string") {
      if (value.includes("\u0000")) return path
    } else if (value !== null && typeof value === "object" && depth < MAX_DEPTH) {
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) stack.push([value[i], pathOf(path, i), depth + 1])
      } else
        for (const [k, v] of Object.entries(value)) {
          if (k.includes("\u0000")) return pathOf(path, k.split("\u0000").join("").slice(0, 40))
          stack.push([v, pathOf(path, k), depth + 1])
        }
    }
  }
  return undefined
}
