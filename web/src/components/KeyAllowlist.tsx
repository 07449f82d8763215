import type { Key } from "../api/types.ts";

/**
 * A list of API keys to check, for a setting that applies only to some of a workspace's keys
 * (a provider key's allowed_api_key_hashes, a destination's api_key_hashes). None checked means
 * every key.
 */
export function KeyAllowlist(props: {
  legend: string;
  keys: Key[];
  /** Only the keys of this workspace are offered. */
  workspaceId: string | undefined;
  allowed: string[];
  onChange: (hashes: string[]) => void;
}) {
  const { allowed, onChange } = props;
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      <div class="checks">
        {props.keys
          .filter((k) => k.workspace_id === props.workspaceId)
          .map((k) => (
            <label key={k.hash}>
              <input
                type="checkbox"
                checked={allowed.includes(k.hash)}
                onChange={(e) =>
                  onChange(
                    e.currentTarget.checked ? [...allowed, k.hash] : allowed.filter((h) => h !== k.hash),
                  )
                }
              />{" "}
              {k.name}
            </label>
          ))}
      </div>
    </fieldset>
  );
}
