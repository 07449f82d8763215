import { useId, useState } from "preact/hooks";
import { namesField, type FormState } from "./form.tsx";

/**
 * A list of ids picked from a long list (a guardrail's allowed models, its ignored providers):
 * the chosen ids, each with a Remove button, and a text input suggesting the choices (a
 * `<datalist>` the page renders once, named by `listId`). An id typed that is not among the
 * choices is added as typed: the API names it when the form is saved (`allowed_models[1]: …`),
 * and the input is marked invalid.
 */
export function ListPicker(props: {
  legend: string;
  /** What "none chosen" means ("every model"). */
  emptyMeans: string;
  /** The id of the page's <datalist> of choices. */
  listId: string;
  /** The label of the text input ("Add a model"). */
  addLabel: string;
  /** Names for ids (a model's name), shown beside the id when known. */
  names?: ReadonlyMap<string, string>;
  value: string[];
  onChange: (v: string[]) => void;
  /** The API field: its errors (`allowed_models[2]: …`) mark the input. */
  field: string;
  form: FormState;
}) {
  const { value, onChange, form } = props;
  const [draft, setDraft] = useState("");
  const id = useId();
  const invalid = namesField(form, props.field);
  const add = () => {
    const v = draft.trim();
    if (v && !value.includes(v)) onChange([...value, v]);
    setDraft("");
  };
  return (
    <fieldset class="picker">
      <legend>{props.legend}</legend>
      {value.length === 0 ? (
        <p class="muted">None: {props.emptyMeans}.</p>
      ) : (
        <ul class="chips" aria-label={`${props.legend}: chosen`}>
          {value.map((v) => {
            const name = props.names?.get(v);
            return (
              <li key={v}>
                <code>{v}</code>
                {name && name !== v && <span class="muted"> {name}</span>}{" "}
                <button
                  type="button"
                  class="secondary small"
                  onClick={() => onChange(value.filter((x) => x !== v))}
                >
                  Remove
                  <span class="sr-only">
                    {" "}
                    {v} from {props.legend}
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <div class="row">
        <label for={id}>
          {props.addLabel}
          <input
            id={id}
            list={props.listId}
            autoComplete="off"
            value={draft}
            aria-invalid={invalid ? true : undefined}
            aria-describedby={invalid ? form.errorId : undefined}
            onInput={(e) => setDraft(e.currentTarget.value)}
            onKeyDown={(e) => {
              // Enter adds the id rather than submitting the whole form.
              if (e.key === "Enter") {
                e.preventDefault();
                add();
              }
            }}
          />
        </label>
        <button type="button" class="secondary" onClick={add}>
          Add<span class="sr-only"> to {props.legend}</span>
        </button>
      </div>
    </fieldset>
  );
}
