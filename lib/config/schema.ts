/** The zod schema of `service.yaml` (spec §2.11, DESIGN.md §6–§7). Every key, no others. */
import { z } from "zod";
import { SCOPES } from "../auth/tokens.ts";
import { CommandLineError, splitCommandLine } from "../agents/split_command_line.ts";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One bearer token: who, which scope, which variable holds its value. */
export const TokenSpecSchema = z.strictObject({
  principal: z.string().min(1),
  scope: z.enum(SCOPES),
  token_env: z.string().regex(ENV_NAME, "must be an environment variable name"),
});

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

/** Settings of one role (`{}` or an empty value is fine). */
const RoleSettingsSchema = z.strictObject({
  description: z.string().optional(),
  model: z.string().min(1).optional(),
  effort: z.string().min(1).optional(),
  max_agents: z.number().int().min(1).optional(),
  timeout_minutes: z.number().positive().optional(),
  agent_env: AgentEnvSchema.optional(),
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

/** `trackers.<adapter>`. */
const TrackerSchema = z.strictObject({
  webhook: WebhookSchema.optional(),
  poll_interval_s: z.number().positive().optional(),
});

/** `verification_nudge` (spec §2.11, §8). */
const VerificationNudgeSchema = z.strictObject({
  threshold: z.number().min(0).max(1).default(0.3),
  min_completions: z.number().int().min(0).default(3),
});

/** The whole `service.yaml`. */
export const ServiceConfigSchema = z.strictObject({
  cli: z.string().min(1),
  roles: RolesSchema,
  budget_usd: z.number().nonnegative().optional(),
  max_agents: z.number().int().min(1).optional(),
  model: z.string().min(1).optional(),
  effort: z.string().min(1).optional(),
  cli_command: CliCommandSchema.optional(),
  prompt_flag: z.string().min(1).optional(),
  model_flag: z.string().min(1).optional(),
  agent_env: AgentEnvSchema.default([]),
  mcp_servers: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  verification_nudge: VerificationNudgeSchema.default({ threshold: 0.3, min_completions: 3 }),
  trackers: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/), TrackerSchema).default({}),
  isolation: z.enum(["worktree", "container"]).default("worktree"),
  auto_build_image: z.boolean().default(false),
  memory_mb: z.number().int().min(64).optional(),
  cpu_cores: z.number().positive().optional(),
  batch_eligible: z.boolean().default(false),
  host: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65535).optional(),
  heartbeat_timeout_s: z.number().positive().default(45),
  review: z.strictObject({ require_approval: z.boolean().default(false) })
    .default({ require_approval: false }),
  auth: z.strictObject({ tokens: z.array(TokenSpecSchema).default([]) }).default({ tokens: [] }),
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
