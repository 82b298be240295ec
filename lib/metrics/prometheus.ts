/**
 * The Prometheus text exposition format, version 0.0.4 (pure): metric families in, the bytes
 * Prometheus scrapes (and KEDA's metrics-api trigger with `format: prometheus` parses) out. Each
 * family gets its `# HELP` and `# TYPE` lines, then one line per sample; label values are escaped
 * as the format says (backslash, double quote, line feed), HELP text likewise (backslash, line
 * feed); no timestamps (the scraper stamps the scrape). A name or label name the format does not
 * allow, a repeated family or label set, or a counter that is negative is a programming error
 * and throws, so nothing malformed is ever served.
 */

/** The content type of the format (what Prometheus asks for and expects). */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** One sample of a family: its labels (none for a plain value) and its value. */
export interface Sample {
  labels?: Readonly<Record<string, string>>;
  value: number;
}

/** A metric family: its name, what it means, its type and its samples. */
export interface MetricFamily {
  name: string;
  help: string;
  type: "gauge" | "counter";
  samples: readonly Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label value as the format writes it between double quotes. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** HELP text as the format writes it (double quotes stay as they are there). */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** A sample value: integers plainly, `NaN`, `+Inf` and `-Inf` by name. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return Object.is(value, -0) ? "0" : String(value);
}

function labelText(name: string, labels: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(labels ?? {});
  if (entries.length === 0) return "";
  for (const [k] of entries) {
    if (!LABEL_NAME.test(k) || k.startsWith("__")) {
      throw new RangeError(`metric ${name}: label name ${JSON.stringify(k)} is not allowed`);
    }
  }
  return "{" + entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",") +
    "}";
}

/** The exposition text of `families`, in the order given (a trailing line feed included). */
export function formatPrometheus(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  const names = new Set<string>();
  for (const f of families) {
    if (!METRIC_NAME.test(f.name)) {
      throw new RangeError(`metric name ${JSON.stringify(f.name)} is not allowed`);
    }
    if (names.has(f.name)) throw new RangeError(`metric ${f.name} is listed twice`);
    names.add(f.name);
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    const seen = new Set<string>();
    for (const s of f.samples) {
      const labels = labelText(f.name, s.labels);
      if (seen.has(labels)) throw new RangeError(`metric ${f.name}${labels} has two samples`);
      seen.add(labels);
      if (f.type === "counter" && !(s.value >= 0)) {
        throw new RangeError(`counter ${f.name}${labels} is ${s.value}: counters never go below 0`);
      }
      lines.push(`${f.name}${labels} ${formatValue(s.value)}`);
    }
  }
  return lines.length === 0 ? "" : lines.join("\n") + "\n";
}
