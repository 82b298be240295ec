/**
 * Parts of the remote-worker tests (DESIGN.md §16): a bare repository as the shared remote, the
 * orchestrator's workspace pushed to it, worker clones of it, and `service worker` as a real
 * child process whose lines are watched as they come.
 */
import { join } from "node:path";
import { CLI, loopbackServer, sh, workspace } from "./_e2e.ts";
import type { TokenSpec } from "../lib/auth/tokens.ts";
import type { RunningServer } from "../lib/server/serve.ts";

/**
 * The worker token of these tests: a run takes remote workers only when its service.yaml
 * configures one (lib/workers/admission.ts). Its variable is set in this process, where the
 * server reads it at request time; child processes (`service run`, the CLI) inherit it.
 */
export const WORKER_TOKEN_ENV = "E2E_WORKER_TOKEN";
/** The worker token's value (every `startWorker` sends it unless told otherwise). */
export const WORKER_TOKEN = "e2e-worker-token";
Deno.env.set(WORKER_TOKEN_ENV, WORKER_TOKEN);
/** `auth.tokens` of a run that takes workers (append to service.yaml). */
export const WORKER_AUTH_YAML =
  `auth:\n  tokens:\n    - {principal: workers, scope: worker, token_env: ${WORKER_TOKEN_ENV}}\n`;
/** The same token as a server's `tokens` option. */
export const WORKER_TOKENS: TokenSpec[] = [
  { principal: "workers", scope: "worker", token_env: WORKER_TOKEN_ENV },
];
/** Headers that read a server of these tests (a worker token reads what a reader reads). */
export const WORKER_READ = { authorization: `Bearer ${WORKER_TOKEN}` };

/** {@link loopbackServer} with the workers' tokens, for `runPlan({server})`. */
export function serveForWorkers(
  root: string,
  tokens: TokenSpec[] = WORKER_TOKENS,
): Promise<RunningServer> {
  return loopbackServer(root, tokens);
}

/** A workspace (see `workspace()`) with an `origin` bare remote; the remote's path. */
export async function sharedRemote(
  dir: string,
  stages: Parameters<typeof workspace>[1],
  extraConfig = "",
): Promise<{ root: string; bare: string }> {
  const root = join(dir, "orchestrator");
  const bare = join(dir, "remote.git");
  await Deno.mkdir(root);
  await workspace(root, stages, extraConfig);
  await sh(dir, "init", "-q", "--bare", "-b", "main", bare);
  await sh(root, "remote", "add", "origin", bare);
  await sh(root, "push", "-q", "origin", "main");
  return { root, bare };
}

/** A clone of `bare` for a worker named `name`. */
export async function workerClone(dir: string, bare: string, name: string): Promise<string> {
  const clone = join(dir, name);
  await sh(dir, "clone", "-q", bare, clone);
  await sh(clone, "config", "user.email", `${name}@localhost`);
  await sh(clone, "config", "user.name", name);
  return clone;
}

/** What any machine has: PATH, HOME, Deno's cache; no provider keys. */
function machineEnv(): Record<string, string> {
  const keep = ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR", "LANG"];
  return Object.fromEntries(keep.flatMap((k) => {
    const v = Deno.env.get(k);
    return v === undefined ? [] : [[k, v]];
  }));
}

/** A `service worker` process; its lines as they come; killed (SIGKILL) or stopped on dispose. */
export interface WorkerProcess extends AsyncDisposable {
  lines: string[];
  child: Deno.ChildProcess;
  /** Resolves when a line matching `re` has been printed. */
  saw(re: RegExp, ms?: number): Promise<string>;
  /** SIGKILL, as a machine that dies. */
  kill(): Promise<void>;
  /** SIGTERM, as `systemctl stop`; resolves with its exit code. */
  stop(): Promise<number>;
  /** Its exit code once it ends by itself. */
  exited(): Promise<number>;
}

/** Start `service worker` over `clone`. */
export function startWorker(
  clone: string,
  server: string,
  name: string,
  options: {
    slots?: number;
    env?: Record<string, string>;
    roles?: string;
    /** More options (`--once`, `--drain-timeout 1` …). */
    args?: string[];
  } = {},
): WorkerProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      CLI,
      "worker",
      "--server",
      server,
      "--dir",
      clone,
      "--name",
      name,
      ...(options.slots === undefined ? [] : ["--slots", String(options.slots)]),
      "--poll-ms",
      "100",
      ...(options.roles ? ["--roles", options.roles] : []),
      ...(options.args ?? []),
    ],
    // A machine of its own: nothing of the orchestrator's environment (its provider keys).
    clearEnv: true,
    env: {
      ...machineEnv(),
      NO_COLOR: "1",
      // A token file of the test's own (a mounted Secret) is the token; else the shared one.
      ...(options.env?.SERVICE_TOKEN_FILE ? {} : { SERVICE_TOKEN: WORKER_TOKEN }),
      ...(options.env ?? {}),
    },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  const read = async (stream: ReadableStream<Uint8Array>) => {
    let buf = "";
    const decoder = new TextDecoder();
    for await (const bytes of stream) {
      buf += decoder.decode(bytes, { stream: true });
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        for (const w of [...waiters]) {
          if (w.re.test(line)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
      }
    }
  };
  const reading = Promise.all([read(child.stdout), read(child.stderr)]);
  let ended = false;
  const status = child.status.then((s) => {
    ended = true;
    return s;
  });
  const end = async (signal: Deno.Signal) => {
    if (!ended) {
      try {
        child.kill(signal);
      } catch { /* gone */ }
    }
    const s = await status;
    await reading;
    return s.code;
  };
  return {
    lines,
    child,
    saw(re, ms = 60_000) {
      const seen = lines.find((l) => re.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`worker ${name} never printed ${re}:\n${lines.join("\n")}`)),
          ms,
        );
        waiters.push({
          re,
          resolve: (l) => {
            clearTimeout(t);
            resolve(l);
          },
        });
      });
    },
    async kill() {
      await end("SIGKILL");
    },
    stop() {
      return end("SIGTERM");
    },
    async exited() {
      const s = await status;
      await reading;
      return s.code;
    },
    async [Symbol.asyncDispose]() {
      await end("SIGKILL");
    },
  };
}
