/** Every command of the `service` CLI, in help order. */
import type { Command } from "../command.ts";
import { serveCommand } from "./serve.ts";
import { auditVerifyCommand } from "./audit_verify.ts";
import { demoCommand } from "./demo.ts";
import { guiServeCommand } from "./gui_serve.ts";

export const COMMANDS: Command[] = [demoCommand, serveCommand, guiServeCommand, auditVerifyCommand];
