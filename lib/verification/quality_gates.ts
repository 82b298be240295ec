/** The quality gates of a task (DESIGN.md §10): the top-level ones, then its role's. */
import type { CommandCheck, ServiceConfig } from "../config/schema.ts";

/** `quality_gates` of service.yaml plus `roles.<role>.quality_gates` (a role's gate of the same name replaces the top-level one). */
export function qualityGatesFor(
  config: Pick<ServiceConfig, "quality_gates" | "roles">,
  role: string,
): CommandCheck[] {
  const own = config.roles[role]?.quality_gates ?? [];
  const names = new Set(own.map((g) => g.name));
  return [...(config.quality_gates ?? []).filter((g) => !names.has(g.name)), ...own];
}
