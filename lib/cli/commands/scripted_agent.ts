/** `service scripted-agent <prompt>`: the demo's and the tests' scripted agent program. */
import type { Command } from "../command.ts";
import { runScriptedAgent } from "../../../agents/scripted_agent.ts";

/** `service scripted-agent`: a scripted agent program speaking the agent protocol (demo, tests). */
export const scriptedAgentCommand: Command = {
  name: "scripted-agent",
  summary: "a scripted agent program speaking the agent protocol (demo, tests)",
  help: `Usage: service scripted-agent <prompt>

Runs the script found in the prompt (a \`\`\`agent-script block, one JSON array per line) in the
current directory and reports completion to $SERVICE_SERVER_URL, exactly as a real agent CLI
would. Used by \`service demo\` with the generic adapter. See agents/scripted_agent.ts.`,
  async run(args) {
    await runScriptedAgent(args.at(-1) ?? "");
    return 0;
  },
};
