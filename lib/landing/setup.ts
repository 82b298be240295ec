/**
 * Landing through pull requests, made ready before a run writes its first row: the settings
 * resolved, the token present, the host asked whether the token may do what landing needs (each
 * missing permission named with its fix), the remote known and the base fetched into its
 * remote-tracking ref (worktrees are cut from it). Anything wrong is a {@link LandingSetupError}
 * the CLI prints before `run_started`; `doctor` lists the same problems.
 */
import type { ServiceConfig } from "../config/schema.ts";
import { UserFacingError } from "../errors.ts";
import type { HostDeps } from "./api.ts";
import { GithubHost } from "./github.ts";
import { GitlabHost } from "./gitlab.ts";
import type { HostProblem, PullRequestHost } from "./host.ts";
import { fetchBranch, RemoteError, remoteUrl } from "../git/remote.ts";
import { type LandingSettings, landingSettings } from "./settings.ts";

/** Landing settings and the host they talk to. */
export interface PreparedLanding {
  settings: LandingSettings;
  host: PullRequestHost;
  /** `server.public_url`: the board's address people outside this machine open (PR bodies link it). */
  publicUrl?: string;
}

/** Options of {@link prepareLanding}. */
export interface PrepareLandingOptions {
  /** The workspace. */
  root: string;
  /** The branch checked out in the workspace (the default base). */
  workspaceBranch: string;
  /** Where the token is read (at each call: a rotated token is used at once). */
  env: (name: string) => string | undefined;
  /** Tests inject it; default `fetch`. */
  fetch?: typeof fetch;
}

/** Landing cannot work as configured; the message names the cause and the fix. */
class LandingSetupError extends UserFacingError {
  constructor(message: string, fix: string) {
    super(message, 1, fix);
    this.name = "LandingSetupError";
  }
}

/** The host of `settings`, reading its token from `env` at each call. */
export function pullRequestHost(
  settings: LandingSettings,
  env: (name: string) => string | undefined,
  deps: Partial<HostDeps> = {},
): PullRequestHost {
  const access = {
    apiUrl: settings.apiUrl,
    repo: settings.repo,
    token: () => env(settings.tokenEnv) ?? "",
    fetch: deps.fetch ?? fetch,
    now: deps.now ?? Date.now,
    ...(deps.timeoutMs ? { timeoutMs: deps.timeoutMs } : {}),
  };
  return settings.provider === "github" ? new GithubHost(access) : new GitlabHost(access);
}

/**
 * Problems with landing as configured, each with its fix (empty when it can work); `doctor`
 * lists them, {@link prepareLanding} refuses to start on the first.
 */
export async function landingProblems(
  settings: LandingSettings,
  host: PullRequestHost,
  o: PrepareLandingOptions,
): Promise<HostProblem[]> {
  const problems: HostProblem[] = [];
  if (!o.env(settings.tokenEnv)) {
    problems.push({
      problem: `landing.mode pull_request needs a ${settings.product} token in ` +
        `${settings.tokenEnv}, which is not set`,
      fix: `export ${settings.tokenEnv}=… (docs/landing.md says which permissions it needs)`,
    });
    return problems;
  }
  if (await remoteUrl({ root: o.root, remote: settings.remote }) === undefined) {
    problems.push({
      problem: `landing.remote ${settings.remote} is not a git remote of this repository`,
      fix: `git remote add ${settings.remote} <url of ${settings.repo}>, or set landing.remote`,
    });
  }
  try {
    problems.push(...await host.preflight(settings.base));
  } catch (e) {
    problems.push({
      problem: `${settings.product} could not be asked about ${settings.repo}: ${
        (e as Error).message
      }`,
      fix: `check landing.api_url (${settings.apiUrl}) and that ${settings.product} is reachable`,
    });
  }
  return problems;
}

/**
 * Landing of `config` made ready (see the module comment), or undefined in merge mode. Throws a
 * {@link LandingSetupError} naming the first problem.
 */
export async function prepareLanding(
  config: ServiceConfig,
  o: PrepareLandingOptions,
): Promise<PreparedLanding | undefined> {
  const settings = landingSettings(config, o.workspaceBranch);
  if (!settings) return undefined;
  const host = pullRequestHost(settings, o.env, o.fetch ? { fetch: o.fetch } : {});
  const problems = await landingProblems(settings, host, o);
  if (problems.length > 0) {
    const [first, ...rest] = problems;
    const more = rest.map((p) => `\n  also: ${p.problem} (fix: ${p.fix})`).join("");
    throw new LandingSetupError(`landing: ${first.problem}${more}`, first.fix);
  }
  try {
    await fetchBranch({ root: o.root, remote: settings.remote }, settings.base);
  } catch (e) {
    const fix = e instanceof RemoteError && e.fix
      ? e.fix
      : `check that ${settings.remote} has the branch ${settings.base}`;
    throw new LandingSetupError(
      `landing: cannot fetch ${settings.base} from ${settings.remote}: ${(e as Error).message}`,
      fix,
    );
  }
  const publicUrl = config.server?.public_url;
  return { settings, host, ...(publicUrl ? { publicUrl } : {}) };
}
