/**
 * The user's MCP configuration file (DESIGN.md §9): JSON with comments whose top-level
 * `service-managed` key holds the catalog installs. Only the value of that key is rewritten (it
 * is the service's); when the key is new it is inserted on its own line after the last property.
 * jsonc-parser locates the ranges. Everything else stays byte for byte (at most one comma is added
 * after the user's last property). Writes are atomic and serialised across processes by an
 * exclusive lock on `<file>.lock`.
 */
import {
  createScanner,
  findNodeAtLocation,
  parse,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from "jsonc-parser";
import { dirname } from "node:path";
import { writeFileAtomic } from "../util/atomic_write.ts";

/** The key of the block the service owns. */
const MANAGED_KEY = "service-managed";

/** One server as written for MCP clients. */
export interface ManagedServer {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** What the service remembers about an install: what ran, and what its user consented to. */
export interface InstalledRecord {
  version_pin: string;
  installed_at: string;
  verified_by_service: boolean;
  /** The user's consent to pin-only upgrades without asking (`install --auto-upgrade`). */
  auto_upgrade: boolean;
  /** The install command that ran; an upgrade that changes it asks. Absent in older records. */
  install_command?: string[];
  /** Variables the user let this server read (`${NAME}` in its settings); absent: none. */
  allowed_env?: string[];
}

/** The `service-managed` block. */
export interface ManagedBlock {
  mcpServers: Record<string, ManagedServer>;
  installed: Record<string, InstalledRecord>;
}

/** One change to the managed block. */
export type ManagedEdit =
  | { op: "set"; id: string; server: ManagedServer; record: InstalledRecord }
  | { op: "remove"; id: string };

/** The MCP configuration file cannot be read or edited; names the file and the fix. */
export class McpConfigError extends Error {
  /** Machine-readable kind of failure. */
  readonly code = "mcp_config";
  constructor(message: string) {
    super(message);
    this.name = "McpConfigError";
  }
}

function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

function parseText(text: string, file: string): Record<string, unknown> {
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0];
    throw new McpConfigError(
      `${file}:${lineCol(text, e.offset)}: ${printParseErrorCode(e.error)}: ` +
        "fix the file by hand (nothing was changed)",
    );
  }
  if (value === undefined && text.trim() === "") return {};
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new McpConfigError(`${file}: the top level must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** The managed block of a configuration text (empty when absent). Pure. */
export function managedBlock(text: string | undefined, file = "mcp.json"): ManagedBlock {
  if (text === undefined) return { mcpServers: {}, installed: {} };
  const block = parseText(text, file)[MANAGED_KEY];
  if (block === undefined) return { mcpServers: {}, installed: {} };
  if (!block || typeof block !== "object" || Array.isArray(block)) {
    throw new McpConfigError(
      `${file}: "${MANAGED_KEY}" must be an object; remove it to let the service recreate it`,
    );
  }
  const b = block as Partial<ManagedBlock>;
  for (const key of ["mcpServers", "installed"] as const) {
    const v = b[key];
    if (v !== undefined && (!v || typeof v !== "object" || Array.isArray(v))) {
      throw new McpConfigError(
        `${file}: "${MANAGED_KEY}.${key}" must be an object; remove it to let the service recreate it`,
      );
    }
  }
  return { mcpServers: { ...(b.mcpServers ?? {}) }, installed: { ...(b.installed ?? {}) } };
}

/** A new configuration file holding only the managed block. */
function freshText(block: ManagedBlock): string {
  return JSON.stringify({ [MANAGED_KEY]: block }, null, 2) + "\n";
}

/** The whitespace that starts the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

/** The block as pretty JSON whose inner lines sit under `indent`. */
function pretty(block: ManagedBlock, indent: string): string {
  return JSON.stringify(block, null, 2).replace(/\n/g, `\n${indent}`);
}

/** Insert the `service-managed` property after the last top-level property. */
function insertBlock(text: string, block: ManagedBlock): string {
  const root = parseTree(text, [], { allowTrailingComma: true })!;
  const last = root.children?.at(-1);
  const close = root.offset + root.length - 1; // the closing brace
  if (!last) {
    // `{}` or `{ /* comments */ }`: the block goes before the closing brace, on its own line.
    const before = text.slice(0, close).replace(/[ \t\r\n]*$/, "");
    return `${before}\n  "${MANAGED_KEY}": ${pretty(block, "  ")}\n${text.slice(close)}`;
  }
  const indent = lineIndent(text, last.offset);
  const valueEnd = last.offset + last.length;
  // Is the last property already followed by a comma (JSONC allows a trailing one)?
  const scanner = createScanner(text, true);
  scanner.setPosition(valueEnd);
  let out = text;
  let shift = 0;
  if (scanner.scan() !== 5 /* CommaToken */) {
    out = `${out.slice(0, valueEnd)},${out.slice(valueEnd)}`;
    shift = 1;
  }
  const newline = out.indexOf("\n", valueEnd + shift);
  const property = `"${MANAGED_KEY}": ${pretty(block, indent)}`;
  if (newline !== -1 && newline < close + shift) {
    // Own line, after the rest of the last property's line (its comma, its comment).
    return `${out.slice(0, newline + 1)}${indent}${property}\n${out.slice(newline + 1)}`;
  }
  return `${out.slice(0, close + shift)} ${property}${out.slice(close + shift)}`;
}

/**
 * Apply `edits` to the configuration text (undefined: no file yet). Only the value of the
 * `service-managed` key changes (or the key is added). Pure.
 */
export function editManaged(text: string | undefined, edits: ManagedEdit[], file = "mcp.json") {
  const block = managedBlock(text, file);
  for (const e of edits) {
    if (e.op === "set") {
      block.mcpServers[e.id] = e.server;
      block.installed[e.id] = e.record;
    } else {
      delete block.mcpServers[e.id];
      delete block.installed[e.id];
    }
  }
  if (text === undefined || text.trim() === "") return freshText(block);
  const node = findNodeAtLocation(parseTree(text, [], { allowTrailingComma: true })!, [
    MANAGED_KEY,
  ]);
  const out = node
    ? text.slice(0, node.offset) + pretty(block, lineIndent(text, node.parent!.offset)) +
      text.slice(node.offset + node.length)
    : insertBlock(text, block);
  managedBlock(out, file); // the result must read back
  return out;
}

/** Read the configuration file; undefined when it does not exist. */
export async function readConfigText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new McpConfigError(`cannot read ${path}: ${(e as Error).message}`);
  }
}

/** The file a write should replace: a symlinked configuration keeps its link. */
async function realTarget(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return path;
  }
}

/**
 * Lock the file, read it, let `decide` compute the edits from the current managed block, apply
 * them and write atomically. A second process waits for the lock, so it reads the first one's
 * result and cannot lose it. Returns the block after the change.
 */
export async function updateMcpConfig(
  path: string,
  decide: (current: ManagedBlock) => ManagedEdit[] | Promise<ManagedEdit[]>,
): Promise<ManagedBlock> {
  await Deno.mkdir(dirname(path), { recursive: true });
  using lock = await Deno.open(`${path}.lock`, { create: true, write: true });
  await lock.lock(true);
  try {
    const target = await realTarget(path);
    const text = await readConfigText(target);
    const edits = await decide(managedBlock(text, path));
    if (edits.length === 0) return managedBlock(text, path);
    const next = editManaged(text, edits, path);
    let mode: number | undefined;
    try {
      mode = (await Deno.stat(target)).mode ?? undefined;
    } catch { /* new file: the default mode */ }
    await writeFileAtomic(target, next, mode === undefined ? 0o600 : mode & 0o777);
    return managedBlock(next, path);
  } finally {
    await lock.unlock();
  }
}
