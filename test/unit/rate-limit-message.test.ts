import { describe, expect, it } from "vitest";
import { describeWindow } from "../../src/http/plugins/rate-limit.js";

describe("a rate limit's window in the 429 message", () => {
  it("names the configured window in its largest whole unit, singular or plural", () => {
    expect(describeWindow(60_000)).toBe("1 minute");
    expect(describeWindow(120_000)).toBe("2 minutes");
    expect(describeWindow(90_000)).toBe("90 seconds");
    expect(describeWindow(1_000)).toBe("1 second");
    expect(describeWindow(3_600_000)).toBe("1 hour");
    expect(describeWindow(7_200_000)).toBe("2 hours");
    expect(describeWindow(5_400_000)).toBe("90 minutes");
    expect(describeWindow(1_500)).toBe("1500 milliseconds");
  });
});
