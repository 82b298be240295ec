import type { AdapterInput } from "./types.ts";

/**
 * Model routing: the configured `model` wins; else `complexity: low` picks the adapter's
 * cheapest model; else undefined, meaning the CLI's own default.
 */
export function routeModel(input: AdapterInput, cheapestModel?: string): string | undefined {
  if (input.model) return input.model;
  if (input.complexity === "low" && cheapestModel) return cheapestModel;
  return undefined;
}
