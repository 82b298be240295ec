/** Request-body schemas of the task API and their translation into 400 errors. */
import { z } from "zod";
import { InvalidInputError } from "../errors.ts";
import { TaskInputSchema } from "./task.ts";
import { formatPath } from "../config/errors.ts";

const BatchSchema = z.strictObject({ tasks: z.array(TaskInputSchema).min(1).max(50_000) });

/**
 * Parse a `POST /tasks` body: one task, or `{"tasks":[…]}` when it has a `tasks` key. Choosing
 * the form first makes an error name the field the client meant (`tasks[2].priority: expected
 * int, received string`), not "tasks: expected array" for a single task with a bad title.
 */
export function parseCreateBody(
  body: unknown,
): z.output<typeof BatchSchema> | z.output<typeof TaskInputSchema> {
  const batch = body !== null && typeof body === "object" && !Array.isArray(body) &&
    "tasks" in body;
  return batch ? parseBody(BatchSchema, body) : parseBody(TaskInputSchema, body);
}

/** Body of claim and next. */
export const ClaimBodySchema = z.looseObject({
  session_id: z.string().min(1).max(200).optional(),
});

/** Body of heartbeat (optional): the claimant's session, refused (409) once another holds it. */
export const HeartbeatBodySchema = z.looseObject({
  session_id: z.string().min(1).max(200).optional(),
});

/** Body of complete. */
export const CompleteBodySchema = z.looseObject({
  summary: z.string().max(100_000).optional(),
  session_id: z.string().min(1).max(200).optional(),
  operator: z.boolean().optional(),
  tests_run: z.boolean().optional(),
  quality_gates_run: z.boolean().optional(),
  completion_signals_checked: z.boolean().optional(),
});

/** Body of fail and cancel. */
export const ReasonBodySchema = z.looseObject({
  reason: z.string().max(100_000).optional(),
  session_id: z.string().min(1).max(200).optional(),
  summary: z.string().max(100_000).optional(),
  operator: z.boolean().optional(),
});

/** Parse `body` with `schema` or throw 400 naming the first bad field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  let detail = issue.message;
  if (issue.code === "invalid_union" && "errors" in issue) {
    const inner = (issue.errors as z.core.$ZodIssue[][]).map((e) => e[0]).filter(Boolean);
    const best = inner.sort((a, b) => b.path.length - a.path.length)[0];
    if (best) {
      const where = formatPath([...issue.path, ...best.path]);
      throw new InvalidInputError("invalid_body", `${where || "body"}: ${plain(best.message)}`);
    }
  }
  if (issue.code === "unrecognized_keys") detail = `unknown field(s) ${issue.keys.join(", ")}`;
  throw new InvalidInputError(
    "invalid_body",
    `${formatPath(issue.path) || "body"}: ${plain(detail)}`,
  );
}

/** zod's "Invalid input: expected string, received number" as "expected string, received number". */
function plain(message: string): string {
  return message.replace(/^Invalid input: /, "");
}
