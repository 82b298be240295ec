/** Secrets from `NAME` or the file `NAME_FILE` names, read again when the file changes. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { secretEnv, secretFileProblem } from "./secret_env.ts";

/** Replace `path` as a Kubernetes Secret update does: a new file renamed over the old. */
async function rotate(path: string, text: string): Promise<void> {
  await Deno.writeTextFile(`${path}.new`, text);
  await Deno.rename(`${path}.new`, path);
}

Deno.test("secretEnv() takes the variable, else the file it names, trimmed and re-read on change", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "token");
    const vars: Record<string, string> = { X_FILE: file };
    const env = (n: string) => vars[n];
    assert.equal(secretEnv("X", env), undefined, "no file yet");
    await rotate(file, "first\n");
    assert.equal(secretEnv("X", env), "first");
    await rotate(file, "second-longer\n");
    assert.equal(secretEnv("X", env), "second-longer", "a rotated Secret is taken");
    await rotate(file, "third\n");
    assert.equal(secretEnv("X", env), "third", "same size as before, new file");
    await rotate(file, "\n");
    assert.equal(secretEnv("X", env), undefined, "an empty file is no secret");
    vars.X = "from-env";
    assert.equal(secretEnv("X", env), "from-env", "the variable wins");
    delete vars.X;
    await Deno.remove(file);
    assert.equal(secretEnv("X", env), undefined, "a removed file is no secret");
    assert.match(secretFileProblem(file)!, /cannot read .*token/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
