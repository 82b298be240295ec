/** The Prometheus text format, table-driven over hostile inputs. */
import assert from "node:assert/strict";
import {
  escapeHelp,
  escapeLabelValue,
  formatPrometheus,
  formatValue,
  type MetricFamily,
} from "./prometheus.ts";

Deno.test("formatPrometheus() writes HELP and TYPE, then one line per sample, labels sorted", () => {
  const text = formatPrometheus([
    {
      name: "service_tasks_ready",
      help: "Ready tasks.",
      type: "gauge",
      samples: [{ labels: { role: "backend", b: "1" }, value: 3 }, {
        labels: { role: "docs", b: "1" },
        value: 0,
      }],
    },
    { name: "service_leases_lost_total", help: "Lost.", type: "counter", samples: [{ value: 2 }] },
    { name: "service_empty", help: "No samples yet.", type: "gauge", samples: [] },
  ]);
  assert.equal(
    text,
    [
      "# HELP service_tasks_ready Ready tasks.",
      "# TYPE service_tasks_ready gauge",
      'service_tasks_ready{b="1",role="backend"} 3',
      'service_tasks_ready{b="1",role="docs"} 0',
      "# HELP service_leases_lost_total Lost.",
      "# TYPE service_leases_lost_total counter",
      "service_leases_lost_total 2",
      "# HELP service_empty No samples yet.",
      "# TYPE service_empty gauge",
      "",
    ].join("\n"),
  );
  assert.equal(formatPrometheus([]), "");
});

Deno.test("label values and HELP text are escaped as the format says", () => {
  const cases: [string, string][] = [
    ["plain", "plain"],
    ['say "hi"', 'say \\"hi\\"'],
    ["back\\slash", "back\\\\slash"],
    ["two\nlines", "two\\nlines"],
    ['\\"\n', '\\\\\\"\\n'],
    ["tab\there", "tab\there"],
    ["ünïcødé ✓", "ünïcødé ✓"],
    ["", ""],
  ];
  for (const [raw, escaped] of cases) assert.equal(escapeLabelValue(raw), escaped, raw);
  assert.equal(escapeHelp('a "quote"\\ and\nnewline'), 'a "quote"\\\\ and\\nnewline');
  const text = formatPrometheus([{
    name: "m",
    help: "h",
    type: "gauge",
    samples: [{ labels: { adapter: 'x"}\n{evil="1' }, value: 1 }],
  }]);
  assert.equal(text.split("\n")[2], 'm{adapter="x\\"}\\n{evil=\\"1"} 1', "one line, one label");
});

Deno.test("formatValue() writes integers plainly and the special values by name", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [-0, "0"],
    [42, "42"],
    [-3, "-3"],
    [1.5, "1.5"],
    [NaN, "NaN"],
    [Infinity, "+Inf"],
    [-Infinity, "-Inf"],
  ];
  for (const [v, s] of cases) assert.equal(formatValue(v), s, String(v));
});

Deno.test("formatPrometheus() refuses what the format does not allow", () => {
  const gauge = (over: Partial<MetricFamily>): MetricFamily => ({
    name: "ok",
    help: "h",
    type: "gauge",
    samples: [{ value: 1 }],
    ...over,
  });
  const bad: [string, MetricFamily[]][] = [
    ["a name with a dash", [gauge({ name: "service-x" })]],
    ["a name starting with a digit", [gauge({ name: "1x" })]],
    ["an empty name", [gauge({ name: "" })]],
    ["a name with a space", [gauge({ name: "a b" })]],
    ["a label name with a dash", [gauge({ samples: [{ labels: { "a-b": "x" }, value: 1 }] })]],
    ["a reserved label name", [gauge({ samples: [{ labels: { __name__: "x" }, value: 1 }] })]],
    ["a label name starting with a digit", [
      gauge({ samples: [{ labels: { "1a": "x" }, value: 1 }] }),
    ]],
    ["a family listed twice", [gauge({}), gauge({})]],
    ["two samples with one label set", [gauge({ samples: [{ value: 1 }, { value: 2 }] })]],
    ["a negative counter", [gauge({ name: "x_total", type: "counter", samples: [{ value: -1 }] })]],
    ["a NaN counter", [gauge({ name: "x_total", type: "counter", samples: [{ value: NaN }] })]],
  ];
  for (const [what, families] of bad) {
    assert.throws(() => formatPrometheus(families), RangeError, what);
  }
});
