import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect } from "effect"
import { TestConsole } from "effect/testing"
import { Redaction } from "../../src/index.js"

describe("Redaction", () => {
  it("replaces every secret's shape and keeps what identifies the request", () => {
    const sig = "kq3_Zx-9aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789a"
    const cases: ReadonlyArray<readonly [string, string]> = [
      [`GET /invoice/inv_01j/${sig}`, "GET /invoice/inv_01j/[redacted]"],
      [`/invoice/inv_01j/${sig}/pdf`, "/invoice/inv_01j/[redacted]/pdf"],
      [
        `http://localhost:4000/billing/portal/bps_01/${sig}/subscription/sub_1/cancel`,
        "http://localhost:4000/billing/portal/bps_01/[redacted]/subscription/sub_1/cancel"
      ],
      // an email's card-update link: the signature comes first, where it is redacted
      [
        `GET /portal/card/${sig}/mch_01/cus_01/inv_01/1775088000`,
        "GET /portal/card/[redacted]/mch_01/cus_01/inv_01/1775088000"
      ],
      ["/api/v1/invoice/inv_01j", "/api/v1/invoice/inv_01j"],
      ["/api/v1/customer-portal/session/bps_01/revoke", "/api/v1/customer-portal/session/bps_01/revoke"],
      ["secret pi_3Abc_secret_XyZ123 here", "secret pi_3Abc_secret_[redacted] here"],
      ["seti_1Q_secret_abc", "seti_1Q_secret_[redacted]"],
      [
        "/complete?payment_intent=pi_1&payment_intent_client_secret=abc&x=1",
        "/complete?payment_intent=pi_1&payment_intent_client_secret=[redacted]&x=1"
      ],
      ["https://hooks.example/h?token=abc123", "https://hooks.example/h?token=[redacted]"],
      ["key sk_test_AbC123xyz and rk_live_Q9", "key sk_test_[redacted] and rk_live_[redacted]"],
      ["whsec_aGVsbG8+d29ybGQ/PQ==", "whsec_[redacted]"],
      ['{"authorization":"Bearer sk_x.y"}', '{"authorization":"Bearer [redacted]"}'],
      ["nothing secret: cus_01 sub_01 /checkout/cs_01/pay", "nothing secret: cus_01 sub_01 /checkout/cs_01/pay"]
    ]
    for (const [text, expected] of cases) expect(Redaction.redact(text)).toBe(expected)
  })

  it.effect("the logger redacts the message, the cause and the annotations of every line", () =>
    Effect.gen(function* () {
      yield* Effect.logError("paid with pi_1_secret_abc", Cause.fail(new Error("key sk_live_Secret1 refused"))).pipe(
        Effect.annotateLogs({ "http.url": "/portal/bps_1/SIGNATURE123" })
      )
      const lines = (yield* TestConsole.logLines).map(String)
      expect(lines).toHaveLength(1)
      for (const secret of ["pi_1_secret_abc", "sk_live_Secret1", "SIGNATURE123"])
        expect(lines[0]).not.toContain(secret)
      expect(lines[0]).toContain("level=ERROR")
      expect(lines[0]).toContain("/portal/bps_1/[redacted]")
      expect(lines[0]).toContain("sk_live_[redacted]")
    }).pipe(Effect.provide(Redaction.layer), Effect.provide(TestConsole.layer))
  )
})
