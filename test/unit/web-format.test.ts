import { describe, expect, it } from "vitest";
import { fromUtcInput, utcInputValue } from "../../web/src/lib/format.js";

/** The Keys page's expiry field: a `datetime-local` value read as UTC, both ways. */
describe("dashboard expiry input", () => {
  it("shows an API timestamp to the second, as UTC", () => {
    expect(utcInputValue("2031-05-06T07:08:09.000Z")).toBe("2031-05-06T07:08:09");
    expect(utcInputValue("2031-05-06T07:08:09.123Z")).toBe("2031-05-06T07:08:09");
    expect(utcInputValue(null)).toBe("");
  });

  it("sends what the API accepts: seconds and Z; empty clears", () => {
    expect(fromUtcInput("2031-05-06T07:08")).toBe("2031-05-06T07:08:00Z");
    expect(fromUtcInput("2031-05-06T07:08:09")).toBe("2031-05-06T07:08:09Z");
    // Chromium adds milliseconds when the step allows them; the API keeps seconds.
    expect(fromUtcInput("2031-05-06T07:08:09.500")).toBe("2031-05-06T07:08:09Z");
    expect(fromUtcInput("")).toBeNull();
  });

  it("round-trips a stored expiry unchanged", () => {
    const stored = "2027-12-31T23:59:59.000Z";
    expect(fromUtcInput(utcInputValue(stored))).toBe("2027-12-31T23:59:59Z");
  });
});
