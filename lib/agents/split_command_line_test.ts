import assert from "node:assert/strict";
import { CommandLineError, splitCommandLine } from "./split_command_line.ts";

const CASES: [string, string, string[]][] = [
  ["plain words", "my-agent run --fast", ["my-agent", "run", "--fast"]],
  ["runs of white space", "  a \t b\n c  ", ["a", "b", "c"]],
  ["empty string", "", []],
  ["single quotes keep spaces", "agent 'hello world'", ["agent", "hello world"]],
  ["single quotes keep backslashes and $", "agent '\\n $HOME'", ["agent", "\\n $HOME"]],
  ["double quotes keep spaces", 'agent "a b"', ["agent", "a b"]],
  ['double quotes honour \\" and \\\\', 'agent "say \\"hi\\" \\\\"', ["agent", 'say "hi" \\']],
  ["double quotes keep other backslashes", 'agent "a\\nb"', ["agent", "a\\nb"]],
  ["adjacent quoted parts join", `a"b c"'d e'f`, ["ab cd ef"]],
  ["empty quotes make an empty word", "agent '' \"\"", ["agent", "", ""]],
  ["backslash escapes a space", "agent a\\ b", ["agent", "a b"]],
  ["no variable expansion", "agent $HOME ~ *.ts", ["agent", "$HOME", "~", "*.ts"]],
  ["flag with = value in quotes", "agent --model='gpt 5'", ["agent", "--model=gpt 5"]],
  ["backslash-newline continues", "agent \\\n--x", ["agent", "--x"]],
];

for (const [name, input, expected] of CASES) {
  Deno.test(`splitCommandLine() ${name}`, () => {
    assert.deepEqual(splitCommandLine(input), expected);
  });
}

for (const bad of ["agent 'open", 'agent "open', "agent \\"]) {
  Deno.test(`splitCommandLine() rejects ${JSON.stringify(bad)}`, () => {
    assert.throws(() => splitCommandLine(bad), CommandLineError);
  });
}
