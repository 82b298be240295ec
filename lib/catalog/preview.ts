/**
 * The preview shown before an install or an upgrade (spec §2.2), as lines (pure): every field,
 * the exact argv, what is written, which of the user's variables the server would read (by name,
 * never by value), what an upgrade changes, and the warnings. Every catalog string is made
 * printable first, so no escape sequence or newline in it can hide or fake a line.
 */
import type { CatalogEntry } from "./schema.ts";
import type { InstalledRecord } from "./managed_config.ts";
import type { SignatureStatus } from "./signature.ts";
import { displayArgv, entryEnvNames, managedServer, type UpgradeChange } from "./entry_plan.ts";
import { printable } from "../util/printable.ts";

/** One line of a preview; `warn` lines are shown prominently. */
export interface PreviewLine {
  text: string;
  warn?: boolean;
}

const SIGNATURE_WORDS: Record<SignatureStatus, PreviewLine> = {
  valid: { text: "valid (Ed25519, configured key)" },
  invalid: {
    text: "INVALID: the entry does not match its signature under the configured key",
    warn: true,
  },
  missing: { text: "none (the entry is not signed)" },
  unchecked: { text: "present, not checked (no mcp_catalog.public_key configured)" },
};

/** Options of {@link installPreview}. */
export interface PreviewOptions {
  signature: SignatureStatus;
  configPath: string;
  /** The user's record of this entry, when it is installed. */
  installed?: InstalledRecord;
  /** The user's auto-upgrade consent for this install (`--auto-upgrade`, or the record's). */
  autoUpgrade: boolean;
  /** For an upgrade: what it changes besides the pin. */
  changes?: readonly UpgradeChange[];
  /** Where the install command runs (lib/catalog/install_place.ts); absent: on this machine. */
  place?: { words: string; host: boolean };
}

function autoUpgradeWords(entry: CatalogEntry, consent: boolean): string {
  if (!entry.auto_upgrade) return "no (the catalog does not offer it for this entry)";
  return consent
    ? "yes: `upgrade` applies a new pin without asking when nothing else changes"
    : "offered by the catalog, off for you (install with --auto-upgrade to allow it)";
}

/** The preview lines of installing (or upgrading to) `entry`. */
export function installPreview(entry: CatalogEntry, opts: PreviewOptions): PreviewLine[] {
  const server = managedServer(entry);
  const p = printable;
  const lines: PreviewLine[] = [];
  if (!entry.verified_by_service) {
    lines.push({
      text:
        "WARNING: this entry is NOT verified by the service team (verified_by_service: false). " +
        `Its install command runs ${
          opts.place && !opts.place.host
            ? "in a container here, and its server with your agents"
            : "on this machine"
        }: read it before you accept.`,
      warn: true,
    });
  }
  const pin = opts.changes && opts.installed
    ? `${p(opts.installed.version_pin)} → ${p(entry.version_pin)}`
    : p(entry.version_pin);
  const env = Object.entries(server.env);
  lines.push(
    { text: `${p(entry.name)} (${entry.id})` },
    { text: `  ${p(entry.description)}` },
    { text: `  homepage:     ${p(entry.homepage)}` },
    { text: `  repository:   ${p(entry.repository)}` },
    { text: `  version pin:  ${pin}` },
    { text: `  transports:   ${entry.transports.join(", ")}` },
    {
      text: `  verified:     ${entry.verified_by_service ? "yes" : "NO"}`,
      warn: !entry.verified_by_service,
    },
    { text: `  auto-upgrade: ${autoUpgradeWords(entry, opts.autoUpgrade)}` },
    {
      text: `  signature:    ${SIGNATURE_WORDS[opts.signature].text}`,
      warn: SIGNATURE_WORDS[opts.signature].warn,
    },
    { text: "  will run (argv, no shell, in an empty temporary directory):" },
    ...(opts.place ? [{ text: `    ${opts.place.words}` }] : []),
    { text: `    ${displayArgv(entry.install_command)}` },
    { text: `    ${p(JSON.stringify(entry.install_command))}` },
    { text: `  will write into "service-managed" of ${opts.configPath}:` },
    { text: `    command: ${p(server.command)}` },
    { text: `    args:    ${p(JSON.stringify(server.args))}` },
    {
      text: `    env:     ${
        env.length === 0 ? "{}" : env.map(([k, v]) => `${p(k)}=${p(v)}`).join(" ")
      }`,
    },
  );
  const names = entryEnvNames(entry);
  if (names.length > 0) {
    lines.push({
      text: `  reads your environment: ${names.join(", ")} (by name; the server gets their ` +
        "values only if you allow them, else the text as written)",
      warn: true,
    });
  }
  if (opts.changes && opts.changes.length > 0) {
    lines.push({ text: "  changes since your install (not only the pin):", warn: true });
    for (const c of opts.changes) {
      lines.push({ text: `    ${c.field}: ${p(c.from)} → ${p(c.to)}`, warn: true });
    }
  } else if (opts.installed && !opts.changes) {
    lines.push({
      text: `  already installed at ${p(opts.installed.version_pin)} ` +
        `(${p(opts.installed.installed_at)}): installing replaces it`,
    });
  }
  return lines;
}
