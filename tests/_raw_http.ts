/**
 * A raw HTTP/1.1 client for hostile-client tests: it writes exactly the bytes it is given (any
 * Host, Origin, framing), so forged headers and broken bodies reach the server as a browser or
 * an attacker would send them. Every call is bounded by a timeout.
 */

import { join } from "node:path";
import type { ServerBlock } from "../lib/config/schema.ts";
import type { TokenSpec } from "../lib/auth/tokens.ts";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";

/** A parsed answer (status 0 when the server closed the connection without one). */
export interface RawAnswer {
  status: number;
  headers: Headers;
  body: string;
  /** True when the server closed the connection (EOF) before the timeout. */
  closed: boolean;
}

const encoder = new TextEncoder();

/** Build a request head + body with `Connection: close` unless the headers say otherwise. */
export function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Uint8Array,
): Uint8Array {
  const lines = [`${method} ${path} HTTP/1.1`];
  const h = { connection: "close", ...lowerKeys(headers) };
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  if (bytes && !("content-length" in h) && !("transfer-encoding" in h)) {
    (h as Record<string, string>)["content-length"] = String(bytes.length);
  }
  for (const [k, v] of Object.entries(h)) lines.push(`${k}: ${v}`);
  const head = encoder.encode(lines.join("\r\n") + "\r\n\r\n");
  if (!bytes) return head;
  const out = new Uint8Array(head.length + bytes.length);
  out.set(head);
  out.set(bytes, head.length);
  return out;
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

/** Send `bytes` to 127.0.0.1:`port` and read until EOF or `timeoutMs`. */
export async function send(port: number, bytes: Uint8Array, timeoutMs = 5000): Promise<RawAnswer> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(bytes).catch(() => {});
    return await readAnswer(conn, timeoutMs);
  } finally {
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

/** Read one answer from `conn` until EOF or `timeoutMs`. */
export async function readAnswer(conn: Deno.Conn, timeoutMs: number): Promise<RawAnswer> {
  const chunks: Uint8Array[] = [];
  let closed = false;
  const deadline = Date.now() + timeoutMs;
  const buf = new Uint8Array(64 * 1024);
  while (Date.now() < deadline) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const n = await Promise.race([
      conn.read(buf).catch(() => null),
      new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), deadline - Date.now())),
    ]);
    clearTimeout(timer);
    if (n === "timeout") break;
    if (n === null) {
      closed = true;
      break;
    }
    chunks.push(buf.slice(0, n));
    if (complete(concat(chunks))) break;
  }
  return parseAnswer(new TextDecoder().decode(concat(chunks)), closed);
}

/** True once `bytes` hold a whole answer (by Content-Length or the last chunk). */
function complete(bytes: Uint8Array): boolean {
  const text = new TextDecoder().decode(bytes);
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const head = text.slice(0, end).toLowerCase();
  const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (length) {
    return bytes.length >=
      new TextEncoder().encode(text.slice(0, end + 4)).length + Number(length[1]);
  }
  if (/\r\ntransfer-encoding:[^\r]*chunked/.test(head)) return text.endsWith("0\r\n\r\n");
  return /^http\/1\.1 (1\d\d|204|304)/.test(head);
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function parseAnswer(text: string, closed: boolean): RawAnswer {
  const end = text.indexOf("\r\n\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (!m || end < 0) return { status: 0, headers: new Headers(), body: text, closed };
  const headers = new Headers();
  for (const line of text.slice(0, end).split("\r\n").slice(1)) {
    const i = line.indexOf(":");
    if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  let body = text.slice(end + 4);
  if (headers.get("transfer-encoding")?.includes("chunked")) body = unchunk(body);
  return { status: Number(m[1]), headers, body, closed };
}

function unchunk(body: string): string {
  let out = "";
  let rest = body;
  while (rest.length) {
    const nl = rest.indexOf("\r\n");
    if (nl < 0) break;
    const size = parseInt(rest.slice(0, nl), 16);
    if (!size) break;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 4 + size);
  }
  return out;
}

/** The error code of a JSON error body, or undefined. */
export function errorCode(answer: RawAnswer): string | undefined {
  try {
    return JSON.parse(answer.body)?.error?.code;
  } catch {
    return undefined;
  }
}

/** Options of {@link loopbackServer}. */
export interface LoopbackOptions {
  /** service.yaml text (none written when empty). */
  yaml?: string;
  server?: Partial<ServerBlock>;
  tokens?: TokenSpec[];
}

/** The real server (every route) over `root` on a free loopback port, quiet. */
export async function loopbackServer(root: string, options: LoopbackOptions = {}) {
  const yaml = options.yaml ?? "cli: claude\nroles: [backend, docs]\n";
  if (yaml) await Deno.writeTextFile(join(root, "service.yaml"), yaml);
  return await startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens: options.tokens ?? [],
    announce: false,
    warn: () => {},
    server: options.server,
    app: SERVER_APP,
  });
}
