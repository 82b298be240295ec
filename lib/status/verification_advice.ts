/**
 * The `verification_advice` status part: what the verification alert advises for the completions
 * the ledger lists as unverified (as the `verification_nudge` part read it), from the gates the
 * configuration gives their tasks' roles (lib/verification/advice.ts). The CLI's ALERT and the
 * board's toast print it.
 */
import { loadConfig } from "../config/load.ts";
import { loadTaskSpecs } from "../tasks/persist.ts";
import { openedTaskStore } from "../tasks/registry.ts";
import { qualityGatesFor } from "../verification/quality_gates.ts";
import type { VerificationNudge } from "../verification/nudge_types.ts";
import { verificationAdvice } from "../verification/advice.ts";
import type { StatusPart } from "./status.ts";

/** The advice sentence for the ledger as it is now. */
export const verificationAdvicePart: StatusPart = async (app, earlier) => {
  // The summary the part before this one read from the ledger (lib/status/parts.ts).
  const nudge = earlier.verification_nudge as VerificationNudge;
  if (nudge.recent_unverified.length === 0) return verificationAdvice([]);
  const config = await loadConfig(app.paths.root);
  if (!config) return verificationAdvice(nudge.recent_unverified);
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
