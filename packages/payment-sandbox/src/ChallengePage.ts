/**
 * The sandbox's 3-D Secure test challenge, as the gateway's own challenge page
 * (`Ports.ChallengePage`): the host serves it where the sandbox's `redirect_url`s point
 * (`challengeBaseUrl`, `/sandbox/3ds` by default); the payer approves or fails the
 * authentication of a charge or of a card set-up.
 *
 * @since 0.1.0
 */
import { Ports } from "@recur/core"
import { Effect } from "effect"
import type { Controls } from "./SandboxGateway.js"

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** Card set-ups are challenged under their own ids (`seti_sandbox_…`); charges under their trade's. */
const isSetup = (challengeId: string) => challengeId.startsWith("seti_sandbox_")

/**
 * The challenge page over the sandbox's controls: its form posts `approve=1` (complete the
 * authentication) or `approve=0` (fail it) to the page's own address.
 *
 * @since 0.1.0
 */
export const make = (
  controls: Pick<Controls, "completeChallenge" | "completeSetupChallenge">
): Ports.ChallengePage => ({
  show: (challengeId) =>
    Effect.succeed({
      title: "3-D Secure",
      html: `<main><h1>3-D Secure test challenge</h1><p>Sandbox: approve or fail the authentication of trade <code>${esc(challengeId)}</code>.</p>
<form method="post" action="${esc(challengeId)}"><input type="hidden" name="approve" value="1"><button type="submit">Complete authentication</button></form>
<form method="post" action="${esc(challengeId)}"><input type="hidden" name="approve" value="0"><button type="submit" style="background:#8a1111">Fail authentication</button></form></main>`
    }),
  answer: (challengeId, form) =>
    Effect.gen(function* () {
      const approve = form.approve === "1"
      if (isSetup(challengeId)) {
        // a card set-up's challenge: answered, the cardholder goes back where the set-up said
        const back = yield* controls.completeSetupChallenge(challengeId, approve)
        return back === undefined
          ? Ports.ChallengeAnswer.Unknown({
              content: { title: "Not found", html: "<main><h1>No such card set-up.</h1></main>" }
            })
          : Ports.ChallengeAnswer.ReturnTo({ url: back })
      }
      // a charge's: its outcome is decided now (no-op when it was not waiting); the engine asks next
      yield* controls.completeChallenge(challengeId, approve)
      return Ports.ChallengeAnswer.Charge({ trade_id: challengeId })
    })
})
