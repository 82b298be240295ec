/**
 * Per-usage cost records in `.sdd/metrics/cost.jsonl` (one line per model per usage, `ts` in
 * epoch seconds) and their summary for `service cost --by model|task --last 24h`.
 */
import type { UsageReport } from "./report.ts";

/** One line of `.sdd/metrics/cost.jsonl`. */
export interface CostRecord {
  ts: number;
  task_id: string;
  model: string;
  micro_usd: number;
  input_tokens: number;
  output_tokens: number;
  adapter?: string;
  session_id?: string;
  /** Billed at a batch API's price. */
  batch?: true;
  /** With `batch`: what the same tokens cost in real time. */
  list_micro_usd?: number;
}

/** One row of a summary. */
export interface CostSummaryRow {
  key: string;
  micro_usd: number;
  input_tokens: number;
  output_tokens: number;
  records: number;
}

/** Options of `summarizeCost`. */
export interface SummarizeCostOptions {
  by: "model" | "task";
  /** Only records with `ts >= since` (epoch seconds); default all. */
  since?: number;
}

/** The records of one usage: one per model. */
export function costRecords(
  usage: UsageReport,
  meta: { ts: number; taskId: string; adapter?: string; sessionId?: string },
): CostRecord[] {
  return Object.entries(usage.byModel).map(([model, u]) => ({
    ts: meta.ts,
    task_id: meta.taskId,
    model,
    micro_usd: u.microUsd,
    input_tokens: u.inputTokens,
    output_tokens: u.outputTokens,
    ...(meta.adapter ? { adapter: meta.adapter } : {}),
    ...(meta.sessionId ? { session_id: meta.sessionId } : {}),
    ...(usage.batch ? { batch: true as const, list_micro_usd: u.listMicroUsd ?? u.microUsd } : {}),
  }));
}

/** Parse cost.jsonl text; lines that do not parse (a torn tail) are returned apart. */
export function parseCostRecords(text: string): { records: CostRecord[]; badLines: number[] } {
  const records: CostRecord[] = [];
  const badLines: number[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      const r = JSON.parse(line);
      if (typeof r?.ts === "number" && typeof r.micro_usd === "number") records.push(r);
      else badLines.push(i + 1);
    } catch {
      badLines.push(i + 1);
    }
  });
  return { records, badLines };
}

/** Totals per model or per task, most expensive first (ties by key). Pure. */
export function summarizeCost(
  records: CostRecord[],
  options: SummarizeCostOptions,
): CostSummaryRow[] {
  const rows = new Map<string, CostSummaryRow>();
  for (const r of records) {
    if (options.since !== undefined && r.ts < options.since) continue;
    const key = options.by === "model" ? r.model : r.task_id;
    const row = rows.get(key) ??
      { key, micro_usd: 0, input_tokens: 0, output_tokens: 0, records: 0 };
    row.micro_usd += r.micro_usd;
    row.input_tokens += r.input_tokens ?? 0;
    row.output_tokens += r.output_tokens ?? 0;
    row.records++;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => b.micro_usd - a.micro_usd || a.key.localeCompare(b.key));
}

/** What the batch lane saved among `records` (since `since`): real-time price minus batch price. */
export function batchSavings(
  records: CostRecord[],
  since?: number,
): { saved_micro_usd: number; batch_micro_usd: number; tasks: number } {
  let saved = 0;
  let spent = 0;
  const tasks = new Set<string>();
  for (const r of records) {
    if (!r.batch || (since !== undefined && r.ts < since)) continue;
    saved += Math.max(0, (r.list_micro_usd ?? r.micro_usd) - r.micro_usd);
    spent += r.micro_usd;
    tasks.add(r.task_id);
  }
  return { saved_micro_usd: saved, batch_micro_usd: spent, tasks: tasks.size };
}

/** `--last` durations: `90s`, `30m`, `24h`, `7d` → seconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m) return undefined;
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as "s" | "m" | "h" | "d"];
}
