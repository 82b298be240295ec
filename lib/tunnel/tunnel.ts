/**
 * The tunnel subsystem (spec §4.2 rule 8): expose a laptop-run server through whichever tunnel
 * program is installed — cloudflared (a quick tunnel on trycloudflare.com), ngrok, or bore —
 * and learn its public URL from the program's own output. The tunnel runs in its own process
 * group and is ended with it.
 */
import { resolveBinary } from "../agents/preflight.ts";

/** A supported tunnel program. */
export interface TunnelProgram {
  name: "cloudflared" | "ngrok" | "bore";
  /** Where to get it. */
  install: string;
  /** Arguments exposing `port` on 127.0.0.1. */
  args(port: number): string[];
  /** The public URL announced on `line`, if any (pure). */
  publicUrl(line: string): string | undefined;
}

/** The programs, in the order they are preferred. */
export const TUNNEL_PROGRAMS: readonly TunnelProgram[] = [
  {
    name: "cloudflared",
    install:
      "https://developers.cloudflare.com/cloudflare-one/connections/connect-networks/downloads/",
    args: (port) => ["tunnel", "--no-autoupdate", "--url", `http://127.0.0.1:${port}`],
    publicUrl: (line) => /https:\/\/[a-z0-9-]+\.trycloudflare\.com/.exec(line)?.[0],
  },
  {
    name: "ngrok",
    install: "https://ngrok.com/download (then `ngrok config add-authtoken <token>`)",
    args: (port) => ["http", String(port), "--log", "stdout", "--log-format", "json"],
    publicUrl: (line) => {
      try {
        const v = JSON.parse(line);
        return typeof v?.url === "string" && v.url.startsWith("https://") ? v.url : undefined;
      } catch {
        return /url=(https:\/\/\S+)/.exec(line)?.[1];
      }
    },
  },
  {
    name: "bore",
    install: "https://github.com/ekzhang/bore (`cargo install bore-cli`)",
    args: (port) => ["local", String(port), "--to", "bore.pub"],
    publicUrl: (line) => {
      const m = /listening at ([\w.-]+:\d+)/.exec(line);
      return m ? `http://${m[1]}` : undefined;
    },
  },
];

/** No tunnel program is installed. */
export class NoTunnelProgramError extends Error {
  readonly code = "no_tunnel_program";
  constructor(wanted?: string) {
    const list = TUNNEL_PROGRAMS.filter((p) => !wanted || p.name === wanted)
      .map((p) => `  ${p.name}: ${p.install}`).join("\n");
    super(
      `${
        wanted ? `${wanted} is not on PATH` : "no tunnel program (cloudflared, ngrok, bore) on PATH"
      }; install ${wanted ? "it" : "one of them"}:\n${list}`,
    );
    this.name = "NoTunnelProgramError";
  }
}

/** The tunnel program to use: `wanted`, or the first one installed. */
export async function findTunnelProgram(
  wanted?: string,
  pathVar?: string,
): Promise<{ program: TunnelProgram; path: string }> {
  for (const program of TUNNEL_PROGRAMS) {
    if (wanted && program.name !== wanted) continue;
    const path = await resolveBinary(program.name, { PATH: pathVar ?? Deno.env.get("PATH") ?? "" });
    if (path) return { program, path };
  }
  throw new NoTunnelProgramError(wanted);
}

/** A running tunnel. */
export interface Tunnel {
  publicUrl: string;
  pid: number;
  /** Resolves when the tunnel program exits. */
  exited: Promise<Deno.CommandStatus>;
  /** End the tunnel's process group (SIGTERM, then SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Start `program` exposing `port` and wait (up to `timeoutMs`) for the public URL in its
 * output. Throws with the program's last lines when it exits or stays silent.
 */
export async function startTunnel(
  found: { program: TunnelProgram; path: string },
  port: number,
  timeoutMs = 30_000,
): Promise<Tunnel> {
  const child = new Deno.Command(found.path, {
    args: found.program.args(port),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  const tail: string[] = [];
  let resolveUrl!: (url: string) => void;
  const url = new Promise<string>((r) => resolveUrl = r);
  const readLines = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        const found_ = found.program.publicUrl(line);
        if (found_) resolveUrl(found_);
      }
    }
  };
  const reading = Promise.all([readLines(child.stdout), readLines(child.stderr)]);
  const exited = child.status;
  const stop = async (graceMs = 3000) => {
    signalGroup(child.pid, "SIGTERM");
    const done = await Promise.race([exited, sleep(graceMs).then(() => undefined)]);
    if (!done) signalGroup(child.pid, "SIGKILL");
    await exited;
    await reading.catch(() => {});
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    url.then((u) => ({ url: u })),
    exited.then((s) => ({ exit: s })),
    new Promise<{ timeout: true }>((r) =>
      timer = setTimeout(() => r({ timeout: true }), timeoutMs)
    ),
  ]);
  clearTimeout(timer);
  if ("url" in outcome) return { publicUrl: outcome.url, pid: child.pid, exited, stop };
  await stop(500);
  const why = "exit" in outcome
    ? `${found.program.name} exited (code ${outcome.exit.code}) before announcing a public URL`
    : `${found.program.name} announced no public URL within ${timeoutMs / 1000}s`;
  throw new Error(`${why}; its last output:\n${tail.slice(-8).map((l) => `  ${l}`).join("\n")}`);
}

function signalGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch { /* already gone */ }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
