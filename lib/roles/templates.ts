/**
 * Role templates (spec §7.3 TemplateError, DESIGN.md §7): each role is a directory holding
 * `system_prompt.md`, `task_prompt.md` and `config.yaml`. The workspace's
 * `templates/roles/<name>/` overrides the built-in `templates/roles/<name>/` shipped here.
 */
import { join } from "node:path";
import { BUILTIN_TEMPLATES } from "./builtin_templates.ts";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { parse as parseYaml } from "yaml";
import type { CompletionSignal, Task } from "../tasks/task.ts";
import { suggest } from "../util/levenshtein.ts";
import { ROLE_NAME } from "../ids.ts";
import { promptGoal, promptTitle } from "./prompt_goal.ts";

/** The files every role directory holds. */
const TEMPLATE_FILES = ["system_prompt.md", "task_prompt.md", "config.yaml"] as const;

/** Placeholders `task_prompt.md` must contain. */
const REQUIRED_PLACEHOLDERS = ["{{goal}}", "{{reporting}}"] as const;

/** Every placeholder a template may use (`{{name}}`); any other is a typo, refused up front. */
const KNOWN_PLACEHOLDERS = [
  "task_id",
  "title",
  "role",
  "goal",
  "priority",
  "scope",
  "complexity",
  "depends_on",
  "owned_files",
  "completion_signals",
  "reporting",
] as const;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]*)\s*\}\}/g;

/** Placeholders of `text` that no task fills. */
function unknownPlaceholders(text: string): string[] {
  const known = new Set<string>(KNOWN_PLACEHOLDERS);
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]))].filter((n) =>
    !known.has(n)
  );
}

/** Directory of the built-in templates. */
const BUILTIN_TEMPLATES_DIR = fileURLToPath(
  new URL("../../templates/roles/", import.meta.url),
);

/** A role template directory is missing or invalid. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TemplateError";
  }
}

/** `config.yaml` of a role template. */
const RoleTemplateConfigSchema = z.strictObject({
  description: z.string().optional(),
  model: z.string().min(1).optional(),
  effort: z.string().min(1).optional(),
  timeout_minutes: z.number().positive().optional(),
});

/** A loaded role template. */
export interface RoleTemplate {
  role: string;
  dir: string;
  builtin: boolean;
  systemPrompt: string;
  taskPrompt: string;
  config: z.output<typeof RoleTemplateConfigSchema>;
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** The directory that provides `role`: the workspace's, else the built-in one, else undefined. */
export async function roleTemplateDir(
  root: string,
  role: string,
): Promise<{ dir: string; builtin: boolean } | undefined> {
  if (!ROLE_NAME.test(role)) return undefined;
  const own = join(root, "templates", "roles", role);
  if (await isDir(own)) return { dir: own, builtin: false };
  // Built-ins come from the embedded copy (a single-file bundle has no templates/ beside it).
  if (Object.hasOwn(BUILTIN_TEMPLATES, role)) {
    return { dir: join(BUILTIN_TEMPLATES_DIR, role), builtin: true };
  }
  return undefined;
}

/** Load and check the template of `role` (TemplateError naming the file and directory). */
export async function loadRoleTemplate(root: string, role: string): Promise<RoleTemplate> {
  const found = await roleTemplateDir(root, role);
  if (!found) {
    throw new TemplateError(
      `no template for role '${role}': create ${join(root, "templates", "roles", role)}/ with ` +
        `${TEMPLATE_FILES.join(", ")} (built-in roles: ${(await listBuiltinRoles()).join(", ")})`,
    );
  }
  const texts: Record<string, string> = {};
  for (const file of TEMPLATE_FILES) {
    try {
      texts[file] = found.builtin
        ? BUILTIN_TEMPLATES[role][file]
        : await Deno.readTextFile(join(found.dir, file));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        throw new TemplateError(
          `role '${role}': ${file} is missing in ${found.dir}; each role directory holds ${
            TEMPLATE_FILES.join(", ")
          }`,
        );
      }
      throw e;
    }
  }
  const missing = REQUIRED_PLACEHOLDERS.filter((p) => !texts["task_prompt.md"].includes(p));
  if (missing.length > 0) {
    throw new TemplateError(
      `role '${role}': ${join(found.dir, "task_prompt.md")} lacks the placeholder(s) ${
        missing.join(", ")
      }; the task goal and the reporting instructions must appear in every task prompt`,
    );
  }
  for (const file of ["system_prompt.md", "task_prompt.md"] as const) {
    const unknown = unknownPlaceholders(texts[file]);
    if (unknown.length === 0) continue;
    const hints = unknown.map((n) => {
      const guess = suggest(n, KNOWN_PLACEHOLDERS);
      return `{{${n}}}${guess ? ` (did you mean {{${guess}}}?)` : ""}`;
    });
    throw new TemplateError(
      `role '${role}': ${join(found.dir, file)} uses unknown placeholder(s) ${hints.join(", ")}; ` +
        `known: ${KNOWN_PLACEHOLDERS.map((n) => `{{${n}}}`).join(", ")}`,
    );
  }
  let raw: unknown;
  try {
    raw = parseYaml(texts["config.yaml"]) ?? {};
  } catch (e) {
    throw new TemplateError(
      `role '${role}': ${join(found.dir, "config.yaml")} is not valid YAML: ${
        (e as Error).message
      }`,
    );
  }
  const config = RoleTemplateConfigSchema.safeParse(raw);
  if (!config.success) {
    const i = config.error.issues[0];
    throw new TemplateError(
      `role '${role}': ${join(found.dir, "config.yaml")}: ${i.path.join(".") || "(top)"}: ${
        i.code === "unrecognized_keys" ? `unknown key(s) ${i.keys.join(", ")}` : i.message
      }`,
    );
  }
  return {
    role,
    dir: found.dir,
    builtin: found.builtin,
    systemPrompt: texts["system_prompt.md"],
    taskPrompt: texts["task_prompt.md"],
    config: config.data,
  };
}

/** Names of the built-in role templates. */
export function listBuiltinRoles(): Promise<string[]> {
  return Promise.resolve(Object.keys(BUILTIN_TEMPLATES).sort());
}

/** The reporting instructions every agent gets (DESIGN.md §7). */
const REPORTING_INSTRUCTIONS = `When the goal is met, report completion:

    curl -sS -X POST "$SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/complete" \\
      -H "Authorization: Bearer $SERVICE_TOKEN" -H "Content-Type: application/json" \\
      -d '{"summary": "<one paragraph: what you changed and how you checked it>"}'

The JSON body is optional. SERVICE_TOKEN is this session's own credential: it reports on this task only.
If you cannot finish, POST to "$SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/fail" with
{"reason": "<what is missing>"} instead.

An operator may send you follow-ups while you work. After each step, read them and follow them:

    curl -sS "$SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/messages" \\
      -H "Authorization: Bearer $SERVICE_TOKEN"`;

function renderSignal(s: CompletionSignal): string {
  if ("path_exists" in s) return `- the path \`${s.path_exists}\` exists`;
  if ("glob_exists" in s) return `- a file matches \`${s.glob_exists}\``;
  return `- the command \`${s.test_passes}\` passes`;
}

/** The full prompt of `task` under `template` (pure): system prompt, then the filled task prompt. */
export function renderPrompt(template: RoleTemplate, task: Task): string {
  return `${template.systemPrompt.trimEnd()}\n\n${renderTaskPrompt(template, task)}`;
}

/**
 * The filled task prompt of `task` (pure); `reporting` replaces the agent's reporting
 * instructions (a batch request answers once, with a patch, instead of calling the task API).
 */
export function renderTaskPrompt(
  template: RoleTemplate,
  task: Task,
  reporting = REPORTING_INSTRUCTIONS,
): string {
  const values: Record<string, string> = {
    task_id: task.id,
    title: promptTitle(task.title),
    role: task.role,
    goal: promptGoal(task),
    priority: String(task.priority),
    scope: task.scope,
    complexity: task.complexity,
    depends_on: task.depends_on.join(", ") || "(none)",
    owned_files: task.owned_files.length
      ? task.owned_files.map((f) => `- \`${f}\``).join("\n")
      : "(not declared: keep your changes focused on the goal)",
    completion_signals: task.completion_signals.length
      ? task.completion_signals.map(renderSignal).join("\n")
      : "(no automatic signals: the goal above is the definition of done)",
    reporting,
  };
  return template.taskPrompt.replace(
    /\{\{\s*([a-z_]+)\s*\}\}/g,
    (whole, name: string) => values[name] ?? whole,
  );
}
