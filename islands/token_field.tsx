/** The bearer token field: kept in sessionStorage, so it lasts for this tab only. */
import { useEffect, useState } from "preact/hooks";

/** sessionStorage key of the token. */
export const TOKEN_KEY = "service.review-board.token";

/** Props of {@link TokenField}. */
export interface TokenFieldProps {
  token: string;
  onChange: (token: string) => void;
}

/** A small form: paste a token and press Use; Forget clears it. */
export function TokenField({ token, onChange }: TokenFieldProps) {
  const [draft, setDraft] = useState(token);
  useEffect(() => setDraft(token), [token]);
  const save = (value: string) => {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
    onChange(value);
  };
  return (
    <form
      class="actions"
      onSubmit={(e) => {
        e.preventDefault();
        save(draft.trim());
      }}
    >
      <label>
        Bearer token {token ? "(in use)" : "(none: fine on a loopback server)"}
        <input
          type="password"
          name="token"
          autocomplete="off"
          value={draft}
          onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
        />
      </label>
      <button type="submit">Use token</button>
      {token && <button type="button" onClick={() => save("")}>Forget</button>}
    </form>
  );
}
