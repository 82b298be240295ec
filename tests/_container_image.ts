/**
 * The small agent image the container tests and the container bench run in, built from this
 * machine's own files — no registry is needed: a root file system of the host's `sh`, coreutils,
 * git, socat and deno (each with the shared libraries `ldd` names), imported with
 * `<runtime> import`, and the scripted agent added on top with `<runtime> build`. Tagged by the
 * digest of what went into it, built once per machine (a lock keeps parallel test files from
 * building it twice). Without a runtime that answers, {@link testImage} says why, loudly, and the
 * tests that need one skip.
 */
import { basename, dirname, join } from "node:path";
import { sha256Hex } from "../lib/journal/hash.ts";
import { findRuntime, runtimeCall, type RuntimeName } from "../lib/container/runtime.ts";

/** Where the scripted agent is inside the image. */
export const IMAGE_AGENT = "/opt/service/agents/scripted_agent.ts";

/** The runtime and the test image, or why the container tests skip. */
export type TestImage =
  | { ok: true; runtime: RuntimeName; bin: string; ref: string; base: string }
  | { ok: false; skip: string };

const TOOLS = [
  "sh",
  "cat",
  "sleep",
  "mkdir",
  "id",
  "ls",
  "grep",
  "rm",
  "cp",
  "mv",
  "touch",
  "head",
  "tail",
  "sed",
  "wc",
  "tr",
  "cut",
  "sort",
  "env",
  "chmod",
  "uname",
  "nproc",
  "stat",
  "git",
  "socat",
  "timeout",
];

async function which(name: string): Promise<string | undefined> {
  const out = await new Deno.Command("sh", { args: ["-c", `command -v ${name}`], stdout: "piped" })
    .output();
  const path = new TextDecoder().decode(out.stdout).trim();
  return path.startsWith("/") ? path : undefined;
}

async function libraries(binary: string): Promise<string[]> {
  const out = await new Deno.Command("ldd", { args: [binary], stdout: "piped", stderr: "null" })
    .output();
  return [...new TextDecoder().decode(out.stdout).matchAll(/(\/\S+)/g)].map((m) => m[1]);
}

async function copyInto(root: string, path: string): Promise<void> {
  const target = join(root, path);
  await Deno.mkdir(dirname(target), { recursive: true });
  try {
    await Deno.lstat(target);
    return; // already there (a library two binaries share)
  } catch { /* copy it */ }
  await Deno.copyFile(await Deno.realPath(path), target);
  await Deno.chmod(target, (await Deno.stat(path)).mode! & 0o7777);
}

/** What goes into the base file system, and its digest (the image's tag). */
async function recipe(): Promise<{ files: string[]; digest: string }> {
  const files: string[] = [];
  for (const tool of TOOLS) {
    const path = await which(tool);
    if (!path) throw new Error(`${tool} is not on PATH: cannot build the test image`);
    files.push(path, ...await libraries(path));
  }
  const deno = Deno.execPath();
  files.push(deno, ...await libraries(deno));
  const stats = await Promise.all(
    [...new Set(files)].sort().map(async (f) => {
      const s = await Deno.stat(f);
      return `${f}:${s.size}:${s.mtime?.getTime()}`;
    }),
  );
  const agent = await Deno.readTextFile(new URL("../agents/scripted_agent.ts", import.meta.url));
  const digest = sha256Hex(`v1\n${stats.join("\n")}\n${agent}`).slice(0, 16);
  return { files: [...new Set(files)], digest };
}

async function buildBase(bin: string, ref: string, files: string[]): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "service-test-rootfs-" });
  try {
    // Debian's merged /usr: /bin, /lib and /lib64 are links into /usr.
    for (const d of ["usr/bin", "usr/sbin", "usr/lib", "usr/lib64", "etc", "proc", "sys", "dev"]) {
      await Deno.mkdir(join(root, d), { recursive: true });
    }
    for (
      const [link, to] of [["bin", "usr/bin"], ["sbin", "usr/sbin"], ["lib", "usr/lib"], [
        "lib64",
        "usr/lib64",
      ]]
    ) {
      await Deno.symlink(to, join(root, link));
    }
    for (const d of ["tmp", "var/tmp"]) {
      await Deno.mkdir(join(root, d), { recursive: true });
      await Deno.chmod(join(root, d), 0o1777);
    }
    for (const f of files) {
      if (f !== Deno.execPath()) await copyInto(root, f); // /lib… lands in /usr/lib… by the links
    }
    // The deno binary under its own name on PATH, and git's helper programs.
    await Deno.mkdir(join(root, "usr/local/bin"), { recursive: true });
    await Deno.copyFile(Deno.execPath(), join(root, "usr/local/bin/deno"));
    await Deno.chmod(join(root, "usr/local/bin/deno"), 0o755);
    const cp = await new Deno.Command("cp", {
      args: ["-a", "/usr/lib/git-core", join(root, "usr/lib/")],
    }).output();
    if (!cp.success) throw new Error("cannot copy /usr/lib/git-core");
    await Deno.writeTextFile(join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n");
    await Deno.writeTextFile(join(root, "etc/group"), "root:x:0:\n");
    const tar = new Deno.Command("tar", {
      args: ["-C", root, "-c", "."],
      stdout: "piped",
    }).spawn();
    const imp = new Deno.Command(bin, {
      args: ["import", "-", ref],
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    await tar.stdout.pipeTo(imp.stdin);
    const [t, i] = await Promise.all([tar.status, imp.output()]);
    if (!t.success || !i.success) {
      throw new Error(`${basename(bin)} import failed: ${new TextDecoder().decode(i.stderr)}`);
    }
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

async function exists(bin: string, ref: string): Promise<boolean> {
  return (await runtimeCall(bin, ["image", "inspect", "--format", "{{.Id}}", ref])).code === 0;
}

let cached: Promise<TestImage> | undefined;

/** The test image (built when missing), or why the tests that need a runtime skip. */
export function testImage(): Promise<TestImage> {
  return cached ??= build().catch((e): TestImage => ({
    ok: false,
    skip: `cannot build the container test image: ${(e as Error).message}`,
  }));
}

async function build(): Promise<TestImage> {
  if (Deno.build.os !== "linux") return { ok: false, skip: "container tests run on Linux only" };
  const found = findRuntime("auto", Deno.env.toObject());
  if (!found) {
    return {
      ok: false,
      skip: "no container runtime on PATH (install podman: `apt-get install podman runc`, as " +
        ".ci/run does)",
    };
  }
  const info = await runtimeCall(found.bin, ["info"], { timeoutMs: 30_000 });
  if (info.code !== 0) {
    return { ok: false, skip: `${found.name} does not answer: ${info.stderr.trim().slice(-300)}` };
  }
  const { files, digest } = await recipe();
  const base = `localhost/service-test-base:${digest}`;
  const ref = `localhost/service-test-agent:${digest}`;
  if (await exists(found.bin, ref)) {
    return { ok: true, runtime: found.name, bin: found.bin, ref, base };
  }
  const lock = await Deno.open(join(Deno.env.get("TMPDIR") ?? "/tmp", "service-test-image.lock"), {
    create: true,
    write: true,
  });
  try {
    await lock.lock(true);
    if (!await exists(found.bin, ref)) {
      if (!await exists(found.bin, base)) await buildBase(found.bin, base, files);
      const context = await Deno.makeTempDir({ prefix: "service-test-image-" });
      try {
        await Deno.copyFile(
          new URL("../agents/scripted_agent.ts", import.meta.url),
          join(context, "scripted_agent.ts"),
        );
        await Deno.writeTextFile(
          join(context, "Containerfile"),
          `FROM ${base}\nCOPY scripted_agent.ts ${IMAGE_AGENT}\n`,
        );
        const r = await runtimeCall(
          found.bin,
          ["build", "--tag", ref, "--file", join(context, "Containerfile"), context],
          { timeoutMs: 300_000 },
        );
        if (r.code !== 0) throw new Error(`build failed: ${r.stderr.trim().slice(-500)}`);
      } finally {
        await Deno.remove(context, { recursive: true }).catch(() => {});
      }
    }
  } finally {
    await lock.unlock().catch(() => {});
    lock.close();
  }
  return { ok: true, runtime: found.name, bin: found.bin, ref, base };
}

/** Print why the container tests skip (once per test file), and answer whether they do. */
export function skipping(image: TestImage): boolean {
  if (!image.ok) console.warn(`\n!!! SKIPPED: container tests: ${image.skip}\n`);
  return !image.ok;
}

if (import.meta.main) {
  // .ci/run builds the image once, before the tests (they would build it under a lock anyway).
  const image = await testImage();
  console.log(image.ok ? `container test image: ${image.ref} (${image.runtime})` : "");
  skipping(image);
}

/**
 * The test image with `lines` (Containerfile instructions, e.g. `RUN rm -f /usr/bin/socat`)
 * on top, built once per machine and tagged by what went into it: an image that lacks a tool.
 */
export async function derivedTestImage(
  image: Extract<TestImage, { ok: true }>,
  name: string,
  lines: string[],
): Promise<string> {
  const text = `FROM ${image.ref}\n${lines.join("\n")}\n`;
  const ref = `localhost/service-test-${name}:${sha256Hex(text).slice(0, 16)}`;
  if (await exists(image.bin, ref)) return ref;
  const context = await Deno.makeTempDir({ prefix: "service-test-derived-" });
  try {
    await Deno.writeTextFile(join(context, "Containerfile"), text);
    const r = await runtimeCall(
      image.bin,
      ["build", "--tag", ref, "--file", join(context, "Containerfile"), context],
      { timeoutMs: 300_000 },
    );
    if (r.code !== 0) throw new Error(`build of ${ref} failed: ${r.stderr.trim().slice(-500)}`);
  } finally {
    await Deno.remove(context, { recursive: true }).catch(() => {});
  }
  return ref;
}
