/**
 * The `verification_advice` status part: what the verification alert advises for the completions
 * the ledger lists as unverified, from the gates the configuration gives their tasks' roles
 * (lib/verification/advice.ts). The CLI's ALERT and the board's toast print it.
 */
import { loadConfig } from "../config/load.ts";
import { loadTaskSpecs } from "../tasks/persist.ts";
import { openedTaskStore } from "../tasks/registry.ts";
import { qualityGatesFor } from "../verification/quality_gates.ts";
import { readVerificationNudge } from "../verification/nudge.ts";
import { verificationAdvice } from "../verification/advice.ts";
import type { StatusPart } from "./status.ts";

/** The advice sentence for the ledger as it is now. */
export const verificationAdvicePart: StatusPart = async (app) => {
  const config = await loadConfig(app.paths.root);
  const nudge = await readVerificationNudge(
    app.paths,
    config?.verification_nudge ?? { threshold: 0.3, min_completions: 3 },
  );
  if (!config || nudge.recent_unverified.length === 0) {
    return verificationAdvice(nudge.recent_unverified);
  }
  const store = openedTaskStore(app);
  const roles = new Map<string, string>();
  if (store) {
    const opened = await store;
    for (const id of nudge.recent_unverified) {
      const role = opened.get(id)?.role;
      if (role !== undefined) roles.set(id, role);
    }
  } else {
    for (const t of (await loadTaskSpecs(app.paths)).tasks) roles.set(t.id, t.role);
  }
  return verificationAdvice(nudge.recent_unverified, {
    roleOf: (id) => roles.get(id),
    gatesOf: (role) => qualityGatesFor(config, role).length,
  });
};
