/** The zod schema of `service.yaml` (spec §2.11, DESIGN.md §6–§7). Every key, no others. */
import { z } from "zod";
import { CONFIG_SCOPES } from "../auth/tokens.ts";
import { CommandLineError, splitCommandLine } from "../agents/split_command_line.ts";
import { parseHostPort } from "../util/host_port.ts";
import { WorkersSchema } from "./kubernetes_schema.ts";
import { TrustedProxySchema } from "./trusted_proxy_schema.ts";
import { liftsAlwaysProtected } from "../protect/rules.ts";
import { DEFAULT_MAX_LANDED_FILE_MB } from "../protect/file_sizes.ts";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One bearer token: who, which scope, which variable holds its value. */
const TokenSpecSchema = z.strictObject({
  principal: z.string().min(1),
  scope: z.enum(CONFIG_SCOPES),
  token_env: z.string().regex(ENV_NAME, "must be an environment variable name"),
});

/** A browser origin: scheme, host and optional port, nothing else (`https://board.example`). */
const OriginSchema = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return /^https?:$/.test(url.protocol) && url.origin === value.replace(/\/$/, "");
  } catch {
    return false;
  }
}, "must be an origin like https://board.example.com (scheme, host, optional port; no path)");

/** `server`: how browsers and clients may reach `service serve` (docs/security.md). */
export const ServerSchema = z.strictObject({
  public_url: z.string().refine((value) => {
    try {
      return /^https?:$/.test(new URL(value).protocol);
    } catch {
      return false;
    }
  }, "must be an http(s) URL like https://board.example.com").optional(),
  allowed_origins: z.array(OriginSchema).default([]),
  max_connections: z.number().int().min(1).optional(),
  max_event_streams: z.number().int().min(1).default(64),
  header_timeout_s: z.number().positive().default(10),
  idle_timeout_s: z.number().positive().default(75),
  /** A single sign-on proxy beside the service whose user header names the principal. */
  trusted_proxy: TrustedProxySchema.optional(),
});

/** The validated `server` block. */
export type ServerBlock = z.output<typeof ServerSchema>;

/** `cli_command`: a string split like a shell would (quotes respected) or a YAML list. */
const CliCommandSchema = z.union([z.string(), z.array(z.string().min(1)).min(1)])
  .transform((v, ctx) => {
    if (Array.isArray(v)) return v;
    try {
      const words = splitCommandLine(v);
      if (words.length === 0) ctx.addIssue({ code: "custom", message: "must not be empty" });
      return words;
    } catch (e) {
      ctx.addIssue({ code: "custom", message: (e as CommandLineError).message });
      return z.NEVER;
    }
  });

/** `agent_env`: names of more environment variables forwarded to agents. */
const AgentEnvSchema = z.array(
  z.string().regex(ENV_NAME, "must be an environment variable name"),
);

/**
 * A named command run on the tree a merge would produce (DESIGN.md §10): a quality gate (exit 0
 * passes) or an evidence producer (its output is stored as evidence). `command` is a literal
 * shell command (`sh -c`); `timeout_s` its time limit (default 600 s).
 */
const CommandCheckSchema = z.strictObject({
  name: z.string().min(1).max(100).regex(/^[^\n\r]+$/, "must be one line"),
  command: z.string().min(1).max(10_000),
  timeout_s: z.number().positive().max(86_400).default(600),
});

/** A quality gate or an evidence producer. */
export type CommandCheck = z.output<typeof CommandCheckSchema>;

/** A list of named commands whose names are unique. */
export const CommandChecksSchema = z.array(CommandCheckSchema).max(50).superRefine((list, ctx) => {
  const seen = new Set<string>();
  for (const [i, c] of list.entries()) {
    if (seen.has(c.name)) {
      ctx.addIssue({ code: "custom", path: [i, "name"], message: `duplicate name ${c.name}` });
    }
    seen.add(c.name);
  }
});

/**
 * A path in the workspace that `worktree.copy` or `worktree.symlink` names: relative, `/`
 * separated, never reaching out (`..`) or into the service's state or git's (`.sdd`, `.git`).
 */
function workspaceRelative(what: string, glob: "gitignore" | "segments") {
  return z.string().min(1).max(1000).superRefine((value, ctx) => {
    const body = glob === "gitignore" ? value.replace(/^!/, "").replace(/^\//, "") : value;
    const segments = body.replace(/\/+$/, "").split("/");
    const problem = value.includes("\0") || value.includes("\n")
      ? "must be one line"
      : glob === "segments" && value.startsWith("/")
      ? "must be relative to the workspace root (no leading /)"
      : segments.some((s) => s === "..")
      ? "must not contain '..': only what is inside the workspace is " + what
      : segments.some((s) => s === "." || s === "")
      ? "must not contain empty or '.' segments"
      : [".git", ".sdd"].includes(segments[0])
      ? `${segments[0]}/ is never ${what}`
      : glob === "segments" && segments.some((s) => s.includes("**"))
      ? "use one '*' per path segment (for example packages/*/node_modules); '**' is not supported"
      : undefined;
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
}

/** A port number an agent's server may be given. */
const LeasablePort = z.number().int().min(1024).max(65535);

/**
 * `worktree` (DESIGN.md §13), at the top level and per role: what each agent worktree gets
 * before its agent starts. Keys left out take the top level's value (a role's lists add to it);
 * the defaults are applied by lib/worktree_env/spec.ts.
 */
const WorktreeSchema = z.strictObject({
  /** gitignore-style patterns of untracked files copied from the checkout (ignored ones too). */
  copy: z.array(workspaceRelative("copied", "gitignore")).max(200).optional(),
  /** Paths (one `*` per segment allowed) linked into the worktree, not copied. */
  symlink: z.array(workspaceRelative("linked", "segments")).max(200).optional(),
  /** Shell commands run in the new worktree before the agent starts. */
  setup: z.array(z.string().min(1).max(10_000)).max(50).optional(),
  /** Shell commands run after the work is captured, before the worktree is removed. */
  teardown: z.array(z.string().min(1).max(10_000)).max(50).optional(),
  /** Time limit of the whole setup (and of the whole teardown), in seconds. */
  setup_timeout_s: z.number().positive().max(86_400).optional(),
  /** Ports leased per worktree: `PORT` and `SERVICE_PORTS`. */
  ports: z.number().int().min(0).max(64).optional(),
  /** The ports leases are taken from, both ends included. */
  port_range: z.tuple([LeasablePort, LeasablePort]).refine(
    ([low, high]) => low <= high,
    "must be [low, high] with low <= high",
  ).optional(),
  /** Keep build caches (`__pycache__/`, `*.pyc`, …) out of every commit of the worktree. */
  default_ignores: z.boolean().optional(),
}).superRefine((w, ctx) => {
  if (w.ports !== undefined && w.port_range !== undefined) {
    const size = w.port_range[1] - w.port_range[0] + 1;
    if (size < w.ports) {
      ctx.addIssue({
        code: "custom",
        path: ["port_range"],
        message: `holds ${size} port(s), fewer than ports: ${w.ports}`,
      });
    }
  }
});

/** The `worktree` block as written (unset keys absent). */
export type WorktreeBlock = z.output<typeof WorktreeSchema>;

/** `fallback_adapters`: adapters tasks start with while the configured one is parked. */
const FallbackAdaptersSchema = z.array(
  z.string().regex(
    /^[a-z][a-z0-9_-]*$/,
    "adapter names are lower-case letters, digits, _ and - (as in `cli:`)",
  ),
);

/** `batch:` — the batch lane (DESIGN.md §15; docs/batch.md). */
const BatchSchema = z.strictObject({
  /** The batch API's base URL (default: the adapter's endpoint variable, else the provider's). */
  api_url: z.string().url().optional(),
  /** Requests per batch. */
  max_requests: z.number().int().min(1).max(10_000).default(100),
  /** Files every request shows besides the task's `owned_files` (paths or globs). */
  context_files: z.array(z.string().min(1)).max(200).default([]),
  /** Seconds between looks at a batch in flight (at least 1). */
  poll_interval_s: z.number().min(1).default(30),
});

/** Settings of one role (`{}` or an empty value is fine). */
const RoleSettingsSchema = z.strictObject({
  description: z.string().optional(),
  model: z.string().min(1).optional(),
  effort: z.string().min(1).optional(),
  max_agents: z.number().int().min(1).optional(),
  timeout_minutes: z.number().positive().optional(),
  agent_env: AgentEnvSchema.optional(),
  /** Quality gates of this role's tasks, added to the top-level ones. */
  quality_gates: CommandChecksSchema.optional(),
  /** This role's worktree environment, added to the top-level `worktree` (DESIGN.md §13). */
  worktree: WorktreeSchema.optional(),
  /** This role's fallback adapters (instead of the top-level list). */
  fallback_adapters: FallbackAdaptersSchema.optional(),
  /** The adapter this role's agents run (default: the top-level `cli`). */
  cli: z.string().min(1).optional(),
  /** With `cli: generic`: this role's own command (its adapter is `generic:<role>`). */
  cli_command: CliCommandSchema.optional(),
  /** With `cli: generic` and `cli_command`: the flag before the prompt. */
  prompt_flag: z.string().min(1).optional(),
  /** With `cli: generic` and `cli_command`: the flag before the model. */
  model_flag: z.string().min(1).optional(),
});

/** The settings of one role. */
export type RoleSettings = z.output<typeof RoleSettingsSchema>;

/** `roles`: a mapping of role name to settings, or a list of role names. */
const RolesSchema = z.union([
  z.record(
    z.string().regex(/^[a-z][a-z0-9_-]*$/, "role names are lower-case letters, digits, _ and -"),
    z.union([RoleSettingsSchema, z.null().transform((): RoleSettings => ({}))]),
  ),
  z.array(z.string().regex(/^[a-z][a-z0-9_-]*$/)).transform((names) =>
    Object.fromEntries(names.map((n): [string, RoleSettings] => [n, {}]))
  ),
]).refine((roles) => Object.keys(roles).length > 0, "list at least one role");

/** `trackers.<adapter>.webhook` (spec §2.11). */
const WebhookSchema = z.strictObject({
  enabled: z.boolean(),
  secret_env: z.string().regex(ENV_NAME, "must be an environment variable name"),
  public_url_base: z.string().url().optional(),
});

const ROLE_NAME = z.string().regex(
  /^[a-z][a-z0-9_-]*$/,
  "role names are lower-case letters, digits, _ and -",
);

/** A workflow state's name as the tracker shows it (matched case-insensitively). */
const STATE_NAME = z.string().trim().min(1).max(100).regex(/^[^\p{Cc}]+$/u, "must be one line");

/**
 * `trackers.<adapter>.move_to`: the state a ticket moves to when its task is claimed, lands,
 * fails, is cancelled.
 */
const TicketMovesSchema = z.strictObject({
  claimed: STATE_NAME.optional(),
  landed: STATE_NAME.optional(),
  failed: STATE_NAME.optional(),
  cancelled: STATE_NAME.optional(),
});

/** `trackers.<adapter>` (spec §2.11; the keys beyond `webhook` are documented in docs/trackers.md). */
const TrackerSchema = z.strictObject({
  webhook: WebhookSchema.optional(),
  /** Seconds between polls (default 60). */
  poll_interval_s: z.number().positive().optional(),
  /** Poll on the interval (default true when `project` is set; `true` requires `project`). */
  polling: z.boolean().optional(),
  /**
   * The one project whose tickets are taken and commented on: repository, project key, team
   * key … (docs/trackers.md). Required with `comment_on_land` or `polling: true`.
   */
  project: z.string().min(1).optional(),
  /** The tracker's API base URL (each built-in tracker has a default but tracker_a). */
  api_url: z.string().url().optional(),
  /** Variable holding the API token (default `<NAME>_TOKEN`, e.g. TRACKER_B_TOKEN). */
  token_env: z.string().regex(ENV_NAME, "must be an environment variable name").optional(),
  /** tracker_a: variable holding the account e-mail for Basic auth (Jira Cloud API tokens). */
  email_env: z.string().regex(ENV_NAME, "must be an environment variable name").optional(),
  /** Role of the tasks its tickets become (default: the first role in `roles`). */
  role: ROLE_NAME.optional(),
  /** Only tickets carrying at least one of these labels become tasks. */
  labels: z.array(z.string().min(1)).min(1).optional(),
  /** Label → role; the first listed label the ticket carries picks the role. */
  label_roles: z.record(z.string().min(1), ROLE_NAME).optional(),
  /** Comment on the ticket (merge commit, board link) when its task lands (default false). */
  comment_on_land: z.boolean().default(false),
  /** Move the ticket to these workflow states (docs/trackers.md#moving-tickets; default: never). */
  move_to: TicketMovesSchema.optional(),
  /** A module registering this tracker's webhook handler (path or npm:/jsr:/URL specifier). */
  module: z.string().min(1).optional(),
});

/** `adapters.<name>`: a third-party agent adapter (spec §7.3 entry point; docs/agents.md). */
const AdapterModuleSchema = z.strictObject({
  /** A module registering the adapter (path relative to the workspace, or npm:/jsr:/URL). */
  module: z.string().min(1),
});

/** `verification_nudge` (spec §2.11, §8). */
const VerificationNudgeSchema = z.strictObject({
  threshold: z.number().min(0).max(1).default(0.3),
  min_completions: z.number().int().min(0).default(3),
  /** Ledger records older than this are left out of the summary (default: none are). */
  max_age_hours: z.number().positive().optional(),
});

/** `container`: how `isolation: container` runs agents (DESIGN.md §14; docs/isolation.md). */
const ContainerSchema = z.strictObject({
  runtime: z.enum(["auto", "podman", "docker"]).default("auto"),
  image: z.string().min(1).regex(/^[^\s]+$/, "must be an image reference without spaces")
    .optional(),
  base_image: z.string().min(1).regex(/^[^\s]+$/, "must be an image reference without spaces")
    .default("debian:bookworm-slim"),
  /** Shell commands the generated Containerfile runs after the adapter's own install. */
  install: z.array(z.string().min(1).regex(/^[^\n\r]+$/, "must be one line")).default([]),
  setup_network: z.boolean().default(true),
  agent_network: z.enum(["restricted", "none", "open"]).default("restricted"),
  allow_hosts: z.array(
    z.string().superRefine((text, ctx) => {
      const parsed = parseHostPort(text);
      if (typeof parsed === "string") ctx.addIssue({ code: "custom", message: parsed });
    }),
  ).max(200).default([]),
});

/** `mcp_catalog`: where the MCP server catalog comes from (spec §2.1; docs/mcp.md). */
const McpCatalogSchema = z.strictObject({
  url: z.string().min(1),
  mirror_url: z.string().min(1).optional(),
  public_key: z.string().min(1).optional(),
  /**
   * Where install commands run: `auto` (a container when a runtime answers, else the host),
   * `container` (refused without one) or `host` (docs/mcp.md).
   */
  isolation: z.enum(["auto", "container", "host"]).default("auto"),
});

/** A git branch name as `git check-ref-format --branch` would take it (no spaces, `..`, `~^:?*[\\`). */
const BRANCH_NAME = z.string().min(1).max(200).regex(
  /^(?!\/|-|.*\/\/|.*\.\.|.*\/$|.*\.lock$|.*@\{)[^\s~^:?*[\\\p{Cc}]+$/u,
  "must be a branch name like main or release/2.0",
);

/**
 * `landing` (DESIGN.md §12; docs/landing.md): where finished work lands. `merge` (the default)
 * merges into the local target branch; `pull_request` pushes `agent/<session>` to `remote`, opens
 * a pull request (GitHub) or merge request (GitLab) and merges it through the host's API once the
 * base branch's required checks and reviews are satisfied.
 */
const LandingSchema = z.strictObject({
  mode: z.enum(["merge", "pull_request"]).default("merge"),
  provider: z.enum(["github", "gitlab"]).optional(),
  /** The git remote agent branches are pushed to. */
  remote: z.string().min(1).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "must be a git remote name")
    .default("origin"),
  /** GitHub: https://api.github.com or https://HOST/api/v3; GitLab: https://HOST/api/v4. */
  api_url: z.string().url().optional(),
  /** GitHub `owner/name`; GitLab the project path (`group/name`) or numeric id. */
  repo: z.string().min(1).regex(/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/, "must be owner/name")
    .optional(),
  /** Variable holding the API token (default GITHUB_TOKEN or GITLAB_TOKEN); read at use. */
  token_env: z.string().regex(ENV_NAME, "must be an environment variable name").optional(),
  /** The base branch pull requests target (default: the branch checked out in the workspace). */
  base: BRANCH_NAME.optional(),
  method: z.enum(["merge", "squash", "rebase"]).default("squash"),
  draft: z.boolean().default(false),
  labels: z.array(z.string().min(1).max(100)).max(20).default([]),
  delete_branch: z.boolean().default(true),
  /** A required check failed: a new attempt told which (`retry`), or the task FAILS (`fail`). */
  on_ci_failure: z.enum(["retry", "fail"]).default("retry"),
  /**
   * Times a failed required check is re-run on the same head before `on_ci_failure` applies (a
   * flaky test or a runner that died is not the agent's fault; no attempt is counted for it).
   * Check runs and GitLab pipelines can be re-run; a commit status cannot. 0 turns it off.
   */
  rerun_failed_checks: z.number().int().min(0).max(5).default(1),
  /**
   * Seconds between looks at an open pull request that just changed (conditional requests: an
   * unchanged answer costs GitHub no rate limit); while nothing changes the interval grows to
   * `poll_max_interval_s`. With the tracker webhook configured both are five times as long.
   */
  poll_interval_s: z.number().min(1).max(3600).default(2),
  /** The longest time between two looks at an unchanged pull request (never below the above). */
  poll_max_interval_s: z.number().min(1).max(3600).default(5),
}).superRefine((landing, ctx) => {
  if (landing.mode !== "pull_request") return;
  if (!landing.provider) {
    ctx.addIssue({
      code: "custom",
      path: ["provider"],
      message: "landing.mode pull_request needs landing.provider: github or gitlab",
    });
  }
  if (!landing.repo) {
    ctx.addIssue({
      code: "custom",
      path: ["repo"],
      message: "landing.mode pull_request needs landing.repo: the repository as owner/name " +
        "(GitLab: group/name or the numeric project id)",
    });
  }
});

/**
 * `protected_paths` (DESIGN.md §18): globs added to the protected defaults; `!glob` lifts a
 * default. What the service itself obeys (service.yaml, plan files, .worktreeinclude, .sdd/)
 * cannot be lifted: naming it is refused here.
 */
const ProtectedPathsSchema = z.array(
  z.string().min(1).superRefine((entry, ctx) => {
    const always = liftsAlwaysProtected(entry);
    if (always) {
      ctx.addIssue({
        code: "custom",
        message: `'${entry}' cannot lift ${always}: the service itself obeys it, so an agent's ` +
          "change to it always waits for an operator's merge; remove the entry",
      });
    }
  }),
);

/**
 * `max_landed_file_mb` (DESIGN.md §18): a diff that adds or grows a file over this many
 * megabytes (MiB) waits for an operator's merge; `off` lands files of any size unattended.
 */
const MaxLandedFileMbSchema = z.custom<number | "off" | false>(
  (v) =>
    v === "off" || v === false ||
    (typeof v === "number" && Number.isFinite(v) && v > 0 && v <= 1_048_576),
  {
    message: "max_landed_file_mb must be a number of megabytes above 0 (10 is the default, 0.5 " +
      "half a megabyte), or `off` to let files of any size land unattended",
  },
);

/** The whole `service.yaml`. */
export const ServiceConfigSchema = z.strictObject({
  cli: z.string().min(1),
  roles: RolesSchema,
  budget_usd: z.number().nonnegative().optional(),
  /** Local agents at once; 0 leaves every task to remote workers (`service worker`). */
  max_agents: z.number().int().min(0).optional(),
  model: z.string().min(1).optional(),
  effort: z.string().min(1).optional(),
  cli_command: CliCommandSchema.optional(),
  prompt_flag: z.string().min(1).optional(),
  model_flag: z.string().min(1).optional(),
  adapters: z.record(
    z.string().regex(
      /^[a-z][a-z0-9_-]*$/,
      "adapter names are lower-case letters, digits, _ and - (the value of `cli:`)",
    ),
    AdapterModuleSchema,
  ).default({}),
  agent_env: AgentEnvSchema.default([]),
  /** The cap of each agent's log (MiB): past it the log keeps its beginning and its end. */
  agent_log_max_mb: z.number().min(1).max(1_048_576).default(100),
  mcp_servers: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  mcp_catalog: McpCatalogSchema.optional(),
  quality_gates: CommandChecksSchema.default([]),
  worktree: WorktreeSchema.optional(),
  verification_nudge: VerificationNudgeSchema.default({ threshold: 0.3, min_completions: 3 }),
  trackers: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/), TrackerSchema).default({}),
  isolation: z.enum(["worktree", "container"]).default("worktree"),
  auto_build_image: z.boolean().default(false),
  memory_mb: z.number().int().min(64).optional(),
  cpu_cores: z.number().positive().optional(),
  container: ContainerSchema.default(ContainerSchema.parse({})),
  batch_eligible: z.boolean().default(false),
  batch: BatchSchema.default(BatchSchema.parse({})),
  fallback_adapters: FallbackAdaptersSchema.default([]),
  host: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65535).optional(),
  server: ServerSchema.default(ServerSchema.parse({})),
  heartbeat_timeout_s: z.number().positive().default(45),
  /** Agents beyond this machine's: Kubernetes Jobs (DESIGN.md §17). */
  workers: WorkersSchema.default({}),
  review: z.strictObject({ require_approval: z.boolean().default(false) })
    .default({ require_approval: false }),
  /** Globs an agent's diff never lands unattended when it touches them (DESIGN.md §18). */
  protected_paths: ProtectedPathsSchema.default([]),
  /** A diff adding or growing a file over this many MiB waits for review (DESIGN.md §18). */
  max_landed_file_mb: MaxLandedFileMbSchema.default(DEFAULT_MAX_LANDED_FILE_MB),
  /** Refuse a diff that changes files outside its task's `owned_files` (DESIGN.md §18). */
  enforce_owned_files: z.boolean().default(false),
  /**
   * `recovery.land_unreported`: land the work of an interrupted agent (spec §3.1 ORPHANED →
   * DONE) when every completion signal of its task passes, instead of continuing it in a new
   * attempt (the default, DESIGN.md §7).
   */
  recovery: z.strictObject({ land_unreported: z.boolean().default(false) })
    .default({ land_unreported: false }),
  landing: LandingSchema.default(LandingSchema.parse({})),
  auth: z.strictObject({ tokens: z.array(TokenSpecSchema).default([]) }).default({ tokens: [] }),
}).superRefine((config, ctx) => {
  if (
    config.isolation === "container" && !config.auto_build_image &&
    config.container.image === undefined
  ) {
    ctx.addIssue({
      code: "custom",
      path: ["container", "image"],
      message: "isolation: container needs the agent image: set container.image (an image " +
        "that has the agent's CLI), or auto_build_image: true to have the service build one",
    });
  }
  if (config.workers.kubernetes && !config.server.public_url) {
    ctx.addIssue({
      code: "custom",
      path: ["workers", "kubernetes"],
      message: "workers.kubernetes needs server.public_url: the URL its worker pods reach " +
        "this server at (e.g. http://service.agents.svc:8052)",
    });
  }
  // A tracker may only route tickets to roles that exist.
  const roles = new Set(Object.keys(config.roles));
  for (const [name, tracker] of Object.entries(config.trackers)) {
    // Tickets are taken, and comments written, only in the configured project (lib/trackers/scope.ts).
    const needs = tracker.comment_on_land
      ? "comment_on_land"
      : tracker.move_to
      ? "move_to"
      : tracker.polling
      ? "polling"
      : "";
    if (needs && tracker.project === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["trackers", name, needs],
        message: `needs trackers.${name}.project, the one project whose tickets become tasks ` +
          `and get comments: set it (GitHub owner/name, GitLab group/name or id, Jira project ` +
          `key, Linear team key, Plane workspace-slug/project-uuid)`,
      });
    }
    if (tracker.move_to && tracker.module) {
      // A tracker of one's own module takes webhooks only: nothing could carry out the moves.
      ctx.addIssue({
        code: "custom",
        path: ["trackers", name, "move_to"],
        message: `trackers.${name} is a tracker of your own module, which takes webhooks only: ` +
          `the service has no API client to move its tickets; remove move_to (the built-in ` +
          `trackers tracker_a to tracker_e move tickets)`,
      });
    }
    const wanted: [PropertyKey[], string][] = [];
    if (tracker.role) wanted.push([["trackers", name, "role"], tracker.role]);
    for (const [label, role] of Object.entries(tracker.label_roles ?? {})) {
      wanted.push([["trackers", name, "label_roles", label], role]);
    }
    for (const [path, role] of wanted) {
      if (!roles.has(role)) {
        ctx.addIssue({
          code: "custom",
          path,
          message: `role '${role}' is not in roles (${[...roles].join(", ")})`,
        });
      }
    }
  }
});

/** A validated configuration. */
export type ServiceConfig = z.output<typeof ServiceConfigSchema>;

/** Example fixes shown when a required key is missing. */
export const CONFIG_EXAMPLES: Record<string, string> = {
  cli:
    "cli: claude        # one of the registered adapters (claude, codex, gemini, aider, qwen, generic)",
  roles: "roles:\n  backend: {}\n  qa: {}",
  "trackers.tracker_a.webhook.enabled": "enabled: true",
  "trackers.tracker_a.webhook.secret_env": "secret_env: TRACKER_A_WEBHOOK_SECRET",
};
