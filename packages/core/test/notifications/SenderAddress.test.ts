import { describe, expect, it } from "vitest"
import { Notifications } from "../../src/notifications/index.js"

describe("a notification sender or reply-to is one mailbox on one line", () => {
  it("refuses a sender that is more than one mailbox", () => {
    // an unquoted comma in the display name makes it two addresses for any RFC 5322 parser (nodemailer's too)
    expect(Notifications.isAddress("billing@acme.com, victim@example.org <billing@acme.com>")).toBe(false)
  }, 10_000)
  it("refuses a sender that ends in a line break", () => {
    // trimmed for the check but stored as given: a trailing CRLF reaches the port's `from`
    expect(Notifications.isAddress("Acme <billing@acme.com>\r\n")).toBe(false)
  }, 10_000)
})
