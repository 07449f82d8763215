import type { ComponentChildren, InputHTMLAttributes } from "preact";
import { useId, useRef, useState } from "preact/hooks";
import { errorText } from "../api/client.ts";
import type { Workspace } from "../api/types.ts";
import { ErrorNote } from "./ui.tsx";

/**
 * The form pieces the Keys, Destinations and Workspaces pages share: labelled fields (the label
 * wraps the control; a hint and the form's error are tied to it with aria-describedby), a submit
 * hook that shows the API's error inline and marks the field it names, and a delete button that
 * asks first in a modal dialog.
 */

/** The state of a form that sends one API call: its error, the field the error names, busy. */
export interface FormState {
  error: string | null;
  /** The field the API's 400 names (`expires_at: must be in the future` → "expires_at"). */
  errorField: string | null;
  errorId: string;
  busy: boolean;
  setError: (e: string | null) => void;
  /** An onSubmit handler: runs `send`, then `done` on success or shows the error. */
  submit: (send: () => Promise<unknown>, done?: () => void) => (e: Event) => void;
}

export function useForm(): FormState {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const errorId = useId();
  const submit = (send: () => Promise<unknown>, done?: () => void) => (e: Event) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    send().then(
      () => {
        setBusy(false);
        done?.();
      },
      (err: unknown) => {
        setBusy(false);
        setError(errorText(err));
      },
    );
  };
  const errorField = error ? (/^([\w.[\]]+): /.exec(error)?.[1] ?? null) : null;
  return { error, errorField, errorId, busy, setError, submit };
}

/** The form's error line (role="alert"), with the id the invalid field points to. */
export const FormError = ({ form }: { form: FormState }) => (
  <ErrorNote error={form.error} id={form.errorId} />
);

interface FieldProps {
  label: ComponentChildren;
  /** The API field this control sets: marked invalid when the API's error names it. */
  field?: string;
  form?: FormState;
  hint?: ComponentChildren;
  id?: string;
  class?: string;
}

/**
 * Whether the form's error names this field: exactly, or one of its items (`allowed_models[2]`
 * for the control of `allowed_models`).
 */
export function namesField(form: FormState | undefined, field: string | undefined): boolean {
  const named = form?.errorField;
  if (!field || !named) return false;
  return named === field || named.startsWith(`${field}[`);
}

/** aria attributes of a control: its hint, and the form's error when the error names its field. */
function useDescribed({ field, form, hint, id }: FieldProps) {
  const own = useId();
  const controlId = id ?? own;
  const hintId = `${controlId}-hint`;
  const invalid = namesField(form, field);
  const describedBy = [hint ? hintId : "", invalid ? (form?.errorId ?? "") : ""].filter(Boolean).join(" ");
  return {
    controlId,
    hintId,
    aria: {
      id: controlId,
      "aria-describedby": describedBy || undefined,
      "aria-invalid": invalid ? true : undefined,
    },
  };
}

const Hint = ({ id, hint }: { id: string; hint?: ComponentChildren }) =>
  hint ? (
    <span id={id} class="help">
      {hint}
    </span>
  ) : null;

type InputType = "text" | "number" | "url" | "password" | "datetime-local";
/** Preact types each input type apart (a union); spread one of these to set the type. */
const TYPED: Record<InputType, InputHTMLAttributes<HTMLInputElement>> = {
  text: { type: "text" },
  number: { type: "number" },
  url: { type: "url" },
  password: { type: "password" },
  "datetime-local": { type: "datetime-local" },
};

/** A labelled text, number, URL, password or date-time input. */
export function InputField(
  props: FieldProps & {
    value: string;
    onValue: (v: string) => void;
    type?: InputType;
    required?: boolean;
    placeholder?: string;
    min?: number;
    max?: number;
    step?: string;
    name?: string;
  },
) {
  const { controlId, hintId, aria } = useDescribed(props);
  return (
    <label for={controlId} class={props.class}>
      {props.label}
      <input
        {...aria}
        {...TYPED[props.type ?? "text"]}
        name={props.name}
        value={props.value}
        required={props.required}
        placeholder={props.placeholder}
        min={props.min}
        max={props.max}
        step={props.step}
        autoComplete="off"
        onInput={(e) => props.onValue(e.currentTarget.value)}
      />
      <Hint id={hintId} hint={props.hint} />
    </label>
  );
}

/** A labelled select; options as [value, text] pairs (or plain values). */
export function SelectField(
  props: FieldProps & {
    value: string;
    onValue: (v: string) => void;
    options: readonly (string | readonly [string, string])[];
    disabled?: boolean;
  },
) {
  const { controlId, hintId, aria } = useDescribed(props);
  return (
    <label for={controlId} class={props.class}>
      {props.label}
      <select
        {...aria}
        value={props.value}
        disabled={props.disabled}
        onChange={(e) => props.onValue(e.currentTarget.value)}
      >
        {props.options.map((o) => {
          const [value, text] = typeof o === "string" ? [o, o] : o;
          return (
            <option key={value} value={value}>
              {text}
            </option>
          );
        })}
      </select>
      <Hint id={hintId} hint={props.hint} />
    </label>
  );
}

/** A labelled checkbox (label text after the box). */
export function CheckField(
  props: FieldProps & { checked: boolean; onValue: (v: boolean) => void; disabled?: boolean },
) {
  const { controlId, hintId, aria } = useDescribed(props);
  return (
    <label for={controlId} class="check">
      <input
        {...aria}
        type="checkbox"
        checked={props.checked}
        disabled={props.disabled}
        onChange={(e) => props.onValue(e.currentTarget.checked)}
      />{" "}
      {props.label}
      <Hint id={hintId} hint={props.hint} />
    </label>
  );
}

/** The workspace of a new record; empty = the organization's default workspace. */
export function WorkspaceField({
  workspaces,
  value,
  onValue,
  form,
}: {
  workspaces: Workspace[];
  value: string;
  onValue: (v: string) => void;
  form?: FormState;
}) {
  return (
    <SelectField
      label="Workspace"
      field="workspace_id"
      form={form}
      value={value}
      onValue={onValue}
      options={[["", "(default workspace)"], ...workspaces.map((w) => [w.id, w.name] as const)]}
    />
  );
}

/**
 * A button that asks before it acts: a modal dialog (Escape or Cancel closes it, focus starts on
 * Cancel and returns to the button) with the question and a confirming button.
 */
export function ConfirmButton({
  label,
  what,
  question,
  confirmLabel,
  onConfirm,
}: {
  /** The button's text ("Delete"). */
  label: string;
  /** The record's name, read by screen readers after the label ("Delete nightly-batch"). */
  what: string;
  question: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const id = useId();
  return (
    <>
      <button type="button" class="danger" onClick={() => dialog.current?.showModal()}>
        {label}
        <span class="sr-only"> {what}</span>
      </button>
      <dialog ref={dialog} class="confirm" aria-labelledby={`${id}-q`}>
        <form method="dialog">
          <p id={`${id}-q`}>{question}</p>
          <div class="row">
            <button type="submit" class="danger" value="confirm" onClick={onConfirm}>
              {confirmLabel}
            </button>
            <button type="submit" class="secondary" value="cancel" autofocus>
              Cancel
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** An enable/disable toggle for a record with a name. */
export function ToggleButton({
  enabled,
  what,
  onToggle,
}: {
  enabled: boolean;
  what: string;
  onToggle: (enable: boolean) => void;
}) {
  return (
    <button type="button" class="secondary" onClick={() => onToggle(!enabled)}>
      {enabled ? "Disable" : "Enable"}
      <span class="sr-only"> {what}</span>
    </button>
  );
}
