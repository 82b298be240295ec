/** Every command of the `service` CLI, in help order. */
import type { Command } from "../command.ts";
import { serveCommand } from "./serve.ts";
import { auditVerifyCommand } from "./audit_verify.ts";
import { demoCommand } from "./demo.ts";
import { guiServeCommand } from "./gui_serve.ts";
import { runCommand } from "./run.ts";
import { stopCommand } from "./stop.ts";
import { scriptedAgentCommand } from "./scripted_agent.ts";
import { statusCommand } from "./status.ts";
import { psCommand } from "./ps.ts";
import { backlogClaimCommand } from "./backlog_claim.ts";
import { doctorCommand } from "./doctor.ts";
import { debugCommand } from "./debug.ts";
import { integrationsListCommand } from "./integrations_list.ts";
import { previewCommand } from "./preview.ts";
import { agentsCommand } from "./agents.ts";
import { costCommand } from "./cost.ts";
import { cancelCommand } from "./cancel.ts";
import { retryCommand } from "./retry.ts";
import { runsCommand } from "./runs.ts";
import { mcpCatalogCommand } from "./mcp_catalog.ts";
import { verificationResetCommand } from "./verification_reset.ts";
import { workerCommand } from "./worker.ts";
import { workersCommand } from "./workers.ts";

/** The commands, in the order `service --help` lists them. */
export const COMMANDS: Command[] = [
  demoCommand,
  runCommand,
  stopCommand,
  runsCommand,
  cancelCommand,
  retryCommand,
  serveCommand,
  guiServeCommand,
  statusCommand,
  psCommand,
  agentsCommand,
  costCommand,
  backlogClaimCommand,
  workerCommand,
  workersCommand,
  doctorCommand,
  debugCommand,
  integrationsListCommand,
  previewCommand,
  auditVerifyCommand,
  mcpCatalogCommand,
  verificationResetCommand,
  scriptedAgentCommand,
];
