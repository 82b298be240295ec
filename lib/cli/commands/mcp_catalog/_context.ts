/** What every `mcp catalog` subcommand needs: options, paths, the catalog, confirmation. */
import { resolve } from "node:path";
import { type CliContext, CliError, colour } from "../../command.ts";
import { loadConfig } from "../../../config/load.ts";
import type { ServiceConfig } from "../../../config/schema.ts";
import { catalogSource } from "../../../catalog/source.ts";
import { loadCatalog, type LoadedCatalog } from "../../../catalog/fetch.ts";
import { userPaths } from "../../../catalog/user_paths.ts";
import type { InstallContext } from "../../../catalog/install.ts";
import { CatalogRejectedError } from "../../../catalog/validate.ts";
import {
  entrySignatureStatus,
  importPublicKey,
  type SignatureStatus,
} from "../../../catalog/signature.ts";
import type { CatalogEntry } from "../../../catalog/schema.ts";
import { printable } from "../../../util/printable.ts";
import { writePrompt } from "../../terminal.ts";

/** The options every subcommand accepts. */
export interface CatalogFlags {
  json: boolean;
  yes: boolean;
  refresh: boolean;
  all: boolean;
  /** install: allow pin-only upgrades of this entry without asking. */
  autoUpgrade: boolean;
  /** install, upgrade: the `${VAR}` names the server may read (`--allow-env`, repeatable). */
  allowEnv: string[];
  config?: string;
}

/** A subcommand's view of the world. */
export interface CatalogCli {
  ctx: CliContext;
  flags: CatalogFlags;
  /** The positional arguments after the subcommand. */
  args: string[];
  env: Record<string, string>;
  /** service.yaml, when the workspace has a usable one. */
  config?: ServiceConfig;
  install: InstallContext;
}

/** Errors of lib/catalog and lib/mcp that are the user's to fix: printed without a stack. */
const USER_ERRORS = new Set([
  "catalog_rejected",
  "catalog_unavailable",
  "catalog_source",
  "catalog_public_key",
  "catalog_not_installable",
  "mcp_config",
  "mcp_unset_variable",
]);

/** Turn a user-fixable domain error into a CliError; anything else passes. */
export function asCliError(e: unknown): unknown {
  const code = (e as { code?: string })?.code;
  return code && USER_ERRORS.has(code) ? new CliError((e as Error).message) : e;
}

/** Build the subcommand context (loads service.yaml when there is one). */
export async function catalogCli(
  ctx: CliContext,
  flags: CatalogFlags,
  args: string[],
): Promise<CatalogCli> {
  const env = Deno.env.toObject();
  let config: ServiceConfig | undefined;
  try {
    config = await loadConfig(ctx.root);
  } catch (e) {
    ctx.stderr(
      colour.yellow(`warning: service.yaml not usable: ${(e as Error).message.split("\n")[0]}`),
    );
  }
  const paths = userPaths((n) => env[n]);
  return {
    ctx,
    flags,
    args,
    env,
    config,
    install: {
      configPath: flags.config ? resolve(flags.config) : paths.mcpConfig,
      stateDir: paths.state,
      processEnv: env,
      installTimeoutMs: seconds(env.SERVICE_MCP_INSTALL_TIMEOUT_S),
      healthTimeoutMs: seconds(env.SERVICE_MCP_HEALTH_TIMEOUT_S),
    },
  };
}

function seconds(value: string | undefined): number | undefined {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? n * 1000 : undefined;
}

/** The catalog (cached or fetched); warnings go to stderr; a rejection lists every violation. */
export async function theCatalog(cli: CatalogCli): Promise<LoadedCatalog> {
  const source = catalogSource(cli.config, (n) => cli.env[n], cli.ctx.root);
  try {
    const loaded = await loadCatalog(source, {
      cacheDir: userPaths((n) => cli.env[n]).cache,
      refresh: cli.flags.refresh,
      timeoutMs: seconds(cli.env.SERVICE_MCP_CATALOG_TIMEOUT_S),
    });
    for (const w of loaded.warnings) cli.ctx.stderr(colour.yellow(`warning: ${w}`));
    return loaded;
  } catch (e) {
    if (e instanceof CatalogRejectedError && cli.flags.json) {
      cli.ctx.stdout(JSON.stringify(
        { error: e.code, source: e.source, violations: e.violations },
        null,
        2,
      ));
    }
    throw e;
  }
}

/** The entry `id`, or an error that suggests the nearest ids. */
export function entryById(loaded: LoadedCatalog, id: string | undefined): CatalogEntry {
  if (!id) throw new CliError("name the entry: `service mcp catalog <subcommand> ID`");
  const entry = loaded.catalog.entries.find((e) => e.id === id);
  if (entry) return entry;
  const near = loaded.catalog.entries.map((e) => e.id).filter((x) =>
    x.includes(id) || id.includes(x)
  );
  throw new CliError(
    `no catalog entry "${id}"${
      near.length ? ` (did you mean ${near.slice(0, 3).join(", ")}?)` : ""
    }; ` +
      "`service mcp catalog search WORD` finds entries",
  );
}

/** The signature status of every entry by id (best effort; a bad key is a warning). */
export async function signatures(
  cli: CatalogCli,
  loaded: LoadedCatalog,
): Promise<Map<string, SignatureStatus>> {
  const source = catalogSource(cli.config, (n) => cli.env[n], cli.ctx.root);
  let key: CryptoKey | undefined;
  if (source.publicKey) {
    try {
      key = await importPublicKey(source.publicKey);
    } catch (e) {
      cli.ctx.stderr(colour.yellow(`warning: ${(e as Error).message}; signatures not checked`));
    }
  }
  const out = new Map<string, SignatureStatus>();
  for (const raw of loaded.raw.entries) {
    out.set(String(raw.id), await entrySignatureStatus(raw, key));
  }
  return out;
}

async function readLine(): Promise<string> {
  const buf = new Uint8Array(1);
  const bytes: number[] = [];
  while (true) {
    const n = await Deno.stdin.read(buf);
    if (n === null || buf[0] === 0x0a) break;
    bytes.push(buf[0]);
    if (bytes.length > 1024) break;
  }
  return new TextDecoder().decode(new Uint8Array(bytes)).trim();
}

/**
 * Ask before changing the user's files (DESIGN.md §9): `--yes` accepts; otherwise the answer is
 * read from standard input, terminal or not, and anything but `y`/`yes` declines.
 */
export async function confirm(cli: CatalogCli, question: string): Promise<boolean> {
  return cli.flags.yes || await ask(question);
}

/**
 * Ask `question` and read the answer from standard input (terminal or not): only `y`/`yes`
 * accepts. `--yes` does not answer it (a variable's consent is never given in bulk).
 */
export async function ask(question: string): Promise<boolean> {
  await writePrompt(`${question} [y/N] `);
  const answer = (await readLine()).toLowerCase();
  if (!Deno.stdin.isTerminal()) await writePrompt(`${printable(answer)}\n`);
  return answer === "y" || answer === "yes";
}
