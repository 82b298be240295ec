/**
 * Plan files (spec §2.12): stages of steps, turned into task inputs. Pure: takes the YAML text
 * and the roles that may be used, returns tasks or throws a {@link PlanError} naming the path
 * (`stages[1].steps[0].role`), the line and column, and why.
 */
import { z } from "zod";
import { ValidationError } from "../config/errors.ts";
import { CommandChecksSchema } from "../config/schema.ts";
import { validateYaml } from "../config/validate.ts";
import { parseYamlSource, type YamlSource } from "../config/yaml_source.ts";
import { ID_RULE, isValidId } from "../ids.ts";
import { checkDependencies } from "../tasks/graph.ts";
import {
  AdapterName,
  CompletionSignalSchema,
  ComplexitySchema,
  DEFAULT_PRIORITY,
  ScopeSchema,
  type TaskInput,
} from "../tasks/task.ts";
import { suggest } from "../util/levenshtein.ts";

/** What a {@link PlanError} names: the key path in the plan, the problem, how to fix it. */
export interface PlanProblem {
  /** `["stages", 1, "role"]`; empty for the whole plan. */
  path: (string | number)[];
  problem: string;
  fix?: string;
}

/** A plan that does not match spec §2.12. */
export class PlanError extends ValidationError {
  constructor(source: YamlSource, { path, problem, fix }: PlanProblem) {
    super({
      file: source.file,
      path: formatPlanPath(path),
      position: source.locate(path),
      problem,
      fix,
    });
    this.name = "PlanError";
  }
}

function formatPlanPath(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i ? `.${p}` : p)).join("");
}

/** One step. */
const StepSchema = z.strictObject({
  id: z.string().refine(isValidId, `must be ${ID_RULE}`).optional(),
  title: z.string().min(1).optional(),
  goal: z.string().min(1),
  role: z.string().min(1),
  priority: z.number().int().min(0).default(DEFAULT_PRIORITY),
  scope: ScopeSchema.default("medium"),
  complexity: ComplexitySchema.default("medium"),
  completion_signals: z.array(CompletionSignalSchema).default([]),
  owned_files: z.array(z.string().min(1)).default([]),
  /** Evidence producers: `[{name, command, timeout_s}]` (DESIGN.md §10). */
  evidence: CommandChecksSchema.default([]),
  batch_eligible: z.boolean().optional(),
  /** The adapter this step's agents run (default: its role's, `roles.<role>.cli`, else `cli`). */
  cli: AdapterName.optional(),
});

/** One stage. */
const StageSchema = z.strictObject({
  name: z.string().min(1),
  depends_on: z.array(z.string().min(1)).default([]),
  steps: z.array(StepSchema).min(1, "a stage needs at least one step"),
});

/** The plan document. */
const PlanSchema = z.strictObject({
  name: z.string().optional(),
  description: z.string().optional(),
  stages: z.array(StageSchema).min(1, "a plan needs at least one stage"),
});

/** Options of {@link parsePlan}. */
export interface ParsePlanOptions {
  /** Roles listed in service.yaml `roles`; undefined skips the check. */
  roles?: ReadonlySet<string>;
  /** Roles that have a template directory; undefined skips the check. */
  templates?: ReadonlySet<string>;
  /** Default of `batch_eligible` (service.yaml top level). */
  batchEligible?: boolean;
}

/** A parsed plan: its tasks in plan order with ids and dependencies filled in. */
export interface ParsedPlan {
  name?: string;
  tasks: (TaskInput & { id: string; stage: string })[];
}

const EXAMPLE = `stages:
    - name: build
      steps:
        - goal: Add the /health endpoint
          role: backend`;

function slug(name: string): string {
  const s = name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  return s || "stage";
}

/** Parse and check a plan; throws PlanError (or YamlSyntaxError for malformed YAML). */
export function parsePlan(text: string, file: string, options: ParsePlanOptions = {}): ParsedPlan {
  const source = parseYamlSource(file, text);
  if (!source.value || typeof source.value !== "object" || Array.isArray(source.value)) {
    throw new PlanError(source, {
      path: [],
      problem: "a plan is a mapping with a `stages` list",
      fix: `start from:\n    ${EXAMPLE}`,
    });
  }
  const plan = validateYaml(source, PlanSchema, { examples: { stages: EXAMPLE } });
  const stageNames = new Map<string, number>();
  plan.stages.forEach((stage, i) => {
    if (stageNames.has(stage.name)) {
      throw new PlanError(source, {
        path: ["stages", i, "name"],
        problem: `duplicate stage name '${stage.name}'`,
      });
    }
    stageNames.set(stage.name, i);
  });
  plan.stages.forEach((stage, i) => {
    stage.depends_on.forEach((dep, j) => {
      if (!stageNames.has(dep)) {
        const guess = suggest(dep, stageNames.keys());
        throw new PlanError(source, {
          path: ["stages", i, "depends_on", j],
          problem: `stage '${stage.name}' depends on unknown stage '${dep}'${
            guess ? ` (did you mean '${guess}'?)` : ""
          }`,
          fix: `depends_on lists names of other stages: ${[...stageNames.keys()].join(", ")}`,
        });
      }
    });
  });
  const stageGraph = new Map(plan.stages.map((s) => [s.name, s.depends_on]));
  const cycle = checkDependencies(stageGraph, () => false);
  if (cycle?.kind === "cycle") {
    const at = stageNames.get(cycle.cycle[0])!;
    throw new PlanError(source, {
      path: ["stages", at, "depends_on"],
      problem: `cyclic stage dependencies: ${cycle.cycle.join(" -> ")}`,
      fix: "remove one of the depends_on entries in the cycle",
    });
  }
  const idsOfStage = new Map<string, string[]>();
  const seen = new Map<string, string>();
  const tasks: ParsedPlan["tasks"] = [];
  plan.stages.forEach((stage, i) => {
    const ids: string[] = [];
    stage.steps.forEach((step, j) => {
      const where = ["stages", i, "steps", j];
      if (options.roles && !options.roles.has(step.role)) {
        const guess = suggest(step.role, options.roles);
        throw new PlanError(source, {
          path: [...where, "role"],
          problem: `role '${step.role}' is not listed in service.yaml roles${
            guess ? ` (did you mean '${guess}'?)` : ""
          }`,
          fix: `use one of ${
            [...options.roles].join(", ")
          }, or add '${step.role}' under roles: in service.yaml`,
        });
      }
      if (options.templates && !options.templates.has(step.role)) {
        throw new PlanError(source, {
          path: [...where, "role"],
          problem: `role '${step.role}' has no template directory`,
          fix:
            `create templates/roles/${step.role}/ with system_prompt.md, task_prompt.md and config.yaml`,
        });
      }
      const id = step.id ?? `${slug(stage.name)}-${j + 1}`;
      if (!isValidId(id) || seen.has(id)) {
        throw new PlanError(source, {
          path: [...where, step.id ? "id" : "goal"],
          problem: seen.has(id)
            ? `task id '${id}' is used twice (also by ${seen.get(id)})`
            : `task id '${id}' is not valid`,
          fix: "give the step a unique `id:`",
        });
      }
      seen.set(id, formatPlanPath(where));
      ids.push(id);
      const depends = stage.depends_on.flatMap((d) => idsOfStage.get(d) ?? []);
      tasks.push({
        id,
        stage: stage.name,
        title: step.title ?? step.goal.split("\n")[0].slice(0, 120),
        role: step.role,
        goal: step.goal,
        priority: step.priority,
        scope: step.scope,
        complexity: step.complexity,
        depends_on: depends,
        owned_files: step.owned_files,
        completion_signals: step.completion_signals,
        evidence: step.evidence,
        batch_eligible: step.batch_eligible ?? options.batchEligible ?? false,
        ...(step.cli ? { cli: step.cli } : {}),
      });
    });
    idsOfStage.set(stage.name, ids);
  });
  // Stages may name later stages: fill dependencies once every stage's ids are known.
  for (const t of tasks) {
    const stage = plan.stages.find((s) => s.name === t.stage)!;
    t.depends_on = stage.depends_on.flatMap((d) => idsOfStage.get(d)!);
  }
  if (tasks.length === 0) {
    throw new PlanError(source, {
      path: ["stages"],
      problem: "the plan yields no tasks",
      fix: `add steps, for example:\n    ${EXAMPLE}`,
    });
  }
  return { name: plan.name, tasks };
}
