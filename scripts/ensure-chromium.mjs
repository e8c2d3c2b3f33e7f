// Browser tests drive Debian's Chromium and read PDFs with poppler (pdftoppm, pdftotext): install
// them when missing (root + apt, as on CI).
//
// The install must survive a machine whose previous apt run was cut off ("dpkg was interrupted")
// or is still holding the lock: it finishes any half-configured packages first, waits for the
// lock rather than failing on it, and tries again before giving up.
import { execSync } from "node:child_process"
import { existsSync } from "node:fs"

const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const poppler = "/usr/bin/pdftoppm"
const ready = () => existsSync(path) && existsSync(poppler)
const run = (command) =>
  execSync(command, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } })
const lock = "-o DPkg::Lock::Timeout=300"

if (!ready()) {
  console.log("Installing Debian's chromium and poppler-utils for the browser tests…")
  let lastError
  for (let attempt = 1; attempt <= 3 && !ready(); attempt++) {
    try {
      // an earlier apt run killed midway leaves dpkg needing this before any install
      run(`dpkg --configure -a || true`)
      run(`apt-get ${lock} update -qq`)
      run(
        `apt-get ${lock} install -y -qq -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold chromium poppler-utils`
      )
    } catch (error) {
      lastError = error
      console.error(
        `chromium / poppler-utils install attempt ${attempt} failed; ${attempt < 3 ? "retrying" : "giving up"}`
      )
      if (attempt < 3) run("sleep 5")
    }
  }
  if (!ready()) throw lastError ?? new Error(`chromium (${path}) or pdftoppm (${poppler}) is missing after installing`)
}
