/**
 * A realistic long prompt for the content-scan benchmark: business and technical prose of
 * varied vocabulary (a pasted report, a support thread, meeting notes), with the personal data
 * and numbers such text carries: emails, phone numbers, names, street addresses, amounts, dates,
 * times, versions, order numbers, an IP address now and then, words like "prompt" and
 * "instructions" (without an injection). Deterministic for a seed.
 */

const PARAGRAPHS = [
  "Thanks for getting back to us so quickly. As discussed on Tuesday's call, the migration of the billing service is scheduled for {date} at {time} UTC, and we expect roughly 40 minutes of reduced capacity while the replicas catch up. If anything looks off on your side, please write to {email} or call the on-call line at {phone}.",
  "The quarterly report shows revenue of ${amount} against a forecast of ${amount}, a shortfall we attribute mostly to delayed renewals in the enterprise segment. Churn held steady at 2.1 percent, while expansion revenue from existing accounts grew for the third quarter in a row.",
  "Order {order} was shipped on {date} but the tracking page still says it is waiting for pickup. The customer, who reached us from {email}, would like either a refund of ${amount} or a replacement sent by express courier before the end of the month.",
  "During the incident the load balancer at {ip} stopped passing health checks after the certificate rotation, so traffic shifted to the secondary region. Latency rose from 180 ms to about 650 ms at the 99th percentile until the rollback finished at {time}.",
  "Please summarise the following meeting notes in five bullet points, keeping the decisions and the owners, and leave out the small talk. Use plain language; the summary goes to people who were not in the room and have not read the earlier threads.",
  "We reviewed version {version} of the SDK and found two regressions: the retry helper no longer honours the server's retry-after header, and streaming responses are buffered until the end when compression is on. Both are fixed in the next patch release, which we plan to publish on {date}.",
  "The marketing team asked whether the new onboarding flow can be tested with a small group first. Our proposal is to show it to five percent of new sign-ups for two weeks, compare activation with the current flow, and decide at the review on {date}.",
  "Our contract with the logistics partner renews automatically unless either side gives notice ninety days in advance. The current rate is ${amount} per pallet, and their account manager can be reached at {email} or {phone} during business hours.",
  "For the evaluation we will compare three models on the same two hundred support tickets, scoring each answer for accuracy, tone and whether it follows the instructions in the style guide. The prompt template stays the same for every model so that the comparison is fair.",
  "Invoice {order} for ${amount} is now thirty days overdue. Accounts receivable sent two reminders, on {date} and a week later, and has not heard back; the next step under our terms is to pause the service until the balance is settled.",
  "The warehouse in Rotterdam reported that humidity in aisle twelve exceeded the threshold twice last week, both times in the early morning. Facilities replaced a faulty sensor and will check the ventilation schedule before the summer months arrive.",
  "Candidates for the data engineering role will complete a take-home exercise of about three hours, followed by a discussion of their solution with two engineers. Feedback should reach the recruiter within two working days of the interview.",
  "Between {time} and {time} the job queue grew to more than 12,000 pending tasks because a worker pool was misconfigured after the deploy. No data was lost; tasks were retried in order once the pool size was restored to its previous value.",
  "If you have questions about the new expense policy, contact finance at {email}. Receipts above ${amount} need a manager's approval, and travel booked outside the approved tool is reimbursed only in exceptional cases.",
  "Dr. {surname} from the clinic at {street} asked whether the appointment reminders can be sent in the patient's language. Ms {surname} in customer success owns the request and will report back on {date}.",
  "Please update the shipping address for account {order} to {street}, Suite {unit}, and confirm to {email} once it is done; the previous address should stay on file for invoices issued before {date}.",
  "The research summary notes that smaller models fine-tuned on domain data matched the larger general model on most classification tasks, at about a tenth of the cost per request. Long documents remain the exception, where context length matters more than tuning.",
];

const FIRST = [
  "anna",
  "ben",
  "carla",
  "dev",
  "elena",
  "farid",
  "grace",
  "hiro",
  "ines",
  "jonas",
  "kemi",
  "luis",
];
const SURNAMES = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Alvarez", "Novak", "Brennan", "Haddad"];
const STREETS = ["Harbor Boulevard", "Elm Street", "Market St", "Queen Anne Avenue", "Mill Road"];
const DOMAINS = ["example.com", "mail.example.org", "corp.example.net", "example.co.uk"];

/** A small seeded generator (mulberry32), so the prompt is the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function samplePrompt(bytes: number, seed = 1): string {
  const r = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const n = (lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
  const pad = (x: number): string => String(x).padStart(2, "0");
  const fill: Record<string, () => string> = {
    email: () => `${pick(FIRST)}.${pick(FIRST)}${n(1, 99)}@${pick(DOMAINS)}`,
    phone: () =>
      r() < 0.5 ? `+44 20 ${n(7000, 7999)} ${n(1000, 9999)}` : `(${n(200, 989)}) 555-${n(1000, 9999)}`,
    amount: () => `${n(1, 950)},${n(100, 999)}`,
    date: () => `2026-${pad(n(1, 12))}-${pad(n(1, 28))}`,
    time: () => `${pad(n(0, 23))}:${pad(n(0, 59))}`,
    order: () => `${n(10, 99)}-${n(100000, 999999)}`,
    version: () => `${n(1, 4)}.${n(0, 20)}.${n(0, 9)}`,
    surname: () => pick(SURNAMES),
    street: () => `${n(1, 4999)} ${pick(STREETS)}`,
    unit: () => String(n(100, 900)),
    ip: () => `10.${n(0, 255)}.${n(0, 255)}.${n(1, 254)}`,
  };
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    const p = pick(PARAGRAPHS).replace(/\{(\w+)\}/g, (_, k: string) => (fill[k] as () => string)());
    parts.push(p);
    size += p.length + 2;
  }
  return parts.join("\n\n").slice(0, bytes);
}
