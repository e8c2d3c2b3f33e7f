// The operations tests (pnpm test:ops) put the server behind Debian's nginx with a self-signed
// certificate made by openssl: install them when missing (root + apt, as on CI). Only the binary
// is used: the tests run nginx as their own child process with a configuration in a temporary
// directory, never the system's service or /etc/nginx.
//
// Like ensure-chromium.mjs, the install survives an earlier apt run cut off midway ("dpkg was
// interrupted") or still holding the lock, and tries again before giving up.
import { execSync } from "node:child_process"
import { existsSync, rmSync, writeFileSync } from "node:fs"

const nginx = process.env.NGINX_PATH ?? "/usr/sbin/nginx"
const openssl = "/usr/bin/openssl"
const ready = () => existsSync(nginx) && existsSync(openssl)
const run = (command) =>
  execSync(command, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } })
const lock = "-o DPkg::Lock::Timeout=300"

if (!ready()) {
  console.log("Installing Debian's nginx-light and openssl for the operations tests…")
  let lastError
  for (let attempt = 1; attempt <= 3 && !ready(); attempt++) {
    try {
      run(`dpkg --configure -a || true`)
      run(`apt-get ${lock} update -qq`)
      // the package's own service is not wanted (the tests start nginx themselves, and a system
      // nginx would hold port 80): a policy-rc.d refusing every start keeps the install from
      // launching it; removed again after, unless one was there before
      const policy = "/usr/sbin/policy-rc.d"
      const ours = !existsSync(policy)
      if (ours) writeFileSync(policy, "#!/bin/sh\nexit 101\n", { mode: 0o755 })
      try {
        run(
          `apt-get ${lock} install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold nginx-light openssl`
        )
      } finally {
        if (ours) rmSync(policy, { force: true })
      }
    } catch (error) {
      lastError = error
      console.error(
        `nginx-light / openssl install attempt ${attempt} failed; ${attempt < 3 ? "retrying" : "giving up"}`
      )
      if (attempt < 3) run("sleep 5")
    }
  }
  if (!ready()) throw lastError ?? new Error(`nginx (${nginx}) or openssl (${openssl}) is missing after installing`)
}
