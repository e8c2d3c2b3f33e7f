import { SandboxGateway } from "@recur/payment-sandbox"
import { PaymentGatewayContract } from "../src/index.js"

// The PaymentGateway contract, run against the sandbox adapter (its own cards are tested in
// @recur/payment-sandbox; the contract lives here, beside the suite, to keep the packages acyclic).
PaymentGatewayContract.suite("sandbox", SandboxGateway.layer(), {
  succeed: "4242424242424242",
  decline: "4000000000000002",
  insufficient: "4000000000009995"
})
