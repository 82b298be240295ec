/**
 * One-time claim tickets (DESIGN.md §17), designed like a just-in-time runner configuration:
 * the Kubernetes launcher mints one per Job, bound to one run, task and session; the Job's pod
 * presents it together with the workers' token and claims exactly that task, once, before it
 * expires. A ticket is worth nothing on its own (a claim still needs a `worker` token) and
 * nothing after its first use, so a leaked Job spec does not let anyone take other tasks.
 *
 * Only the SHA-256 of a ticket is kept — in memory and in `.sdd/runtime/claim_tickets.json`, so a
 * restarted orchestrator still honours the tickets of the Jobs it adopts. The ticket itself
 * exists only in its Job's arguments.
 */
import { sha256Hex } from "../journal/hash.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";

/** What a ticket lets its bearer claim. */
export interface TicketGrant {
  run_id: string;
  task_id: string;
  /** The session the claim runs as (its Job carries it in the `service.session` label). */
  session_id: string;
  /** The Job it was minted for. */
  job: string;
  /** Where its agent runs, journaled on `task_claimed` (`pod:<image>`). */
  isolation: string;
  /** When it stops being accepted (ms since the epoch). */
  expires_at: number;
}

/** A grant as kept: by the ticket's digest, with when it was used. */
interface Entry extends TicketGrant {
  digest: string;
  used_at?: number;
}

/** Why a ticket was not accepted (each with the words a worker prints). */
export type TicketRefusal = {
  code: "ticket_unknown" | "ticket_used" | "ticket_expired" | "ticket_other_run";
  reason: string;
};

/** The outcome of presenting a ticket. */
export type Redemption = { ok: true; grant: TicketGrant } | ({ ok: false } & TicketRefusal);

/** The prefix of every ticket (so one pasted into the wrong place is recognised). */
export const TICKET_PREFIX = "svctkt_";

/** Decide whether `entry` may be redeemed now for `runId` (pure). */
export function redeemable(
  entry: Entry | undefined,
  runId: string,
  now: number,
): { ok: true } | ({ ok: false } & TicketRefusal) {
  if (!entry) {
    return {
      ok: false,
      code: "ticket_unknown",
      reason: "this claim ticket was never minted here (or its Job was deleted and it was revoked)",
    };
  }
  if (entry.used_at !== undefined) {
    return {
      ok: false,
      code: "ticket_used",
      reason: `this claim ticket of Job ${entry.job} was used already: a ticket claims once`,
    };
  }
  if (now >= entry.expires_at) {
    return {
      ok: false,
      code: "ticket_expired",
      reason: `this claim ticket of Job ${entry.job} expired at ` +
        new Date(entry.expires_at).toISOString(),
    };
  }
  if (entry.run_id !== runId) {
    return {
      ok: false,
      code: "ticket_other_run",
      reason: `this claim ticket is for run ${entry.run_id}; run ${runId} is being served`,
    };
  }
  return { ok: true };
}

/** Options of {@link TicketBook}. */
export interface TicketBookOptions {
  /** Where the digests are kept (absent: memory only). */
  path?: string;
  clock?: () => number;
}

/** The tickets of a workspace: minted by the launcher, redeemed by claims. */
export class TicketBook {
  readonly #entries = new Map<string, Entry>();
  readonly #path: string | undefined;
  readonly #clock: () => number;
  #saving: Promise<void> = Promise.resolve();

  constructor(options: TicketBookOptions = {}) {
    this.#path = options.path;
    this.#clock = options.clock ?? Date.now;
  }

  /** A book holding what `options.path` kept (see {@link TicketBook.load}). */
  static async open(options: TicketBookOptions): Promise<TicketBook> {
    const book = new TicketBook(options);
    await book.load();
    return book;
  }

  /** Read what the file kept (an unreadable file: nothing, so no earlier ticket works). */
  async load(): Promise<void> {
    if (!this.#path) return;
    try {
      const kept = JSON.parse(await Deno.readTextFile(this.#path)) as { tickets?: Entry[] };
      for (const e of kept.tickets ?? []) {
        if (typeof e?.digest === "string") this.#entries.set(e.digest, e);
      }
    } catch {
      // None yet, or torn: tickets minted before are refused and their Jobs get new ones.
    }
  }

  /** A new ticket for `grant`, kept (by digest) before it is returned. */
  async mint(grant: TicketGrant): Promise<string> {
    return (await this.mintAll([grant]))[0];
  }

  /** New tickets for `grants`, in order, all kept with one durable write before they return. */
  async mintAll(grants: readonly TicketGrant[]): Promise<string[]> {
    const tickets = grants.map((grant) => {
      const bytes = crypto.getRandomValues(new Uint8Array(32));
      const ticket = TICKET_PREFIX + btoa(String.fromCharCode(...bytes))
        .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      this.#entries.set(sha256Hex(ticket), { ...grant, digest: sha256Hex(ticket) });
      return ticket;
    });
    await this.#save();
    return tickets;
  }

  /** Present `ticket` for `runId`: its grant, used up now, or why not. */
  async redeem(ticket: string, runId: string): Promise<Redemption> {
    const entry = this.#entries.get(sha256Hex(ticket));
    const verdict = redeemable(entry, runId, this.#clock());
    if (!verdict.ok) return verdict;
    entry!.used_at = this.#clock();
    await this.#save();
    const { digest: _d, used_at: _u, ...grant } = entry!;
    return { ok: true, grant };
  }

  /** Revoke the unused tickets of `sessionId` (its Job is gone). */
  async revoke(sessionId: string): Promise<void> {
    let changed = false;
    for (const [digest, e] of this.#entries) {
      if (e.session_id === sessionId && e.used_at === undefined) {
        this.#entries.delete(digest);
        changed = true;
      }
    }
    if (changed) await this.#save();
  }

  /** The unused, unexpired grant of `sessionId`, if there is one. */
  pending(sessionId: string): TicketGrant | undefined {
    const now = this.#clock();
    for (const e of this.#entries.values()) {
      if (e.session_id === sessionId && e.used_at === undefined && e.expires_at > now) return e;
    }
    return undefined;
  }

  /** Keep the digests (expired ones are dropped), one write at a time. */
  #save(): Promise<void> {
    const path = this.#path;
    if (!path) return Promise.resolve();
    const next = this.#saving.catch(() => {}).then(async () => {
      const now = this.#clock();
      for (const [digest, e] of this.#entries) {
        if (e.expires_at <= now) this.#entries.delete(digest);
      }
      const body = JSON.stringify({ tickets: [...this.#entries.values()] }, null, 1) + "\n";
      await writeFileAtomic(path, body, 0o600);
    });
    this.#saving = next;
    return next;
  }
}
