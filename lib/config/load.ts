/**
 * Load and validate `<root>/service.yaml` (spec §2.11), with positioned errors. The file is read
 * and validated once ({@link loadWorkspaceConfig}): the configuration, the server's settings and
 * the digest a run records all come from the same bytes.
 */
import { join } from "node:path";
import { adapterByName, availableAdapters } from "../agents/adapters/mod.ts";
import { loadAdapterModule } from "../agents/adapters/modules.ts";
import type { AgentAdapter } from "../agents/adapters/types.ts";
import { sha256Hex } from "../journal/hash.ts";
import { ValidationError } from "./errors.ts";
import { CONFIG_EXAMPLES, type ServiceConfig, ServiceConfigSchema } from "./schema.ts";
import { type ServerSettings, serverSettings } from "./server_config.ts";
import { validateYaml } from "./validate.ts";
import { parseYamlSource } from "./yaml_source.ts";

/** The configuration file's name at the workspace root. */
export const CONFIG_FILE = "service.yaml";

/** Path of the configuration file of `root`. */
export function configPath(root: string): string {
  return join(root, CONFIG_FILE);
}

/** Validate configuration text; throws ValidationError, YamlSyntaxError or ValueError. */
export function parseConfig(text: string, file = CONFIG_FILE): ServiceConfig {
  const source = parseYamlSource(file, text);
  if (source.value === null || typeof source.value !== "object" || Array.isArray(source.value)) {
    throw new ValidationError({
      file,
      path: "",
      position: { line: 1, col: 1 },
      problem: "the configuration must be a mapping with at least `cli` and `roles`",
      fix: `start from:\n    ${CONFIG_EXAMPLES.cli}\n    ${
        CONFIG_EXAMPLES.roles.replaceAll("\n", "\n    ")
      }`,
    });
  }
  const config = validateYaml(source, ServiceConfigSchema, { examples: CONFIG_EXAMPLES });
  // An adapter named under `adapters:` is registered when its module loads (loadConfig).
  if (config.cli !== "generic" && !Object.hasOwn(config.adapters, config.cli)) {
    adapterByName(config.cli); // throws ValueError: Unknown adapter
  }
  for (const [path, name] of fallbackNames(config)) {
    if (name === "generic" && !config.cli_command) {
      throw new ValidationError({
        file,
        path: path.join("."),
        position: source.locate(path),
        problem: "the generic adapter needs `cli_command`",
        fix: "set cli_command, or name another adapter",
      });
    }
    // An adapter named under `adapters:` is registered when its module loads (loadConfig).
    if (name === "generic" || Object.hasOwn(config.adapters, name) || isKnownAdapter(name)) {
      continue;
    }
    throw new ValidationError({
      file,
      path: path.join("."),
      position: source.locate(path),
      problem: `unknown adapter '${name}'`,
      fix: `name one of ${
        availableAdapters().join(", ")
      }, or register it with adapters.${name}.module`,
    });
  }
  if (config.cli === "generic" && !config.cli_command) {
    throw new ValidationError({
      file,
      path: "cli_command",
      position: source.locate(["cli"]),
      problem: "the generic adapter needs `cli_command`",
      fix:
        'add for example:\n    cli_command: "my-agent --non-interactive"\n    prompt_flag: --prompt',
    });
  }
  return config;
}

function isKnownAdapter(name: string): boolean {
  return availableAdapters().includes(name);
}

/** Every `fallback_adapters` entry with its path in the file. */
function fallbackNames(config: ServiceConfig): [(string | number)[], string][] {
  const out: [(string | number)[], string][] = config.fallback_adapters.map((n, i) => [
    ["fallback_adapters", i],
    n,
  ]);
  for (const [role, s] of Object.entries(config.roles)) {
    (s.fallback_adapters ?? []).forEach((n, i) =>
      out.push([["roles", role, "fallback_adapters", i], n])
    );
  }
  return out;
}

/** `service.yaml` validated, and the digest of the very bytes validated. */
interface ConfigFile {
  config: ServiceConfig;
  /** `sha256:` and the hex digest of the file (a run's `config_sha256`). */
  digest: string;
}

/**
 * `service.yaml` read and validated once: the configuration and its digest (both absent when the
 * workspace has no `service.yaml`) and the server's settings.
 */
export type WorkspaceConfig = (ConfigFile | { config?: undefined; digest?: undefined }) & {
  /** Host, port (`SERVICE_PORT` first), tokens and the `server` block; defaults without a file. */
  server: ServerSettings;
};

/**
 * Read and validate `<root>/service.yaml` once, importing the modules of `adapters:` (which
 * register their adapters). Throws ValidationError, YamlSyntaxError or ValueError for the file,
 * PortVariableError for a `SERVICE_PORT` that is not a port.
 */
export async function loadWorkspaceConfig(
  root: string,
  env: Record<string, string | undefined> = Deno.env.toObject(),
): Promise<WorkspaceConfig> {
  const file = await readConfigFile(root);
  const server = serverSettings(file?.config, env);
  return file ? { ...file, server } : { server };
}

/** The validated configuration of `root` ({@link loadWorkspaceConfig}); undefined without a file. */
export async function loadConfig(root: string): Promise<ServiceConfig | undefined> {
  return (await readConfigFile(root))?.config;
}

async function readConfigFile(root: string): Promise<ConfigFile | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(configPath(root));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
  // Decoded as Deno.readTextFile does: a byte-order mark stays part of the text.
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  const config = parseConfig(text, configPath(root));
  for (const [name, { module }] of Object.entries(config.adapters)) {
    await loadAdapterModule(name, module, root);
  }
  if (config.cli !== "generic") adapterByName(config.cli); // a module registered another name
  for (const [, name] of fallbackNames(config)) namedAdapter(config, name);
  return { config, digest: `sha256:${sha256Hex(bytes)}` };
}

/** The adapter that `config.cli` names, built with the generic settings. */
export function configuredAdapter(config: ServiceConfig): AgentAdapter {
  return namedAdapter(config, config.cli);
}

/** The adapter named `name` (`generic` built with the generic settings). */
export function namedAdapter(config: ServiceConfig, name: string): AgentAdapter {
  if (name !== "generic") return adapterByName(name);
  return adapterByName("generic", {
    cliCommand: config.cli_command ?? [],
    promptFlag: config.prompt_flag,
    modelFlag: config.model_flag,
  });
}

/**
 * By role, the adapters a task of the role may start with, first choice first: `cli`, then the
 * role's `fallback_adapters` (else the top-level list), each once. Pure.
 */
export function adapterChains(config: ServiceConfig): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(config.roles).map(([role, s]) => [
      role,
      [...new Set([config.cli, ...(s.fallback_adapters ?? config.fallback_adapters)])],
    ]),
  );
}
