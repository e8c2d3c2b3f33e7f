// A mount's prefix and the path below it, shared by `Mount` and the framework glue.

/** `/billing` from `billing/`, `/billing/` or `/billing`; "" for none. */
export const normalisePrefix = (prefix: string | undefined): string => {
  if (prefix === undefined || prefix === "" || prefix === "/") return ""
  const withSlash = prefix.startsWith("/") ? prefix : `/${prefix}`
  return withSlash.replace(/\/+$/, "")
}

/** The path below the prefix, or undefined when the path is not under it. */
export const below = (prefix: string, path: string): string | undefined => {
  if (prefix === "") return path
  if (path === prefix) return "/"
  if (path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`)) return path.slice(prefix.length)
  return undefined
}
