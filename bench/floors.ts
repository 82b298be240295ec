/**
 * `deno run -A bench/floors.ts`: the physical floors the goals of docs/performance.md stand on,
 * measured on this machine now (medians): one git process start, one `git worktree add` of a
 * 200-file repository, one fdatasync of a small new file, one file creation, SHA-256 throughput,
 * and one trivial `podman run --rm` of the container test image when podman has it built
 * (`BENCH_FLOORS_IMAGE` names another). `bench:summary` prints them under its
 * table, so a figure can be read against what bounds it.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { benchRepo } from "./_fixture.ts";
import { removeBenchDir } from "./_bench_dir.ts";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function timed(n: number, f: (i: number) => Promise<unknown> | unknown): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f(i);
    xs.push(performance.now() - t);
  }
  return median(xs);
}

async function run(cmd: string, args: string[], cwd?: string): Promise<boolean> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "null", stderr: "null" }).output()
    .catch(() => undefined);
  return out?.success ?? false;
}

/** The newest container test image (tests/_container_image.ts) already built, if any. */
async function testImageName(): Promise<string | undefined> {
  const out = await new Deno.Command("podman", {
    args: [
      "images",
      "--format",
      "{{.Repository}}:{{.Tag}}",
      "--filter",
      "reference=localhost/service-test-agent",
    ],
    stdout: "piped",
    stderr: "null",
  }).output().catch(() => undefined);
  return out?.success
    ? new TextDecoder().decode(out.stdout).split("\n")[0] || undefined
    : undefined;
}

const dir = await Deno.makeTempDir({ prefix: "bench-floors-" });
const repo = await benchRepo(200);
try {
  const gitStart = await timed(20, () => run("git", ["--version"]));
  const worktreeAdd = await timed(
    10,
    (i) => run("git", ["worktree", "add", "-q", "-b", `f${i}`, join(dir, `w${i}`), "main"], repo),
  );
  const bytes = new TextEncoder().encode("x".repeat(2048));
  const create = await timed(
    200,
    (i) => Deno.openSync(join(dir, `c${i}`), { write: true, createNew: true }).close(),
  );
  const fsync = await timed(50, async (i) => {
    const f = Deno.openSync(join(dir, `s${i}`), { write: true, createNew: true });
    f.writeSync(bytes);
    await f.syncData();
    f.close();
  });
  const big = new Uint8Array(64 * 1024 * 1024).fill(97);
  const shaMs = await timed(3, () => createHash("sha256").update(big).digest("hex"));
  const podmanImage = Deno.env.get("BENCH_FLOORS_IMAGE") ?? await testImageName();
  const podman = podmanImage && await run("podman", ["image", "exists", podmanImage])
    ? await timed(
      3,
      () => run("podman", ["run", "--rm", "--network", "none", podmanImage, "sh", "-c", ":"]),
    )
    : undefined;
  const f = (ms: number) => `${ms < 10 ? ms.toFixed(2) : ms.toFixed(0)} ms`;
  console.log(
    `floors (medians; load average ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")}): ` +
      `git process start ${f(gitStart)}, git worktree add (200 files) ${f(worktreeAdd)}, ` +
      `file create ${f(create)}, fdatasync of a new 2 KB file ${f(fsync)}, ` +
      `SHA-256 ${(64 / (shaMs / 1000)).toFixed(0)} MB/s` +
      (podman === undefined ? "" : `, podman run --rm (trivial) ${f(podman)}`),
  );
} finally {
  await removeBenchDir(dir);
  await removeBenchDir(repo);
}
