import type { BuiltinFilterSlug } from "../../domain/guardrails/guardrail-policy.js";
import { email, phone } from "./detectors/contact.js";
import { creditCard, ipAddress, ssn } from "./detectors/numbers.js";
import { address, personName } from "./detectors/people.js";
import { promptInjection } from "./detectors/prompt-injection.js";
import { secrets } from "./detectors/secrets.js";
import type { Detector } from "./detectors/scan-text.js";

/**
 * The built-in content filters' detectors, by slug (docs/guardrails-filters.md "Built-in
 * detectors"). Each finds spans in one text; what a match does (block, redact, flag) is the
 * guardrail's choice, applied by content-scan.ts.
 */
export const BUILTIN_DETECTORS: Readonly<Record<BuiltinFilterSlug, Detector>> = {
  email,
  phone,
  ssn,
  "credit-card": creditCard,
  "ip-address": ipAddress,
  secrets,
  "person-name": personName,
  address,
  "regex-prompt-injection": promptInjection,
};

export { distinct, ScanText, type Detector, type Spans } from "./detectors/scan-text.js";
