/**
 * Which `${VAR}` an entry's server may read from the user's environment (pure). A catalog can
 * only offer: a variable is granted when the user's install record already allowed it, when the
 * user named it with `--allow-env NAME`, or when the user answers yes to the question that names
 * it. `--yes` accepts the install, never a variable: under it nothing is asked, and what was not
 * named is not granted (the server gets `${NAME}` as written).
 */

/** What the consent is decided from. */
export interface EnvConsentInput {
  /** The names the entry references (`entryEnvNames`). */
  referenced: readonly string[];
  /** The names the user's install record allowed before (an upgrade keeps those still referenced). */
  already: readonly string[];
  /** The names given with `--allow-env`. */
  allowFlags: readonly string[];
  /** `--yes`: accept without asking. */
  yes: boolean;
}

/** The decision: granted now, to ask about, and left ungranted without asking. */
export interface EnvConsentPlan {
  /** Allowed before and still referenced, plus those named by `--allow-env` (sorted). */
  granted: string[];
  /** New names no flag named, to ask about when the user can be asked (not under `--yes`). */
  ask: string[];
  /** New names no flag named, under `--yes`: not granted, not asked. */
  notGranted: string[];
}

/** Decide which referenced variables are granted, asked about, or left as written. */
export function envConsentPlan(input: EnvConsentInput): EnvConsentPlan {
  const referenced = [...new Set(input.referenced)].sort();
  const granted = referenced.filter((n) =>
    input.already.includes(n) || input.allowFlags.includes(n)
  );
  const rest = referenced.filter((n) => !granted.includes(n));
  return input.yes
    ? { granted, ask: [], notGranted: rest }
    : { granted, ask: rest, notGranted: [] };
}

/** The `--allow-env` names none of `referenced` reads (a typo would otherwise go unnoticed). */
export function unreadFlags(
  allowFlags: readonly string[],
  referenced: readonly string[],
): string[] {
  return [...new Set(allowFlags)].filter((n) => !referenced.includes(n)).sort();
}

/** The flags that would grant `names`: `--allow-env A --allow-env B`. */
export function allowEnvFlags(names: readonly string[]): string {
  return names.map((n) => `--allow-env ${n}`).join(" ");
}
