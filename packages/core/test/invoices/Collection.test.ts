import { describe, expect, it } from "@effect/vitest"
import { Collection, Errors } from "@recur/core"

const refusal = (input: Collection.CollectionInput) => {
  const r = Collection.parse(input)
  return r instanceof Errors.InvalidParameter ? r.param : r
}

describe("collection settings", () => {
  it("parses a method with its terms, refuses what does not go together, naming the field", { timeout: 5_000 }, () => {
    expect(Collection.parse({})).toBeUndefined()
    expect(Collection.parse({ collection_method: "send_invoice", days_until_due: 30 })).toEqual({
      collection_method: "send_invoice",
      days_until_due: 30
    })
    expect(Collection.parse({ collection_method: "charge_automatically" })).toEqual({
      collection_method: "charge_automatically",
      days_until_due: null
    })
    for (const days of [1, 365])
      expect(refusal({ collection_method: "send_invoice", days_until_due: days })).toEqual({
        collection_method: "send_invoice",
        days_until_due: days
      })
    expect(refusal({ collection_method: "send_invoice" })).toBe("days_until_due")
    expect(refusal({ collection_method: "send_invoice", days_until_due: null })).toBe("days_until_due")
    for (const days of [0, 366, 2.5, -1, Number.NaN])
      expect(refusal({ collection_method: "send_invoice", days_until_due: days })).toBe("days_until_due")
    expect(refusal({ collection_method: "charge_automatically", days_until_due: 10 })).toBe("days_until_due")
    expect(refusal({ days_until_due: 10 })).toBe("collection_method")
    expect(refusal({ collection_method: "by_post" })).toBe("collection_method")
  })

  it("the subscription's setting wins over its customer's; due dates in whole days", { timeout: 5_000 }, () => {
    const sent = { collection_method: "send_invoice", days_until_due: 30 } as const
    const charged = { collection_method: "charge_automatically", days_until_due: null } as const
    expect(Collection.effective(null, null)).toEqual(charged)
    expect(Collection.effective(null, sent)).toEqual(sent)
    expect(Collection.effective(charged, sent)).toEqual(charged)
    expect(Collection.effective(sent, undefined)).toEqual(sent)
    const at = Date.parse("2026-02-01T00:00:00Z")
    expect(Collection.dueAt(sent, at)).toBe(Date.parse("2026-03-03T00:00:00Z"))
    expect(Collection.dueAt(charged, at)).toBeNull()
  })
})
