/**
 * The tunnel subsystem (spec §4.2 rule 8): expose a laptop-run server through whichever tunnel
 * program is installed — cloudflared (a quick tunnel on trycloudflare.com), ngrok, or bore —
 * and learn its public URL from the program's own output lines. The tunnel runs through
 * lib/process/spawn.ts (its own process group, ended whole).
 */
import { resolveBinary } from "../agents/preflight.ts";
import { type ProcessStatus, spawnProcess } from "../process/spawn.ts";

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
  /** Resolves when the tunnel program has exited. */
  exited: Promise<ProcessStatus>;
  /** End the tunnel's process tree (SIGTERM, then SIGKILL after `graceMs`, default 3 s). */
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
  let resolveUrl!: (url: string) => void;
  const url = new Promise<string>((r) => resolveUrl = r);
  const proc = spawnProcess([found.path, ...found.program.args(port)], {
    graceMs: 3000,
    tailLines: 8,
    onLine: (line) => {
      const announced = found.program.publicUrl(line);
      if (announced) resolveUrl(announced);
    },
  });
  const stop = async (graceMs?: number) => {
    await proc.end("stop", graceMs);
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    url.then((u) => ({ url: u })),
    proc.status.then((s) => ({ exit: s })),
    new Promise<{ timeout: true }>((r) =>
      timer = setTimeout(() => r({ timeout: true }), timeoutMs)
    ),
  ]);
  clearTimeout(timer);
  if ("url" in outcome) {
    return { publicUrl: outcome.url, pid: proc.pid, exited: proc.status, stop };
  }
  await stop(500);
  const why = "exit" in outcome
    ? `${found.program.name} exited (code ${outcome.exit.code}) before announcing a public URL`
    : `${found.program.name} announced no public URL within ${timeoutMs / 1000}s`;
  throw new Error(`${why}; its last output:\n${proc.tail.map((l) => `  ${l}`).join("\n")}`);
}
