/**
 * The README's install sections as data: under `## Install`, each `### ` heading is one kind of
 * user, with its shell blocks (commands, run in order) and its files (` ```ts file=NAME `).
 * A command ending in `# serves URL` runs until that URL answers, then is stopped.
 */

export interface Kind {
  readonly title: string
  readonly files: ReadonlyArray<{ readonly name: string; readonly text: string }>
  readonly commands: ReadonlyArray<{ readonly line: string; readonly serves?: string }>
}

export const installSections = (readme: string): Array<Kind> => {
  const start = readme.indexOf("\n## Install")
  if (start < 0) throw new Error("the README has no ## Install section")
  const rest = readme.slice(start + 1)
  const end = rest.indexOf("\n## ", 3)
  const section = end < 0 ? rest : rest.slice(0, end)
  const kinds: Array<Kind> = []
  for (const part of section.split(/\n### /).slice(1)) {
    const title = part.slice(0, part.indexOf("\n")).trim()
    const files: Array<{ name: string; text: string }> = []
    const commands: Array<{ line: string; serves?: string }> = []
    for (const block of part.matchAll(/```([^\n]*)\n([\s\S]*?)```/g)) {
      const info = block[1] ?? ""
      const body = block[2] ?? ""
      const file = /file=(\S+)/.exec(info)?.[1]
      if (file) files.push({ name: file, text: body })
      else if (info.trim() === "sh") {
        for (const raw of body.split("\n")) {
          const line = raw.trim()
          if (!line || line.startsWith("#")) continue
          const serves = /#\s*serves\s+(\S+)\s*$/.exec(line)
          if (serves?.[1]) commands.push({ line: line.slice(0, serves.index).trim(), serves: serves[1] })
          else commands.push({ line: line.replace(/\s+#.*$/, "") })
        }
      }
    }
    kinds.push({ title, files, commands })
  }
  return kinds
}
