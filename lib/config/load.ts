/**
 * Load and validate `<root>/service.yaml` (spec §2.11), with positioned errors. The file is read
 * and validated once ({@link loadWorkspaceConfig}): the configuration, the server's settings and
 * the digest a run records all come from the same bytes.
 */
import { join } from "node:path";
import { adapterByName, availableAdapters } from "../agents/adapters/mod.ts";
import { loadAdapterModule } from "../agents/adapters/modules.ts";
import { ValueError } from "../agents/errors.ts";
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
  checkRoleAdapters(config, file, source);
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

/**
 * `roles.<role>.cli` names a known adapter (or one `adapters:` registers); a role's own generic
 * settings need `cli: generic`, and `cli: generic` needs a command (the role's or the top level's).
 */
function checkRoleAdapters(
  config: ServiceConfig,
  file: string,
  source: ReturnType<typeof parseYamlSource>,
): void {
  for (const [role, s] of Object.entries(config.roles)) {
    const own = s.cli_command !== undefined || s.prompt_flag !== undefined ||
      s.model_flag !== undefined;
    const at = (key: string) => ["roles", role, key];
    if (own && s.cli !== "generic") {
      throw new ValidationError({
        file,
        path: at("cli").join("."),
        position: source.locate(["roles", role]),
        problem:
          `roles.${role} sets the generic adapter's cli_command, prompt_flag or model_flag ` +
          "without `cli: generic`",
        fix: `add \`cli: generic\` under roles.${role}, or remove those keys`,
      });
    }
    if (s.cli === undefined) continue;
    if (s.cli === "generic") {
      if (s.cli_command || config.cli_command) continue;
      throw new ValidationError({
        file,
        path: at("cli").join("."),
        position: source.locate(at("cli")),
        problem: `roles.${role} runs the generic adapter but no cli_command says which program`,
        fix: `add cli_command under roles.${role} (or at the top level)`,
      });
    }
    if (Object.hasOwn(config.adapters, s.cli) || isKnownAdapter(s.cli)) continue;
    throw new ValidationError({
      file,
      path: at("cli").join("."),
      position: source.locate(at("cli")),
      problem: `unknown adapter '${s.cli}'`,
      fix: `name one of ${
        availableAdapters().join(", ")
      }, or register it with adapters.${s.cli}.module`,
    });
  }
}

/**
 * The adapter a role's agents run: its `cli` (`generic:<role>` when it has a command of its own),
 * else the top-level `cli`. Pure.
 */
export function roleAdapterName(config: ServiceConfig, role: string): string {
  const s = config.roles[role];
  if (!s?.cli) return config.cli;
  return s.cli === "generic" && s.cli_command ? `generic:${role}` : s.cli;
}

/** Every adapter the roles run (the top-level `cli` first when a role uses it). */
export function roleAdapterNames(config: ServiceConfig): string[] {
  return [...new Set(Object.keys(config.roles).map((r) => roleAdapterName(config, r)))];
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

/**
 * The adapter named `name`: `generic` built with the top-level generic settings, `generic:<role>`
 * with that role's (`roles.<role>.cli_command`, …).
 */
export function namedAdapter(config: ServiceConfig, name: string): AgentAdapter {
  if (name.startsWith("generic:")) {
    const role = name.slice("generic:".length);
    const s = config.roles[role];
    if (!s?.cli_command) {
      throw new ValueError(
        `Unknown adapter '${name}': roles.${role} has no cli_command of its own`,
        `set roles.${role}.cli: generic and roles.${role}.cli_command, or name another adapter`,
      );
    }
    return adapterByName("generic", {
      cliCommand: s.cli_command,
      promptFlag: s.prompt_flag,
      modelFlag: s.model_flag,
      name,
    });
  }
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
      [
        ...new Set([
          roleAdapterName(config, role),
          ...(s.fallback_adapters ?? config.fallback_adapters),
        ]),
      ],
    ]),
  );
}
