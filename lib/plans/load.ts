/** Read a plan file from a workspace and check it against the configuration and templates. */
import type { ServiceConfig } from "../config/schema.ts";
import { roleTemplateDir } from "../roles/templates.ts";
import { type ParsedPlan, parsePlan } from "./plan.ts";

/** Parse `file`: roles must be in `config.roles` and have a template directory. */
export async function loadPlan(
  root: string,
  file: string,
  config?: ServiceConfig,
): Promise<ParsedPlan> {
  const text = await Deno.readTextFile(file);
  const roles = config ? Object.keys(config.roles) : undefined;
  const templates = new Set<string>();
  for (const role of roles ?? []) if (await roleTemplateDir(root, role)) templates.add(role);
  return parsePlan(text, file, {
    roles: roles ? new Set(roles) : undefined,
    templates: roles ? templates : undefined,
    batchEligible: config?.batch_eligible,
  });
}
