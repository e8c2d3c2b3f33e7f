// Browser tests drive Debian's Chromium: install it when missing (root + apt, as on CI).
//
// The install must survive a machine whose previous apt run was cut off ("dpkg was interrupted")
// or is still holding the lock: it finishes any half-configured packages first, waits for the
// lock rather than failing on it, and tries again before giving up.
import { execSync } from "node:child_process"
import { existsSync } from "node:fs"

const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const run = (command) =>
  execSync(command, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } })
const lock = "-o DPkg::Lock::Timeout=300"

if (!existsSync(path)) {
  console.log("Installing Debian's chromium for the browser tests…")
  let lastError
  for (let attempt = 1; attempt <= 3 && !existsSync(path); attempt++) {
    try {
      // an earlier apt run killed midway leaves dpkg needing this before any install
      run(`dpkg --configure -a || true`)
      run(`apt-get ${lock} update -qq`)
      run(
        `apt-get ${lock} install -y -qq -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold chromium`
      )
    } catch (error) {
      lastError = error
      console.error(`chromium install attempt ${attempt} failed; ${attempt < 3 ? "retrying" : "giving up"}`)
      if (attempt < 3) run("sleep 5")
    }
  }
  if (!existsSync(path)) throw lastError ?? new Error(`chromium is not at ${path} after installing`)
}
