import assert from "node:assert/strict";
import { join } from "node:path";
import { findNodeAtLocation, parseTree } from "jsonc-parser";
import {
  editManaged,
  type InstalledRecord,
  managedBlock,
  McpConfigError,
  updateMcpConfig,
} from "./managed_config.ts";

const USER_FILE = `// My MCP servers — hand-written, keep my comments!
{
  /* the user's own server */
  "mcpServers": {
    "mine":   { "command": "my-server", "args": ["--port",  "1"] },  // odd spacing on purpose
  },
  "theme": "dark",
}
`;

const WITH_BLOCK = `{
  // user stuff before
  "mcpServers": { "mine": { "command": "x" } },
  "service-managed": {
    "mcpServers": {},
    "installed": {}
  },
  // user stuff after
  "editor":   "vim"
}
`;

const server = (command: string) => ({ command, args: ["--stdio"], env: { LOG: "1" } });
const record = (pin: string): InstalledRecord => ({
  version_pin: pin,
  installed_at: "2026-11-23T08:00:00.000Z",
  verified_by_service: true,
  auto_upgrade: false,
});

/** The text outside the `service-managed` property's value range. */
function outside(text: string): [string, string] {
  const node = findNodeAtLocation(parseTree(text)!, ["service-managed"])!;
  return [text.slice(0, node.offset), text.slice(node.offset + node.length)];
}

Deno.test("managed config: install into a block keeps everything else byte for byte", () => {
  const a = editManaged(WITH_BLOCK, [{
    op: "set",
    id: "memory",
    server: server("npx"),
    record: record("1"),
  }]);
  assert.deepEqual(outside(a), outside(WITH_BLOCK));
  const b = editManaged(a, [{
    op: "set",
    id: "files",
    server: server("node"),
    record: record("2"),
  }]);
  assert.deepEqual(outside(b), outside(WITH_BLOCK));
  const up = editManaged(b, [{
    op: "set",
    id: "memory",
    server: server("npx"),
    record: record("1.1"),
  }]);
  assert.deepEqual(outside(up), outside(WITH_BLOCK));
  assert.equal(managedBlock(up).installed.memory.version_pin, "1.1");
  assert.equal(managedBlock(up).installed.files.version_pin, "2");
  const gone = editManaged(up, [{ op: "remove", id: "memory" }]);
  assert.deepEqual(outside(gone), outside(WITH_BLOCK));
  assert.deepEqual(Object.keys(managedBlock(gone).mcpServers), ["files"]);
  assert.deepEqual(Object.keys(managedBlock(gone).installed), ["files"]);
});

Deno.test("managed config: the first install adds the block on its own line; the user's bytes stay", () => {
  const set = [{ op: "set" as const, id: "m", server: server("npx"), record: record("1") }];
  const block = (indent: string) =>
    JSON.stringify({ mcpServers: { m: server("npx") }, installed: { m: record("1") } }, null, 2)
      .replace(/\n/g, `\n${indent}`);
  const cases: [string, string][] = [
    // trailing comma and a comment after the last property: the block goes after that line
    [
      USER_FILE,
      USER_FILE.replace(
        `"theme": "dark",\n`,
        `"theme": "dark",\n  "service-managed": ${block("  ")}\n`,
      ),
    ],
    // no comma after the last property: one comma is added, the comment stays on its line
    [
      '{\n    "a": 1 // note\n}\n',
      `{\n    "a": 1, // note\n    "service-managed": ${block("    ")}\n}\n`,
    ],
    // tabs and a block comment
    [
      '{\n\t"a": [1,\n\t  2] /* c */\n}',
      `{\n\t"a": [1,\n\t  2], /* c */\n\t"service-managed": ${block("\t")}\n}`,
    ],
    // one line
    ['{"a":1}', `{"a":1, "service-managed": ${block("")}}`],
    // empty object
    ["{}", `{\n  "service-managed": ${block("  ")}\n}`],
  ];
  for (const [input, expected] of cases) {
    const out = editManaged(input, set);
    assert.equal(out, expected);
    // Uninstalling the last entry rewrites only the block's value.
    const back = editManaged(out, [{ op: "remove", id: "m" }]);
    assert.deepEqual(managedBlock(back), { mcpServers: {}, installed: {} });
    assert.deepEqual(outside(back).map((p) => p.length > 0), outside(out).map((p) => p.length > 0));
    assert.equal(outside(back)[0], outside(out)[0]);
  }
});

Deno.test("managed config: no file yet → a new file with the block only", () => {
  const out = editManaged(undefined, [{
    op: "set",
    id: "m",
    server: server("npx"),
    record: record("1"),
  }]);
  assert.deepEqual(JSON.parse(out), {
    "service-managed": {
      mcpServers: { m: server("npx") },
      installed: { m: record("1") },
    },
  });
});

Deno.test("managed config: broken files are refused with the position, nothing changes", () => {
  for (
    const [text, pattern] of [
      ['{ "a": 1 "b": 2 }', /mcp\.json:1:\d+: CommaExpected/],
      ["[1, 2]", /top level must be a JSON object/],
      ['{ "service-managed": [] }', /"service-managed" must be an object/],
      [
        '{ "service-managed": { "installed": 3 } }',
        /"service-managed\.installed" must be an object/,
      ],
    ] as const
  ) {
    assert.throws(
      () => editManaged(text, [{ op: "remove", id: "x" }]),
      (e: unknown) => e instanceof McpConfigError && pattern.test(e.message),
      text,
    );
  }
});

Deno.test("managed config: a symlinked file keeps its link; the mode is kept", async () => {
  const dir = await Deno.makeTempDir();
  const real = join(dir, "dotfiles-mcp.json");
  const link = join(dir, "mcp.json");
  await Deno.writeTextFile(real, WITH_BLOCK);
  await Deno.chmod(real, 0o640);
  await Deno.symlink(real, link);
  await updateMcpConfig(
    link,
    () => [{ op: "set", id: "m", server: server("npx"), record: record("1") }],
  );
  assert.ok((await Deno.lstat(link)).isSymlink);
  assert.equal((await Deno.stat(real)).mode! & 0o777, 0o640);
  assert.equal(managedBlock(await Deno.readTextFile(real)).installed.m.version_pin, "1");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("managed config: two processes installing at once both land (file lock)", async () => {
  const dir = await Deno.makeTempDir();
  const file = join(dir, "mcp.json");
  await Deno.writeTextFile(file, USER_FILE);
  const module = new URL("./managed_config.ts", import.meta.url).href;
  const installer = (id: string) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `import { updateMcpConfig } from ${JSON.stringify(module)};
         await updateMcpConfig(${JSON.stringify(file)}, async (current) => {
           // Hold the lock long enough for the other process to try.
           await new Promise((r) => setTimeout(r, 400));
           return [{ op: "set", id: ${JSON.stringify(id)},
             server: { command: "x", args: [], env: {} },
             record: { version_pin: "1", installed_at: "t", verified_by_service: true,
               auto_upgrade: false } }];
         });`,
      ],
      stdout: "inherit",
      stderr: "inherit",
    }).output();
  const [a, b] = await Promise.all([installer("first"), installer("second")]);
  assert.equal(a.code, 0);
  assert.equal(b.code, 0);
  const block = managedBlock(await Deno.readTextFile(file));
  assert.deepEqual(Object.keys(block.installed).sort(), ["first", "second"]);
  assert.ok((await Deno.readTextFile(file)).includes("/* the user's own server */"));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("managed config: hostile user files keep their bytes and the install reads back", () => {
  const set = [{ op: "set" as const, id: "m", server: server("npx"), record: record("1") }];
  const cases: { name: string; input: string; before: string; after: string }[] = [
    {
      name: "a block comment over two lines after the last property",
      input: '{\n  "a": 1 /* two\n  lines */\n}\n',
      before: '{\n  "a": 1, /* two\n  lines */\n',
      after: "\n}\n",
    },
    {
      name: "CRLF line endings",
      input: '{\r\n  "a": 1\r\n}\r\n',
      before: '{\r\n  "a": 1,\r\n',
      after: "\r\n}\r\n",
    },
    {
      name: "a byte order mark",
      input: '\uFEFF{\n  "a": 1 // café\n}\n',
      before: '\uFEFF{\n  "a": 1, // café\n',
      after: "\n}\n",
    },
  ];
  for (const c of cases) {
    const out = editManaged(c.input, set);
    assert.deepEqual(Object.keys(managedBlock(out).mcpServers), ["m"], c.name);
    assert.ok(out.startsWith(`${c.before}  "service-managed": {`), `${c.name}: ${out}`);
    assert.ok(out.endsWith(c.after), c.name);
    if (c.input.includes("\r\n")) assert.ok(!/[^\r]\n/.test(out), `${c.name}: only CRLF`);
    const back = editManaged(out, [{ op: "remove", id: "m" }]);
    assert.ok(back.startsWith(c.before), c.name);
  }
});

Deno.test("managed config: two service-managed keys are refused, naming both places", () => {
  const text = '{\n  "service-managed": {},\n  "a": 1,\n  "service-managed": {}\n}\n';
  assert.throws(
    () => editManaged(text, [{ op: "set", id: "m", server: server("npx"), record: record("1") }]),
    (e: unknown) =>
      e instanceof McpConfigError && /appears 2 times \(at 2:3, 4:3\); remove all but one/.test(
        e.message,
      ),
  );
});

Deno.test("managed config: a file that is not UTF-8 is refused before anything is written", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "mcp.json");
    const latin1 = new Uint8Array([
      ...new TextEncoder().encode('{\n  "a": 1 // caf'),
      0xe9,
      ...new TextEncoder().encode("\n}\n"),
    ]);
    await Deno.writeFile(path, latin1);
    await assert.rejects(
      updateMcpConfig(path, () => [{ op: "remove", id: "x" }, {
        op: "set",
        id: "m",
        server: server("npx"),
        record: record("1"),
      }]),
      (e: unknown) =>
        e instanceof McpConfigError &&
        e.message.includes(`${path}:2:16: byte 0xe9 is not UTF-8: save the file as UTF-8`),
    );
    assert.deepEqual(await Deno.readFile(path), latin1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
