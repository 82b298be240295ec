/** `service mcp catalog …`: browse the MCP server catalog; install, upgrade and check servers. */
import { parseArgs } from "node:util";
import { CliError, type Command } from "../command.ts";
import type { CatalogCli } from "./mcp_catalog/_context.ts";
import { suggest } from "../../util/levenshtein.ts";

// Loaded when run: the catalog's modules are not kept by every process the CLI starts (a
// server would hold them for nothing).
const listing = () => import("./mcp_catalog/listing.ts");
const installing = () => import("./mcp_catalog/install.ts");
const SUBCOMMANDS: Record<string, (cli: CatalogCli) => Promise<number>> = {
  browse: async (cli) => (await listing()).browse(cli),
  search: async (cli) => (await listing()).search(cli),
  info: async (cli) => (await listing()).info(cli),
  install: async (cli) => (await installing()).install(cli),
  "list-installed": async (cli) => (await listing()).listInstalled(cli),
  upgrade: async (cli) => (await installing()).upgrade(cli),
  uninstall: async (cli) => (await installing()).uninstall(cli),
  status: async (cli) => (await import("./mcp_catalog/status.ts")).status(cli),
};

/** `service mcp catalog`: dispatches to its subcommands. */
export const mcpCatalogCommand: Command = {
  name: "mcp catalog",
  summary: "browse the MCP server catalog; install, upgrade and health-check MCP servers",
  help: `Usage: service mcp catalog <subcommand> [options]

Subcommands:
  browse              every entry of the catalog (id, pin, transports, verified, installed)
  search QUERY        entries whose id, name or description contain every word of QUERY
  info ID             every field of an entry, what installing it runs and writes, its state
  install ID          preview, ask, run its install command in a sandbox, write the entry into
                      the service-managed block of your MCP configuration, health-check it
  list-installed      the entries in the service-managed block, with their last health check
  upgrade [ID|--all]  compare installed pins with the catalog; apply without asking the upgrades
                      you allowed (--auto-upgrade at install, the catalog's auto_upgrade, only the
                      pin changes); preview and ask for the named one (or every other with --all)
  uninstall ID        remove the entry from the service-managed block (nothing else changes)
  status              start every installed server and do an MCP initialize handshake

Options:
  --json          print JSON (browse, search, info, list-installed, upgrade, status)
  --yes           accept without asking (install, upgrade, uninstall); otherwise the answer is
                  read from standard input and anything but y/yes declines. It never lets a
                  server read a variable: that takes --allow-env
  --allow-env NAME  install, upgrade: let the server read \${NAME} from your environment
                  (repeat for each; a NAME the entry does not read is refused). Names not given
                  are asked for, or under --yes not granted (written as \${NAME})
  --refresh       fetch the catalog even when the cached copy is less than 1 hour old
  --config PATH   the MCP configuration file to edit (default
                  $XDG_CONFIG_HOME/service/mcp.json, i.e. ~/.config/service/mcp.json)
  --all           upgrade every entry with a newer pin (each one not allowed to upgrade by
                  itself is previewed and asked for)
  --auto-upgrade  install: let \`upgrade\` apply this entry's new pins without asking, while the
                  catalog marks it auto_upgrade and nothing but the pin changes

A catalog's \`\${VAR}\` in command, args or env is passed as written unless you allow the
variable: with --allow-env VAR, or when asked at install (the preview names the variables, never
their values). --yes alone installs without allowing any.

Catalog source: SERVICE_MCP_CATALOG_URL, else mcp_catalog.url in service.yaml (an https URL or a
local path; mcp_catalog.mirror_url is tried when it fails; mcp_catalog.public_key checks entry
signatures). Cached under $XDG_CACHE_HOME/service/. A catalog that breaks a rule is rejected whole
(exit 1, every violation listed with its JSON path); the cached copy is kept and used.

Environment:
  SERVICE_MCP_INSTALL_TIMEOUT_S   install command limit (default 600)
  SERVICE_MCP_HEALTH_TIMEOUT_S    start + handshake limit (default 60)
  SERVICE_MCP_CATALOG_TIMEOUT_S   catalog request limit (default 20)

See docs/mcp.md.`,
  async run(args, ctx) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        json: { type: "boolean", default: false },
        yes: { type: "boolean", short: "y", default: false },
        refresh: { type: "boolean", default: false },
        all: { type: "boolean", default: false },
        "auto-upgrade": { type: "boolean", default: false },
        "allow-env": { type: "string", multiple: true, default: [] },
        config: { type: "string" },
      },
    });
    const [name, ...rest] = positionals;
    const handler = name === undefined ? undefined : SUBCOMMANDS[name];
    if (!handler) {
      const guess = name === undefined ? undefined : suggest(name, Object.keys(SUBCOMMANDS));
      throw new CliError(
        `${name === undefined ? "name a subcommand" : `unknown subcommand "${name}"`}${
          guess ? ` (did you mean \`${guess}\`?)` : ""
        }: one of ${Object.keys(SUBCOMMANDS).join(", ")}; see \`service mcp catalog --help\``,
      );
    }
    if (values.all && name !== "upgrade") throw new CliError("--all goes with `upgrade`");
    if (values["auto-upgrade"] && name !== "install") {
      throw new CliError(
        "--auto-upgrade goes with `install` (it is your consent, kept in the install record)",
      );
    }
    const allowEnv = values["allow-env"];
    if (allowEnv.length > 0 && name !== "install" && name !== "upgrade") {
      throw new CliError("--allow-env goes with `install` or `upgrade` (it is your consent)");
    }
    const badName = allowEnv.find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
    if (badName !== undefined) {
      throw new CliError(
        `--allow-env ${
          JSON.stringify(badName)
        } is not a variable name: give the NAME of a \${NAME}`,
      );
    }
    const { asCliError, catalogCli } = await import("./mcp_catalog/_context.ts");
    try {
      const cli = await catalogCli(ctx, {
        json: values.json,
        yes: values.yes,
        refresh: values.refresh,
        all: values.all,
        autoUpgrade: values["auto-upgrade"],
        allowEnv,
        config: values.config,
      }, rest);
      return await handler(cli);
    } catch (e) {
      throw asCliError(e);
    }
  },
};
