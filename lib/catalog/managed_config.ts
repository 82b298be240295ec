/**
 * The user's MCP configuration file (DESIGN.md §9): JSON with comments whose top-level
 * `service-managed` key holds the catalog installs. Only the value of that key is rewritten (it
 * is the service's); when the key is new it is inserted on its own line after the last property.
 * jsonc-parser locates the ranges. Everything else stays byte for byte (at most one comma is added
 * after the user's last property). Writes are atomic and serialised across processes by an
 * exclusive lock on `<file>.lock`.
 */
import {
  findNodeAtLocation,
  parse,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from "jsonc-parser";
import { dirname } from "node:path";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { insertBlock, lineEnding, lineIndent, MANAGED_KEY, prettyValue } from "./managed_insert.ts";

/** A byte order mark some editors write first; it is kept, and parsed past. */
const BOM = "\uFEFF";

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
  const body = text.startsWith(BOM) ? text.slice(1) : text;
  const errors: ParseError[] = [];
  const value = parse(body, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0];
    throw new McpConfigError(
      `${file}:${lineCol(body, e.offset)}: ${printParseErrorCode(e.error)}: ` +
        "fix the file by hand (nothing was changed)",
    );
  }
  if (value === undefined && body.trim() === "") return {};
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new McpConfigError(`${file}: the top level must be a JSON object`);
  }
  refuseTwoBlocks(body, file);
  return value as Record<string, unknown>;
}

/**
 * A second top-level `service-managed` key is refused: readers take the last, an edit would
 * change the first, and an install would be lost without a word.
 */
function refuseTwoBlocks(body: string, file: string): void {
  const keys = (parseTree(body, [], { allowTrailingComma: true })?.children ?? [])
    .map((p) => p.children?.[0])
    .filter((k) => k?.value === MANAGED_KEY);
  if (keys.length < 2) return;
  throw new McpConfigError(
    `${file}: "${MANAGED_KEY}" appears ${keys.length} times (at ` +
      `${keys.map((k) => lineCol(body, k!.offset)).join(", ")}); remove all but one by hand ` +
      "(nothing was changed)",
  );
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
  if (text === undefined || text.replace(BOM, "").trim() === "") {
    return (text?.startsWith(BOM) ? BOM : "") + freshText(block);
  }
  const bom = text.startsWith(BOM) ? BOM : "";
  const body = text.slice(bom.length);
  const root = parseTree(body, [], { allowTrailingComma: true })!;
  const node = findNodeAtLocation(root, [MANAGED_KEY]);
  const out = bom + (node
    ? body.slice(0, node.offset) +
      prettyValue(block, lineIndent(body, node.parent!.offset), lineEnding(body)) +
      body.slice(node.offset + node.length)
    : insertBlock(body, root, block));
  // The result must read back as exactly the block meant: never report an install that is lost.
  if (JSON.stringify(managedBlock(out, file)) !== JSON.stringify(block)) {
    throw new McpConfigError(
      `${file}: the "${MANAGED_KEY}" block could not be placed so that it reads back; add ` +
        `"${MANAGED_KEY}": {} as a top-level key by hand and run the command again ` +
        "(nothing was changed)",
    );
  }
  return out;
}

/** Read the configuration file; undefined when it does not exist. */
export async function readConfigText(path: string): Promise<string | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new McpConfigError(`cannot read ${path}: ${(e as Error).message}`);
  }
  return decodeConfig(bytes, path);
}

/**
 * The file's bytes as text, its byte order mark kept. Bytes that are not UTF-8 (a comment saved
 * as Latin-1) are refused: decoding would replace them, and writing back would change the
 * user's bytes outside the block. Pure.
 */
export function decodeConfig(bytes: Uint8Array, path: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    const good = validUtf8Prefix(bytes);
    const text = new TextDecoder().decode(bytes.subarray(0, good));
    throw new McpConfigError(
      `${path}:${lineCol(text, text.length)}: byte 0x${bytes[good].toString(16)} is not UTF-8: ` +
        "save the file as UTF-8 (nothing was changed)",
    );
  }
}

/** The length of the longest prefix of `bytes` that decodes as UTF-8. */
function validUtf8Prefix(bytes: Uint8Array): number {
  const strict = new TextDecoder("utf-8", { fatal: true });
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    let ok = true;
    try {
      strict.decode(bytes.subarray(0, mid));
    } catch {
      ok = false;
    }
    if (ok) lo = mid;
    else hi = mid - 1;
  }
  return lo;
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
