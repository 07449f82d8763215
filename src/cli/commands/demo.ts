import type { Command } from "commander";
import { MIN_CREATED_AT_MS } from "../../activity/generation-fields.js";
import { ingestGenerations } from "../../domain/ingest/ingest-generations.js";
import { createOrganization } from "../../domain/organizations/create-organization.js";
import { MAX_RECORDS } from "../../domain/ingest/records/validate-generations.js";
import { systemClock } from "../../lib/clock.js";
import { nanoToUsd, usdToNano } from "../../lib/money.js";
import { parseTimestamp } from "../../lib/time.js";
import { WORKSPACES } from "../../demo/catalog.js";
import { ensureDemoSetup } from "../../demo/demo-setup.js";
import { generateRecords, type WireRecord } from "../../demo/generate-records.js";
import { demoFeedback } from "../../demo/demo-feedback.js";
import { FeedbackActivity, storeFeedbackBatch } from "../../domain/generation-feedback/feedback-activity.js";
import type { CliIo } from "../cli-io.js";
import { startProgress } from "../progress.js";
import { UsageError } from "../usage-error.js";
import { parseIntOption, resolveOrganization, withStores } from "../with-all-stores.js";
import { firstOrganization } from "../../domain/organizations/organization-repo.js";

const DAY_MS = 86_400_000;
const DEFAULT_SEED = 42;

interface DemoOpts {
  days: string;
  generations: string;
  seed: string;
  org?: string;
  until?: string;
  batch: string;
  json?: boolean;
}

const fmt = (n: number) => n.toLocaleString("en-US");
const usd = (nano: bigint) =>
  `$${nanoToUsd(nano).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
/** Seconds precision, as analytics time ranges require. */
const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * `gatehouse demo`: fills an installation with realistic activity for one organization (several
 * workspaces with ordinary keys, users, apps, real models at list prices, BYOK, classifier tags,
 * daily and weekly rhythms) through the ingest path. Deterministic for a --seed and --until.
 */
export function registerDemo(program: Command, io: CliIo): void {
  program
    .command("demo")
    .description("fill this installation with realistic demo activity (workspaces, keys, generations)")
    .option("--days <n>", "length of the period, ending now (1 to 365)", "30")
    .option("--generations <n>", "generation records to create (1 to 10,000,000)", "200000")
    .option("--seed <n>", "seed of the generator: the same seed gives the same records", String(DEFAULT_SEED))
    .option("--org <id>", "organization to fill (default: the first one; created when there is none)")
    .option("--until <timestamp>", "end of the period, RFC 3339 with seconds (default: now)")
    .option("--batch <n>", `records per ingest batch (1 to ${MAX_RECORDS})`, "5000")
    .option("--json", "print the summary as one JSON object")
    .action(async (opts: DemoOpts) => {
      const days = parseIntOption("--days", opts.days, 1, 365);
      const count = parseIntOption("--generations", opts.generations, 1, 10_000_000);
      const seed = parseIntOption("--seed", opts.seed, 0, 2 ** 32 - 1);
      const batchSize = parseIntOption("--batch", opts.batch, 1, MAX_RECORDS);
      const nowMs = systemClock.now().getTime();
      let untilMs = nowMs;
      if (opts.until !== undefined) {
        const d = parseTimestamp(opts.until);
        if (!d)
          throw new UsageError("--until: must be an RFC 3339 timestamp with seconds (2026-11-18T12:00:00Z)");
        if (d.getTime() > nowMs) throw new UsageError("--until: must not be in the future");
        untilMs = d.getTime();
      }
      // Ingest refuses records before 2000: refuse the period before anything is created.
      if (untilMs - days * DAY_MS < MIN_CREATED_AT_MS) {
        throw new UsageError(
          `--until: the period (--days ${days} before it) must not start before 2000-01-01T00:00:00Z`,
        );
      }

      await withStores(
        io,
        "Stop the server while the demo loads (it writes to the stores directly), then start it again.",
        async ({ config, store, activity }) => {
          let createdKey: string | null = null;
          let org: { id: string; name: string };
          if (opts.org === undefined && (await firstOrganization(store.db)) === null) {
            const created = await createOrganization(store, systemClock, "Acme (demo)");
            createdKey = created.managementKey;
            org = { id: created.organizationId, name: "Acme (demo)" };
          } else {
            org = await resolveOrganization(store, opts.org);
          }

          const setup = await ensureDemoSetup(store, systemClock, org.id, seed);
          const deps = { store, activity, clock: systemClock };
          const progress = startProgress(io, { label: "demo", total: count });
          const started = Date.now();
          let accepted = 0;
          let duplicates = 0;
          let credits = 0n;
          let byok = 0n;
          let batch: WireRecord[] = [];
          let feedback = 0;
          const flush = async () => {
            const r = await ingestGenerations(deps, org.id, batch);
            accepted += r.accepted;
            duplicates += r.duplicates;
            // Feedback on some of them, as people leave it (POST /generation/feedback's path).
            feedback += await storeFeedbackBatch(
              store,
              batch.flatMap((rec) => {
                const f = demoFeedback(rec, org.id, seed);
                return f
                  ? [{ feedback: f, generationCreatedAtMs: Date.parse(rec.created_at as string) }]
                  : [];
              }),
            );
            batch = [];
            progress.update(accepted + duplicates, accepted + duplicates);
          };
          try {
            for (const rec of generateRecords(setup.plan, { seed, days, count, untilMs })) {
              credits += usdToNano(rec.usage as number);
              byok += usdToNano(rec.byok_usage_inference as number);
              batch.push(rec);
              if (batch.length >= batchSize) await flush();
            }
            if (batch.length > 0) await flush();
            // Analytics counts the feedback once the activity store holds it.
            await new FeedbackActivity(store, activity).drain();
          } finally {
            progress.stop();
          }
          const seconds = (Date.now() - started) / 1000;
          const keys = setup.plan.workspaces.reduce((n, w) => n + w.keys.length, 0);
          const startMs = untilMs - days * DAY_MS;
          const summary = {
            organization_id: org.id,
            organization_name: org.name,
            management_key: createdKey,
            seed,
            period: { start: new Date(startMs).toISOString(), end: new Date(untilMs).toISOString() },
            workspaces: setup.plan.workspaces.length,
            workspaces_created: setup.createdWorkspaces,
            keys,
            keys_created: setup.createdKeys,
            classifier_id: setup.plan.classifierId,
            generations: count,
            accepted,
            duplicates,
            feedback,
            credits_usd: nanoToUsd(credits),
            byok_inference_usd: nanoToUsd(byok),
            seconds: Math.round(seconds * 1000) / 1000,
            generations_per_second: Math.round(count / Math.max(seconds, 0.001)),
          };
          if (opts.json) {
            io.out(JSON.stringify(summary) + "\n");
            return;
          }
          const host = config.host.includes(":") ? `[${config.host}]` : config.host;
          const base = `http://${host}:${config.port}/api/v1`;
          io.out(
            [
              `Demo activity for organization ${org.name} (${org.id})`,
              ...(createdKey
                ? [
                    "",
                    "  There was no organization: created one. Its management key (shown only this once):",
                    `    ${createdKey}`,
                  ]
                : []),
              "",
              `  period:       ${summary.period.start} .. ${summary.period.end} (${days} days)`,
              `  workspaces:   ${setup.plan.workspaces.length} (${WORKSPACES.map((w) => w.slug ?? "default").join(", ")}), ${setup.createdWorkspaces} created`,
              `  keys:         ${keys} ordinary keys, ${setup.createdKeys} created`,
              `  generations:  ${fmt(accepted)} accepted, ${fmt(duplicates)} duplicates (seed ${seed})`,
              `  feedback:     ${fmt(feedback)} submissions stored`,
              `  spend:        ${usd(credits)} credits, ${usd(byok)} BYOK inference`,
              `  time:         ${seconds.toFixed(1)} s (${fmt(summary.generations_per_second)} generations/s)`,
              "",
              ...curlExamples(base, startMs, untilMs, setup.plan.classifierId),
              "",
            ].join("\n"),
          );
        },
      );
    });
}

/** Three analytics queries over the demo data, ready to paste (the key comes from $GATEHOUSE_KEY). */
function curlExamples(base: string, startMs: number, untilMs: number, classifierId: string): string[] {
  const end = isoSeconds(Math.ceil(untilMs / 1000) * 1000);
  const week = isoSeconds(Math.floor(Math.max(startMs, untilMs - 7 * DAY_MS) / 1000) * 1000);
  const queries = [
    {
      title: "Spend and volume per model over the whole period:",
      body: {
        metrics: ["total_usage", "request_count", "tokens_total"],
        dimensions: ["model"],
        time_range: { start: isoSeconds(Math.floor(startMs / 1000) * 1000), end },
        order_by: { field: "total_usage", direction: "desc" },
        limit: 10,
      },
    },
    {
      title: "Requests and p90 latency per workspace and day, last 7 days:",
      body: {
        metrics: ["request_count", "p90_latency"],
        dimensions: ["workspace"],
        granularity: "day",
        time_range: { start: week, end },
      },
    },
    {
      title: "Credits by classifier topic, last 7 days:",
      body: {
        metrics: ["request_count", "credits_usage"],
        classifier_dimensions: { classifier_id: classifierId, dimension_names: ["topic"] },
        time_range: { start: week, end },
      },
    },
  ];
  return [
    "Try the analytics API (export GATEHOUSE_KEY=<management key>; start the server first):",
    `  curl -s ${base}/analytics/meta -H "Authorization: Bearer $GATEHOUSE_KEY"`,
    ...queries.flatMap((q) => [
      "",
      `  # ${q.title}`,
      `  curl -s ${base}/analytics/query -H "Authorization: Bearer $GATEHOUSE_KEY" \\`,
      `    -H "Content-Type: application/json" -d '${JSON.stringify(q.body)}'`,
    ]),
  ];
}
