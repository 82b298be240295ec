/**
 * The shared secret of a tracker webhook, read at request time (spec §4.2 rule 2: rotation needs
 * no restart) from the variable named by `secret_env`, or from the file named by
 * `<secret_env>_FILE` (Docker and systemd credentials). Messages name variables and files, never
 * the secret.
 */

/** A secret, or why there is none. */
export type SecretLookup = { ok: true; secret: string } | { ok: false; reason: string };

/** Look the secret up now. */
export async function readSecret(
  secretEnv: string,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): Promise<SecretLookup> {
  const direct = env(secretEnv);
  if (direct) return { ok: true, secret: direct };
  const file = env(`${secretEnv}_FILE`);
  if (!file) {
    return { ok: false, reason: `${secretEnv} is empty (and ${secretEnv}_FILE is not set)` };
  }
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    return {
      ok: false,
      reason: `${secretEnv}_FILE names ${file}, which cannot be read (${(e as Error).name})`,
    };
  }
  const secret = text.replace(/[\r\n]+$/, "");
  if (secret === "") {
    return { ok: false, reason: `${secretEnv}_FILE names ${file}, which is empty` };
  }
  return { ok: true, secret };
}
