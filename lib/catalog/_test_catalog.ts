/** Catalog fixtures shared by the catalog tests. */

/** A valid entry; tests break one thing at a time. */
export function validEntry(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "memory",
    name: "Memory",
    description: "A knowledge-graph memory server.",
    homepage: "https://example.com/memory",
    repository: "https://github.com/example/memory",
    install_command: ["npm", "install", "@example/memory@1.0.0"],
    version_pin: "1.0.0",
    transports: ["stdio"],
    verified_by_service: true,
    ...over,
  };
}

/** A catalog document text with one valid entry per id. */
export function catalogText(ids: string[], over: Record<string, unknown>[] = []): string {
  return JSON.stringify({
    version: 1,
    generated_at: "2026-11-01T12:00:00Z",
    entries: ids.map((id, i) => validEntry({ id, ...(over[i] ?? {}) })),
  });
}
