/**
 * What an operator starts from the board besides reviews (issue 35): a new task (title, role,
 * goal, the agent that runs it) and a follow-up to a task's agent. Each is one POST whose answer
 * — the server's words on where the task runs or how the agent gets the follow-up, and the audit
 * entry's hash — is shown as it came; the island keeps nothing else.
 */
import { showBidiControls } from "../lib/dashboard/bidi_controls.ts";
import { useState } from "preact/hooks";
import { ApiError, apiFetch } from "../lib/dashboard/api.ts";
import { MAX_FOLLOW_UP } from "../lib/dashboard/operator_limits.ts";

/** Shared state of one form: busy, the answer's words, the error. */
function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  async function submit(call: () => Promise<string>) {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setDone(await call());
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, "error", String(e)));
    } finally {
      setBusy(false);
    }
  }
  return { busy, done, error, submit };
}

/** The answer or the error of a form. */
function Outcome({ done, error }: { done: string | null; error: ApiError | null }) {
  return (
    <>
      {error && <p class="error" role="alert" data-operator-error={error.status}>{error.words}</p>}
      {done && <p class="receipt" data-operator-done>{done}</p>}
    </>
  );
}

/** Props of {@link NewTaskForm}. */
export interface NewTaskFormProps {
  token: string;
}

/** A collapsed "New task" form: title, role, goal, and optionally the agent (adapter). */
export function NewTaskForm({ token }: NewTaskFormProps) {
  const [title, setTitle] = useState("");
  const [role, setRole] = useState("");
  const [goal, setGoal] = useState("");
  const [cli, setCli] = useState("");
  const [priority, setPriority] = useState("");
  const { busy, done, error, submit } = useSubmit();
  const create = () =>
    submit(async () => {
      const answer = await apiFetch<
        {
          task: { id: string; status: string };
          principal: string;
          audit_event_hash: string;
          runs_it: string;
        }
      >("/dashboard/review-board/tasks", {
        method: "POST",
        token,
        body: {
          title: title.trim(),
          role: role.trim(),
          ...(goal.trim() ? { goal: goal.trim() } : {}),
          ...(cli.trim() ? { cli: cli.trim() } : {}),
          ...(priority.trim() ? { priority: Number(priority) } : {}),
        },
      });
      setTitle("");
      setGoal("");
      return `Created ${answer.task.id} (${answer.task.status}) by ${answer.principal}: ` +
        `${answer.runs_it}. Audit entry ${answer.audit_event_hash}`;
    });
  return (
    <details class="new-task">
      <summary>New task</summary>
      <div class="actions">
        <label>
          Title
          <input
            name="title"
            maxLength={500}
            value={title}
            onInput={(e) => setTitle((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Role
          <input
            name="role"
            value={role}
            placeholder="backend"
            onInput={(e) => setRole((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Agent (optional)
          <input
            name="cli"
            value={cli}
            placeholder="its role's"
            onInput={(e) => setCli((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Priority (optional)
          <input
            name="priority"
            type="number"
            min={0}
            max={1000}
            value={priority}
            placeholder="0-1000"
            onInput={(e) => setPriority((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Goal
          <textarea
            name="goal"
            value={goal}
            onInput={(e) => setGoal((e.target as HTMLTextAreaElement).value)}
          />
        </label>
        <button
          type="button"
          data-operator="create-task"
          disabled={busy || !title.trim() || !role.trim()}
          onClick={create}
        >
          Create task
        </button>
      </div>
      <Outcome done={done} error={error} />
    </details>
  );
}

/** Props of {@link FollowUpForm}. */
export interface FollowUpFormProps {
  taskId: string;
  token: string;
  /** Follow-ups already sent (from the run's journal), oldest first. */
  sent?: readonly { principal?: string; text: string }[];
  /** The task runs now: only its running agent can read a follow-up. */
  running: boolean;
}

/** The follow-ups sent to a task's agent, and a field to send another. */
export function FollowUpForm({ taskId, token, sent = [], running }: FollowUpFormProps) {
  const [text, setText] = useState("");
  const { busy, done, error, submit } = useSubmit();
  const send = () =>
    submit(async () => {
      const answer = await apiFetch<
        { delivery: string; audit_event_hash: string; follow_up: { seq: number } }
      >(
        `/dashboard/review-board/tasks/${encodeURIComponent(taskId)}/follow-up`,
        { method: "POST", token, body: { text: text.trim() } },
      );
      setText("");
      return `Follow-up ${answer.follow_up.seq} ${answer.delivery}. Audit entry ` +
        answer.audit_event_hash;
    });
  return (
    <div>
      {sent.length > 0 && (
        <ol class="follow-ups">
          {sent.map((f, i) => (
            <li key={i} data-follow-up>
              {showBidiControls(f.text)} <span class="muted">— {f.principal ?? "an operator"}</span>
            </li>
          ))}
        </ol>
      )}
      {!running && (
        <p class="muted" data-follow-up-off>
          Follow-ups go to a running task's agent; this task is not running.
        </p>
      )}
      <div class="actions">
        <label>
          Follow-up to its agent
          <textarea
            name="follow-up"
            maxLength={MAX_FOLLOW_UP}
            disabled={!running}
            value={text}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          />
        </label>
        <button
          type="button"
          data-operator="follow-up"
          disabled={busy || !running || !text.trim()}
          onClick={send}
        >
          Send
        </button>
      </div>
      <Outcome done={done} error={error} />
    </div>
  );
}
