/// <reference lib="deno.unstable" />
/**
 * What lib/ exports reads well from outside (STYLE.md, issue 33): every exported symbol carries a
 * JSDoc ({@link MIN_DOCUMENTED} of them at least), and an exported function or public method
 * takes at most {@link MAX_POSITIONAL} positional arguments, the rest in one options object.
 * Exports are found by Deno's own parser (a lint plugin run on every module of lib/ but the
 * tests and the AssemblyScript source of the journal scanner).
 */
import assert from "node:assert/strict";

/** The share of exported lib/ symbols that must carry a JSDoc. */
const MIN_DOCUMENTED = 0.98;

/** The most positional arguments an exported function takes before its options object. */
const MAX_POSITIONAL = 3;

/**
 * Signatures that still take more, by `file:name`: their callers are being rewritten in parallel
 * (the orchestrator's lanes, landing, workers), so they change in the round that moves those.
 * An entry that no longer takes more fails the test: take it off the list.
 */
const LONGER_FOR_NOW = new Set([
  "lib/batch/prompt.ts:batchPrompt",
  "lib/cost/budget.ts:SpendTracker.constructor",
  "lib/git/git.ts:GitError.constructor",
  "lib/landing/api.ts:HostApi.constructor",
  "lib/landing/push.ts:pushBranch",
  "lib/mcp/run_servers.ts:writeRunMcpConfig",
  "lib/agent_session/agent_pool.ts:AgentPool.spawn",
  "lib/orchestrator/core/judged.ts:judgeCaptured",
  "lib/orchestrator/core/judged.ts:refuseOutsideOwned",
  "lib/orchestrator/core/outcomes.ts:attemptFailed",
  "lib/orchestrator/core/outcomes.ts:startLanding",
  "lib/agent_session/invocation.ts:agentInvocation",
  "lib/agent_session/log_watch.ts:scanNewLines",
  "lib/workers/remote_work.ts:RemoteWork.touched",
  "lib/agent_session/session.ts:SessionStartError.constructor",
  "lib/workers/leases.ts:requireLease",
  "lib/worktree_env/ports.ts:leasePorts",
]);

const LIB = new URL("./", import.meta.url);

/** One exported declaration (or a public member of one): its JSDoc, its positional arguments. */
interface Exported {
  name: string;
  /** A JSDoc precedes it (absent for members: the class's JSDoc speaks for them). */
  documented?: boolean;
  member?: true;
  /** Functions, constructors and public methods: arguments before the options object. */
  positional?: number;
}

type Param = Deno.lint.Parameter;

/**
 * Whether `param` is an options object: destructured, or typed as an object (a type literal, a
 * `…Options` interface, `Record`, `Partial`, `Omit`, `Pick`, `Readonly` of one), or named
 * `options`.
 */
function isOptions(param: Param): boolean {
  const own = param.type === "TSParameterProperty" ? param.parameter : param;
  const p = own.type === "AssignmentPattern" ? own.left : own;
  if (p.type === "ObjectPattern") return true;
  if (p.type !== "Identifier") return false;
  if (p.name === "options") return true;
  const type = p.typeAnnotation?.typeAnnotation;
  if (type?.type === "TSTypeLiteral") return true;
  if (type?.type !== "TSTypeReference" || type.typeName.type !== "Identifier") return false;
  return /Options$|^(Record|Partial|Omit|Pick|Readonly)$/.test(type.typeName.name);
}

/** The arguments of a parameter list that come before its options object. */
function positional(params: Param[]): number {
  const last = params.at(-1);
  return last && isOptions(last) ? params.length - 1 : params.length;
}

/** Collects every export of one module into {@link found}. */
let found: Exported[] = [];

const plugin: Deno.lint.Plugin = {
  name: "exports",
  rules: {
    collect: {
      create(ctx) {
        // The nearest comment before the export, with nothing but space and line comments
        // (`// deno-lint-ignore …`) between them.
        const documented = (node: Deno.lint.Node) => {
          const block = ctx.sourceCode.getCommentsBefore(node).findLast((c) => c.type === "Block");
          if (!block?.value.startsWith("*")) return false;
          const between = ctx.sourceCode.text.slice(block.range[1], node.range[0]);
          return /^(\s|\/\/[^\n]*)*$/.test(between);
        };
        return {
          ExportNamedDeclaration(node) {
            const d = node.declaration;
            if (!d) return; // `export { … } from`: documented where it is declared
            const doc = documented(node);
            if (d.type === "FunctionDeclaration") {
              found.push({ name: d.id!.name, documented: doc, positional: positional(d.params) });
            } else if (d.type === "VariableDeclaration") {
              for (const v of d.declarations) {
                const fn = v.init;
                const name = v.id.type === "Identifier" ? v.id.name : "(pattern)";
                const callable = fn?.type === "ArrowFunctionExpression" ||
                  fn?.type === "FunctionExpression";
                found.push({
                  name,
                  documented: doc,
                  ...(callable ? { positional: positional(fn.params) } : {}),
                });
              }
            } else if (d.type === "ClassDeclaration") {
              found.push({ name: d.id!.name, documented: doc });
              for (const m of d.body.body) {
                if (m.type !== "MethodDefinition" || m.accessibility === "private") continue;
                if (m.key.type !== "Identifier") continue; // #private, computed
                found.push({
                  name: `${d.id!.name}.${m.key.name}`,
                  member: true,
                  positional: positional(m.value.params),
                });
              }
            } else {
              const id = (d as { id?: { type: string; name?: string } }).id;
              found.push({ name: id?.name ?? "(declaration)", documented: doc });
            }
          },
          ExportDefaultDeclaration(node) {
            found.push({ name: "default", documented: documented(node) });
          },
        };
      },
    },
  },
};

/** Every export of `text` (a module's source). */
function exportsOf(path: string, text: string): Exported[] {
  found = [];
  Deno.lint.runPlugin(plugin, path, text);
  return found;
}

/** Every lib/ module but the tests and the scanner's AssemblyScript, relative to lib/. */
function libModules(dir = LIB, out: string[] = []): string[] {
  for (const e of Deno.readDirSync(dir)) {
    const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    const path = url.pathname.slice(LIB.pathname.length);
    if (e.isDirectory) {
      if (path !== "journal/wasm/assembly/") libModules(url, out);
    } else if (/\.tsx?$/.test(e.name) && !/_test\.tsx?$/.test(e.name)) out.push(path);
  }
  return out.sort();
}

/** `lib/<file>:<name>` of every export of lib/, with what the parser found. */
const LIB_EXPORTS = libModules().flatMap((path) =>
  exportsOf(path, Deno.readTextFileSync(new URL(path, LIB))).map((e) => ({
    ...e,
    at: `lib/${path}:${e.name}`,
  }))
);

Deno.test("the export rules read JSDoc, positional arguments and options objects as a reader does", () => {
  const text = `
/** Documented. */
export function two(a: string, b: number): void {}
// A line comment is not a JSDoc.
export const arrow = (a: string, b: string, c: string, d: string) => a;
export function withOptions(a: string, b: string, c: string, options: { x?: number } = {}) {}
export function named(a: string, b: string, c: string, o: RunOptions) {}
export function destructured(a: string, b: string, c: string, { x }: Thing) {}
export function flag(a: string, b: string, c: string, deleted = false) {}
/** A class. */
export class Tracker {
  constructor(a: string, b: string, c: string, d: string) {}
  record(a: string, b: string, c: string, meta: { adapter?: string } = {}) {}
  private hidden(a: string, b: string, c: string, d: string) {}
}
export interface Bare {}
/** Documented above its lint directive. */
// deno-lint-ignore require-await
export async function directive() {}
`;
  assert.deepEqual(
    exportsOf("x.ts", text).map((e) => [e.name, e.documented, e.positional]),
    [
      ["two", true, 2],
      ["arrow", false, 4],
      ["withOptions", false, 3],
      ["named", false, 3],
      ["destructured", false, 3],
      ["flag", false, 4],
      ["Tracker", true, undefined],
      ["Tracker.constructor", undefined, 4],
      ["Tracker.record", undefined, 3],
      ["Bare", false, undefined],
      ["directive", true, 0],
    ],
  );
});

Deno.test(`at least ${MIN_DOCUMENTED * 100} % of lib/'s exports carry a JSDoc`, () => {
  const exported = LIB_EXPORTS.filter((e) => !e.member);
  const bare = exported.filter((e) => !e.documented).map((e) => e.at);
  const share = 1 - bare.length / exported.length;
  assert.ok(exported.length > 1000, `the walk found only ${exported.length} exports`);
  assert.ok(share >= MIN_DOCUMENTED, `${(share * 100).toFixed(2)} % documented; bare: ${bare}`);
});

Deno.test(`lib/'s exported functions take at most ${MAX_POSITIONAL} positional arguments, then an options object`, () => {
  const longer = LIB_EXPORTS.filter((e) => (e.positional ?? 0) > MAX_POSITIONAL).map((e) => e.at);
  assert.deepEqual(
    longer.filter((at) => !LONGER_FOR_NOW.has(at)),
    [],
    "put the arguments after the first two or three in an exported …Options interface",
  );
  assert.deepEqual(
    [...LONGER_FOR_NOW].filter((at) => !longer.includes(at)),
    [],
    "these take an options object now: take them off LONGER_FOR_NOW",
  );
});
