import assert from "node:assert/strict";
import { CONTAINER_UID, runArgs, type RunSpec, userPlan } from "./run_args.ts";

Deno.test("userPlan(): the container's user is never root and can write what the service owns", () => {
  const table = [
    // rootless podman: the service's own ids, kept through the user namespace
    [{ runtime: "podman", rootless: true, uid: 1000, gid: 1000 }, {
      args: ["--userns=keep-id", "--user", "1000:1000"],
      uid: 1000,
      chown: false,
    }],
    // a rootful runtime used by a non-root service: the service's ids
    [{ runtime: "docker", rootless: false, uid: 1001, gid: 100 }, {
      args: ["--user", "1001:100"],
      uid: 1001,
      chown: false,
    }],
    // the service is root: an unprivileged uid that is handed the worktree while it runs
    [{ runtime: "podman", rootless: false, uid: 0, gid: 0 }, {
      args: ["--user", `${CONTAINER_UID}:${CONTAINER_UID}`],
      uid: CONTAINER_UID,
      chown: true,
    }],
  ] as const;
  for (const [facts, want] of table) {
    const got = userPlan({ ...facts });
    assert.deepEqual({ args: got.args, uid: got.uid, chown: got.chown }, want);
  }
  assert.throws(
    () => userPlan({ runtime: "docker", rootless: true, uid: 1000, gid: 1000 }),
    /ContainerError|rootless docker/,
  );
});

const spec: RunSpec = {
  runtime: "podman",
  name: "service-s-1",
  labels: { "io.service.session": "s-1" },
  image: "localhost/agent:1",
  workdir: "/repo/.sdd/worktrees/s-1",
  mounts: [
    { source: "/repo/.git", readOnly: true },
    { source: "/x/objects", target: "/repo/.git/objects", readOnly: false },
  ],
  envNames: ["ANTHROPIC_API_KEY", "SERVICE_TASK_ID"],
  envValues: { HOME: "/tmp/service-home" },
  user: { args: ["--user", "1000:1000"], uid: 1000, gid: 1000, chown: false },
  memoryMb: 512,
  cpuCores: 1.5,
  network: "none",
  addHosts: [{ name: "api.anthropic.com", ip: "127.0.0.2" }],
  lowPorts: true,
  maxSeconds: 1890,
  relabel: false,
  argv: ["claude", "-p", "do it"],
};

Deno.test("runArgs(): limits (memory, CPUs, processes), no network, no capabilities, only the named mounts, and secrets passed by name", () => {
  const args = runArgs(spec);
  const text = args.join(" ");
  for (
    const part of [
      "run --rm --interactive --init --name service-s-1 --pull never",
      "--cap-drop all --security-opt no-new-privileges --pids-limit 4096",
      "--memory 512m --memory-swap 512m --cpus 1.5",
      "--network none",
      "--sysctl net.ipv4.ip_unprivileged_port_start=0",
      "--add-host api.anthropic.com:127.0.0.2",
      "--timeout 1890",
      "--volume /repo/.git:/repo/.git:ro --volume /x/objects:/repo/.git/objects:rw",
      "--env ANTHROPIC_API_KEY --env SERVICE_TASK_ID --env HOME=/tmp/service-home",
      "--workdir /repo/.sdd/worktrees/s-1 localhost/agent:1 claude -p do it",
    ]
  ) assert.ok(text.includes(part), `${part}\nin: ${text}`);
  assert.equal(args.filter((a) => a === "--volume").length, 2, "nothing else of the host");
});

Deno.test("runArgs(): docker gets no podman-only flag; the default network is the runtime's; SELinux relabels", () => {
  const args = runArgs({ ...spec, runtime: "docker", network: "default", relabel: true });
  assert.ok(!args.includes("--timeout"));
  assert.ok(!args.includes("--network"));
  assert.ok(args.includes("/repo/.git:/repo/.git:ro,z"));
  assert.throws(
    () => runArgs({ ...spec, mounts: [{ source: "/a:b", readOnly: true }] }),
    /holds ':' or ','/,
  );
});
