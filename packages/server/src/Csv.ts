/**
 * CSV as RFC 4180 writes it (comma-separated, CRLF line ends, a field quoted when it holds a
 * comma, a quote, CR or LF, quotes doubled inside), with one guard for spreadsheets: a text cell
 * starting with `=`, `+`, `-`, `@`, a tab or a CR is prefixed with `'` so Excel, LibreOffice and
 * Google Sheets show it as text instead of running it as a formula (CSV injection). Numbers the
 * export itself formats (amounts) are written as they are, a negative amount's `-` included.
 *
 * @since 0.1.0
 */

/**
 * A cell: text (guarded against formulas), or a number the export formatted itself (written as
 * is). `null` and `undefined` are an empty cell.
 *
 * @since 0.1.0
 */
export type Cell = string | number | bigint | boolean | null | undefined | { readonly raw: string }

const FORMULA = /^[=+\-@\t\r]/

/**
 * A cell written as is: a number the export formatted from integers (`-12.50`), never text a
 * customer or a merchant typed.
 *
 * @since 0.1.0
 */
export const raw = (text: string): { readonly raw: string } => ({ raw: text })

/**
 * One field, quoted when it must be; text starting like a formula gets a leading `'`.
 *
 * @example
 * field("Acme, Inc.") // "\"Acme, Inc.\""
 * field("=HYPERLINK(\"x\")") // "\"'=HYPERLINK(\"\"x\"\")\""
 * field(raw("-5.00")) // "-5.00"
 * @since 0.1.0
 */
export const field = (cell: Cell): string => {
  if (cell === null || cell === undefined) return ""
  const text =
    typeof cell === "object"
      ? cell.raw
      : typeof cell === "string"
        ? FORMULA.test(cell)
          ? `'${cell}`
          : cell
        : String(cell)
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/**
 * One record: its fields joined by commas, ended by CRLF.
 *
 * @since 0.1.0
 */
export const row = (cells: ReadonlyArray<Cell>): string => `${cells.map(field).join(",")}\r\n`

/**
 * Reads CSV text back into records (RFC 4180: quoted fields may hold commas, quotes and line
 * breaks). For tests and tools; the export never needs it.
 *
 * @since 0.1.0
 */
export const parse = (text: string): Array<Array<string>> => {
  const records: Array<Array<string>> = []
  let record: Array<string> = []
  let value = ""
  let quoted = false
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          value += '"'
          i += 2
          continue
        }
        quoted = false
      } else value += c
      i++
      continue
    }
    if (c === '"') quoted = true
    else if (c === ",") {
      record.push(value)
      value = ""
    } else if (c === "\r" && text[i + 1] === "\n") {
      record.push(value)
      records.push(record)
      record = []
      value = ""
      i++
    } else if (c === "\n") {
      record.push(value)
      records.push(record)
      record = []
      value = ""
    } else value += c
    i++
  }
  if (value !== "" || record.length > 0) {
    record.push(value)
    records.push(record)
  }
  return records
}
