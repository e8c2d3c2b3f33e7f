// Browser tests drive Debian's Chromium: install it when missing (root + apt, as on CI).
import { execSync } from "node:child_process"
import { existsSync } from "node:fs"

const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
if (!existsSync(path)) {
  console.log("Installing Debian's chromium for the browser tests…")
  execSync("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium", { stdio: "inherit" })
}
