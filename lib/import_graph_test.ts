/**
 * lib/ is layered: its folders form no import cycle (no two import each other, and no longer
 * ring either), lib/ never imports the edge that assembles it: routes/, components/, islands/ or
 * lib/cli, and a feature folder reaches another feature only through that feature's interface
 * (see {@link FEATURE_INTERFACES}). The imports are Deno's own module graph of every lib/ module
 * except the tests: static, type-only and dynamic `import("…")` specifiers, as Deno resolves them.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = new URL("../", import.meta.url);
const LIB = new URL("./", import.meta.url);

/** One import: the importing module and the imported one, both relative to the repository. */
interface Import {
  from: string;
  to: string;
}

/** The lib/ folder a module belongs to: `(lib)` for the files directly in lib/. */
function folderOf(path: string): string {
  const parts = path.split("/");
  return parts.length > 2 ? parts[1] : "(lib)";
}

let graph: Promise<Import[]> | undefined;

/** Every import of every lib/ module that is not a test, by Deno's module graph (read once). */
function libImports(): Promise<Import[]> {
  return graph ??= readImports(["lib/"]).then((all) =>
    all.filter((i) => i.from.startsWith("lib/"))
  );
}

/**
 * Every import of every module that is not a test in the graph of the modules under `dirs`
 * (relative to the repository), by `deno info`: targets in the repository by their path, others
 * (`node:path`, `npm:/preact@11.2.0/hooks`) by the specifier Deno resolved them to.
 */
async function readImports(dirs: string[]): Promise<Import[]> {
  const modules: string[] = [];
  const walk = (dir: URL) => {
    for (const e of Deno.readDirSync(dir)) {
      const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
      if (e.isDirectory) walk(url);
      else if (/\.tsx?$/.test(e.name) && !/_test\.tsx?$/.test(e.name)) modules.push(url.href);
    }
  };
  for (const dir of dirs) walk(new URL(dir, ROOT));
  const entry = await Deno.makeTempFile({ prefix: "import-graph-", suffix: ".ts" });
  try {
    await Deno.writeTextFile(entry, modules.map((m) => `import ${JSON.stringify(m)};\n`).join(""));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", fileURLToPath(new URL("deno.json", ROOT)), entry],
      cwd: fileURLToPath(ROOT),
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: {
        specifier: string;
        dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
      }[];
    };
    const inRepo = (url: string) => url.startsWith(ROOT.href) ? url.slice(ROOT.href.length) : "";
    const imports: Import[] = [];
    for (const m of info.modules) {
      const from = inRepo(m.specifier);
      if (!from || /_test\.tsx?$/.test(from)) continue;
      for (const d of m.dependencies ?? []) {
        for (const target of [d.code?.specifier, d.type?.specifier]) {
          if (!target) continue;
          const to = target.startsWith("file:") ? inRepo(target) : target;
          if (to) imports.push({ from, to });
        }
      }
    }
    return imports;
  } finally {
    await Deno.remove(entry);
  }
}

/**
 * The import cycles among lib/ folders: each strongly connected component of more than one
 * folder, sorted, with one example import for every folder-to-folder edge inside it.
 */
function folderCycles(imports: readonly Import[]): { folders: string[]; edges: string[] }[] {
  const edges = new Map<string, Map<string, string>>();
  for (const { from, to } of imports) {
    if (!to.startsWith("lib/")) continue;
    const [a, b] = [folderOf(from), folderOf(to)];
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Map());
    if (!edges.get(a)!.has(b)) edges.get(a)!.set(b, `${from} -> ${to}`);
  }
  // Tarjan's algorithm: one depth-first walk; a folder whose lowest reachable index is its own
  // closes a component.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of [...(edges.get(v)?.keys() ?? [])].sort()) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      component.push(w);
    } while (w !== v);
    if (component.length > 1) components.push(component.sort());
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return components.sort((x, y) => x[0].localeCompare(y[0])).map((folders) => ({
    folders,
    edges: folders.flatMap((a) =>
      [...(edges.get(a) ?? [])].filter(([b]) => folders.includes(b)).map(([, example]) => example)
    ).sort(),
  }));
}

Deno.test("folderCycles() finds a ring of three folders that has no pair importing each other", () => {
  const ring = [
    { from: "lib/a/x.ts", to: "lib/b/y.ts" },
    { from: "lib/b/y.ts", to: "lib/c/z.ts" },
    { from: "lib/c/z.ts", to: "lib/a/w.ts" },
    { from: "lib/c/z.ts", to: "lib/d/v.ts" },
    { from: "lib/d/v.ts", to: "lib/errors.ts" },
  ];
  assert.deepEqual(folderCycles(ring), [{
    folders: ["a", "b", "c"],
    edges: ["lib/a/x.ts -> lib/b/y.ts", "lib/b/y.ts -> lib/c/z.ts", "lib/c/z.ts -> lib/a/w.ts"],
  }]);
  assert.deepEqual(folderCycles(ring.slice(1)), []);
});

Deno.test("lib/ folders form no import cycle", async () => {
  const imports = await libImports();
  // The graph is real: a known import is in it (lib/mcp reads the configuration).
  assert.ok(
    imports.some((i) => i.from === "lib/mcp/run_servers.ts" && i.to.startsWith("lib/config/")),
  );
  assert.deepEqual(folderCycles(imports), []);
});

Deno.test("lib/ never imports routes/, components/, islands/ or lib/cli", async () => {
  const offenders = (await libImports())
    .filter(({ from, to }) =>
      /^(routes|components|islands)\//.test(to) ||
      (to.startsWith("lib/cli/") && !from.startsWith("lib/cli/"))
    )
    .map(({ from, to }) => `${from} -> ${to}`);
  assert.deepEqual([...new Set(offenders)], []);
});

/**
 * Directions the layering promises beyond "no cycle": what a folder never reaches, directly or
 * through others (type-only imports count). lib/webhooks is generic: trackers register with it.
 * Verification records what the task store does, never the reverse. Spend (lib/cost) is a leaf
 * that adapters, the orchestrator, `status` and `cost` use.
 */
const NEVER_REACHES: [string, string[]][] = [
  ["webhooks", ["trackers"]],
  ["tasks", ["verification"]],
  ["cost", ["agents", "orchestrator", "config", "status", "cli", "tasks"]],
  // Landing and the trackers share HTTP (lib/http) and JSON reading (lib/util), not each other.
  ["landing", ["trackers"]],
  ["trackers", ["landing"]],
  // The lanes the run loop wires (issue 33): none reaches the loop, and the remote worker runs
  // agents without it. Remote work hands finished work to the run, never to a host itself.
  ["agent_session", ["orchestrator", "workers", "batch", "landing", "integration"]],
  ["batch", ["orchestrator"]],
  ["integration", ["orchestrator"]],
  ["landing", ["orchestrator"]],
  ["remote_worker", ["orchestrator"]],
  ["workers", ["orchestrator", "landing"]],
];

/** The lib/ folders `folder` reaches through imports, itself excluded. */
function reachedFolders(imports: Import[], folder: string): Set<string> {
  const next = new Map<string, Set<string>>();
  for (const i of imports) {
    if (!i.to.startsWith("lib/")) continue;
    const [a, b] = [folderOf(i.from), folderOf(i.to)];
    if (a !== b) next.set(a, (next.get(a) ?? new Set()).add(b));
  }
  const seen = new Set<string>();
  const stack = [folder];
  while (stack.length > 0) {
    for (const b of next.get(stack.pop()!) ?? []) {
      if (!seen.has(b) && b !== folder) stack.push(b), seen.add(b);
    }
  }
  return seen;
}

Deno.test("reachedFolders() follows imports through other folders, types included", () => {
  const chain = [
    { from: "lib/a/x.ts", to: "lib/b/y.ts" },
    { from: "lib/b/y.ts", to: "lib/c/z.ts" },
    { from: "lib/c/z.ts", to: "node:path" },
  ];
  assert.deepEqual([...reachedFolders(chain, "a")].sort(), ["b", "c"]);
  assert.deepEqual([...reachedFolders(chain, "c")], []);
});

for (const [folder, never] of NEVER_REACHES) {
  Deno.test(`lib/${folder} never reaches lib/${never.join(", lib/")}`, async () => {
    const reached = reachedFolders(await libImports(), folder);
    assert.deepEqual(never.filter((f) => reached.has(f)), []);
  });
}

/**
 * Feature folders: units of the service that other features reach only through an interface.
 * A feature's interface is its `mod.ts` when it has one (as std and STYLE.md have it), else the
 * modules listed here, each a deliberate entry point; every other module of the folder is its
 * internal. A feature with no list and no `mod.ts` is reached by no other feature (only by the
 * wiring). The folders not named here are the shared layers every feature may use — primitives
 * (util, async, process, git, http), the journal, config, auth, the task store, runs, the board,
 * cost, roles, plans, audit, events — and the wiring in {@link WIRING}.
 */
const FEATURE_INTERFACES: Record<string, string[]> = {
  agent_session: ["events.ts", "invocation.ts", "lane.ts", "run_isolation.ts", "session.ts"],
  agents: [
    "adapters/mod.ts",
    "adapters/types.ts",
    "cooldown.ts",
    "end_reason.ts",
    "env.ts",
    "exit_diagnosis.ts",
    "exit_status.ts",
    "launch.ts",
    "pid_files.ts",
    "preflight.ts",
    "process.ts",
    "progress_watch.ts",
    "rate_limit.ts",
    "reset_time.ts",
    "runtime_files.ts",
    "session_events.ts",
    "skills.ts",
    "timeouts.ts",
    "usage_reader.ts",
  ],
  batch: [],
  catalog: ["managed_config.ts", "user_paths.ts"],
  container: [
    "errors.ts",
    "launcher.ts",
    "probe.ts",
    "reap.ts",
    "runtime.ts",
    "session.ts",
    "settings.ts",
    "tree_runner.ts",
  ],
  dashboard: [],
  janitor: ["glob.ts", "signals.ts"],
  integration: [],
  landing: [],
  mcp: ["run_servers.ts"],
  merge: ["events.ts", "gates.ts", "interrupted.ts", "merge.ts", "merge_tree.ts", "rebase.ts"],
  remote_worker: [],
  review: ["evidence_marks.ts", "types.ts"],
  trackers: ["service_run.ts"],
  tunnel: [],
  verification: [
    "advice.ts",
    "bundle.ts",
    "completion.ts",
    "gate_words.ts",
    "nudge.ts",
    "nudge_types.ts",
    "quality_gates.ts",
    "verdict.ts",
  ],
  webhooks: ["handler.ts", "ledger.ts", "receiver.ts", "registry.ts", "secret.ts"],
  workers: ["fleet.ts", "hello.ts", "lane.ts", "lane_events.ts", "protocol.ts", "remote_refs.ts"],
  worktree_env: ["environments.ts", "ports.ts", "spec.ts"],
  worktrees: [
    "diff_capture.ts",
    "earlier_work.ts",
    "exclude.ts",
    "ignores.ts",
    "lost_branch.ts",
    "reap.ts",
    "settle.ts",
    "trees.ts",
    "worktrees.ts",
  ],
};

/** The folders that assemble features (they may import any module); no feature imports them. */
const WIRING = ["cli", "debug", "doctor", "orchestrator", "runner", "server", "status"];

/** The primitives every feature shares; they reach no feature and no wiring. */
const PRIMITIVES = ["async", "git", "http", "process", "util"];

/**
 * Imports the rules below allow for now, each with the change that removes it. Keep it short:
 * an entry is a debt, not a design.
 */
const FEATURE_EXCEPTIONS: { from: string; to: string; until: string }[] = [];

/** What a feature's interface is today: its `mod.ts` when present, else its declared modules. */
function interfaceOf(folder: string, hasMod: (folder: string) => boolean): string[] {
  return hasMod(folder) ? ["mod.ts"] : FEATURE_INTERFACES[folder] ?? [];
}

/**
 * The imports that break the feature rules: a feature importing another feature's internal
 * module, or importing the wiring; as `from -> to (why)`, exceptions left out.
 */
function featureViolations(
  imports: readonly Import[],
  hasMod: (folder: string) => boolean,
  exceptions: readonly { from: string; to: string }[] = FEATURE_EXCEPTIONS,
): string[] {
  const out = new Set<string>();
  for (const { from, to } of imports) {
    if (!to.startsWith("lib/")) continue;
    const [a, b] = [folderOf(from), folderOf(to)];
    if (a === b || !(a in FEATURE_INTERFACES)) continue;
    if (exceptions.some((e) => e.from === from && e.to === to)) continue;
    if (WIRING.includes(b)) out.add(`${from} -> ${to} (a feature never imports the wiring)`);
    else if (b in FEATURE_INTERFACES) {
      const inner = to.slice(`lib/${b}/`.length);
      if (!interfaceOf(b, hasMod).includes(inner)) {
        out.add(`${from} -> ${to} (not in lib/${b}'s interface)`);
      }
    }
  }
  return [...out].sort();
}

const hasModOnDisk = (folder: string) => {
  try {
    return Deno.statSync(new URL(`${folder}/mod.ts`, LIB)).isFile;
  } catch {
    return false;
  }
};

Deno.test("featureViolations() finds a feature reaching into another's internals or the wiring", () => {
  const imports = [
    { from: "lib/landing/api.ts", to: "lib/trackers/http.ts" },
    { from: "lib/landing/push.ts", to: "lib/git/remote.ts" },
    { from: "lib/trackers/service.ts", to: "lib/webhooks/registry.ts" },
    { from: "lib/trackers/service.ts", to: "lib/webhooks/_parse.ts" },
    { from: "lib/batch/lane.ts", to: "lib/orchestrator/core/state.ts" },
    { from: "lib/runner/run.ts", to: "lib/landing/pull_requests.ts" },
    { from: "lib/verification/completion.ts", to: "lib/mcp/mod.ts" },
  ];
  assert.deepEqual(featureViolations(imports, (f) => f === "mcp", []), [
    "lib/batch/lane.ts -> lib/orchestrator/core/state.ts (a feature never imports the wiring)",
    "lib/landing/api.ts -> lib/trackers/http.ts (not in lib/trackers's interface)",
    "lib/trackers/service.ts -> lib/webhooks/_parse.ts (not in lib/webhooks's interface)",
  ]);
  const excepted = [{ from: "lib/landing/api.ts", to: "lib/trackers/http.ts" }];
  assert.equal(featureViolations(imports.slice(0, 1), () => false, excepted).length, 0);
});

Deno.test("a feature folder reaches another feature only through its interface, and never the wiring", async () => {
  const imports = await libImports();
  assert.deepEqual(featureViolations(imports, hasModOnDisk), []);
  // Every exception still names an import that exists: one that went away leaves the list.
  const stale = FEATURE_EXCEPTIONS.filter((e) =>
    !imports.some((i) => i.from === e.from && i.to === e.to)
  );
  assert.deepEqual(stale, []);
});

/**
 * The imports by which the run loop (lib/orchestrator) reaches into a feature past its
 * interface: the loop wires each lane through its entry and nothing else (issue 33).
 */
function loopViolations(
  imports: readonly Import[],
  hasMod: (folder: string) => boolean,
): string[] {
  const out = new Set<string>();
  for (const { from, to } of imports) {
    if (!from.startsWith("lib/orchestrator/") || !to.startsWith("lib/")) continue;
    const b = folderOf(to);
    if (!(b in FEATURE_INTERFACES)) continue;
    if (!interfaceOf(b, hasMod).includes(to.slice(`lib/${b}/`.length))) {
      out.add(`${from} -> ${to} (not in lib/${b}'s interface)`);
    }
  }
  return [...out].sort();
}

Deno.test("loopViolations() finds the run loop reaching past a lane's interface, nothing else", () => {
  const imports = [
    { from: "lib/orchestrator/orchestrator.ts", to: "lib/batch/mod.ts" },
    { from: "lib/orchestrator/orchestrator.ts", to: "lib/batch/ledger.ts" },
    { from: "lib/orchestrator/core/decide.ts", to: "lib/trackers/jira.ts" },
    { from: "lib/runner/run.ts", to: "lib/util/json.ts" },
    { from: "lib/runner/run.ts", to: "lib/orchestrator/core/state.ts" },
    { from: "lib/status/parts.ts", to: "lib/batch/ledger.ts" },
    { from: "lib/runner/run.ts", to: "npm:/hono@4.13.19" },
  ];
  assert.deepEqual(loopViolations(imports, (f) => f === "batch"), [
    "lib/orchestrator/core/decide.ts -> lib/trackers/jira.ts (not in lib/trackers's interface)",
    "lib/orchestrator/orchestrator.ts -> lib/batch/ledger.ts (not in lib/batch's interface)",
  ]);
});

Deno.test("the run loop reaches each lane and feature only through its interface", async () => {
  assert.deepEqual(loopViolations(await libImports(), hasModOnDisk), []);
});

Deno.test("every declared interface module exists, and a feature with a mod.ts declares no other", () => {
  for (const [folder, modules] of Object.entries(FEATURE_INTERFACES)) {
    assert.ok(Deno.statSync(new URL(`${folder}/`, LIB)).isDirectory, `lib/${folder}`);
    if (hasModOnDisk(folder)) assert.deepEqual(modules, [], `lib/${folder} has a mod.ts`);
    for (const m of modules) {
      assert.ok(Deno.statSync(new URL(`${folder}/${m}`, LIB)).isFile, `lib/${folder}/${m}`);
    }
  }
});

Deno.test("lib/config imports no module of lib/container (host:port parsing is lib/util's)", async () => {
  const direct = (await libImports()).filter(({ from, to }) =>
    from.startsWith("lib/config/") && to.startsWith("lib/container/")
  );
  assert.deepEqual(direct, []);
});

for (const primitive of PRIMITIVES) {
  Deno.test(`lib/${primitive} reaches no feature and no wiring`, async () => {
    const reached = reachedFolders(await libImports(), primitive);
    const above = [...Object.keys(FEATURE_INTERFACES), ...WIRING];
    assert.deepEqual(above.filter((f) => reached.has(f)), []);
  });
}

/**
 * What browser code may reach. The islands bundle (`islands/client.tsx`, bundled by
 * scripts/build.ts) runs in the browser, so every module an island imports — directly, through
 * others, or only for a type — is one of these; anything else is server code (lib/journal,
 * lib/server, `node:*`, every npm package but Preact, and components/, the page shell that renders
 * the islands and is never imported back). The JSON shapes the server sends live in type modules
 * that import nothing else, so naming one pulls in no server code.
 */
const BROWSER_SAFE: readonly RegExp[] = [
  /^islands\//, // the islands and the parts they render (islands/parts/)
  /^lib\/dashboard\//, // the browser half of the board: API calls, live refresh, card words
  /^lib\/diff\/parse\.ts$/, // the pure unified-diff parser the diff viewer runs
  /^lib\/json\.ts$/,
  /^lib\/board\/(types|activity_types)\.ts$/,
  /^lib\/review\/types\.ts$/,
  /^lib\/runs\/summary_types\.ts$/,
  /^lib\/verification\/nudge_types\.ts$/,
  /^lib\/verification\/advice\.ts$/, // the alert's advice: pure, importing nothing
  /^lib\/verification\/gate_words\.ts$/, // a failed gate in words: pure
  /^lib\/util\/last_error_line\.ts$/, // the line that says what went wrong: pure, importing nothing
  /^lib\/runs\/git_setup_words\.ts$/, // the git setup warning's words: pure, importing nothing
  /^lib\/runs\/outside_commits_words\.ts$/, // the outside-commits warning's words: pure, only the escaping
  /^lib\/util\/printable\.ts$/, // the escaping helper: pure, importing nothing
  /^lib\/util\/size_words\.ts$/, // a size in words: pure, importing nothing
  /^npm:\/?preact@[^/]+(\/(hooks|jsx-runtime))?$/, // Preact: the one package the bundle carries
];

/** Whether browser code may import `module` (a repository path or a resolved specifier). */
function browserSafe(module: string): boolean {
  return BROWSER_SAFE.some((re) => re.test(module));
}

/**
 * The modules browser code must not reach: for each one first met walking the imports breadth
 * first from `entries`, the chain that reaches it (`islands/a.tsx -> lib/b.ts -> node:fs`). The
 * walk goes on only through modules `safe` accepts.
 */
function forbiddenChains(
  imports: readonly Import[],
  entries: readonly string[],
  safe: (module: string) => boolean,
): string[] {
  const next = new Map<string, string[]>();
  for (const { from, to } of imports) next.set(from, [...(next.get(from) ?? []), to]);
  const via = new Map<string, string | undefined>(entries.map((e) => [e, undefined]));
  const queue = [...entries];
  const chains: string[] = [];
  while (queue.length > 0) {
    const module = queue.shift()!;
    if (!safe(module)) {
      const chain = [module];
      for (let m = via.get(module); m !== undefined; m = via.get(m)) chain.unshift(m);
      chains.push(chain.join(" -> "));
      continue;
    }
    for (const to of [...new Set(next.get(module) ?? [])].sort()) {
      if (!via.has(to)) via.set(to, module), queue.push(to);
    }
  }
  return chains;
}

Deno.test("forbiddenChains() names the whole chain to each server module and stops there", () => {
  const imports = [
    { from: "islands/app.tsx", to: "islands/parts/card.tsx" },
    { from: "islands/parts/card.tsx", to: "lib/board/types.ts" },
    { from: "islands/parts/card.tsx", to: "lib/runs/runs.ts" },
    { from: "lib/runs/runs.ts", to: "lib/journal/row.ts" },
    { from: "islands/app.tsx", to: "node:path" },
    { from: "islands/app.tsx", to: "npm:/preact@11.2.0/hooks" },
  ];
  assert.deepEqual(forbiddenChains(imports, ["islands/app.tsx"], browserSafe), [
    "islands/app.tsx -> node:path",
    "islands/app.tsx -> islands/parts/card.tsx -> lib/runs/runs.ts",
  ]);
  assert.deepEqual(forbiddenChains(imports.slice(0, 2), ["islands/app.tsx"], browserSafe), []);
  assert.equal(browserSafe("components/board_page.tsx"), false);
  assert.equal(browserSafe("npm:/preact-render-to-string@6.8.2"), false);
});

Deno.test("browser code imports no server module, not even for a type", async () => {
  const imports = await readImports(["islands/"]);
  const entries = [...new Set(imports.map((i) => i.from))]
    .filter((m) => m.startsWith("islands/")).sort();
  // The graph is real: the bundle's entry and the board app it hydrates are in it.
  assert.ok(
    imports.some((i) => i.from === "islands/client.tsx" && i.to === "islands/board_app.tsx"),
  );
  assert.deepEqual(forbiddenChains(imports, entries, browserSafe), []);
  // Nor does a module it reaches call the runtime's own API (`Deno.*` exists only on the server).
  const reached = new Set([...entries, ...imports.map((i) => i.to)].filter(browserSafe));
  const denoUsers = [...reached].filter((m) =>
    !m.startsWith("npm:") && /\bDeno\./.test(Deno.readTextFileSync(new URL(m, ROOT)))
  );
  assert.deepEqual(denoUsers, []);
});
