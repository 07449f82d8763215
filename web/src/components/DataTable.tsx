import { metricValue, text } from "../lib/format.ts";

export interface Column {
  key: string;
  label: string;
  /** display_format of a metric (currency, percent, …); absent = shown as is. */
  format?: string;
  numeric?: boolean;
}

/** A labelled table of rows; numeric cells carry their raw value in `data-value` for tests and copy. */
export function DataTable({
  caption,
  columns,
  rows,
}: {
  caption: string;
  columns: Column[];
  rows: Record<string, unknown>[];
}) {
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={caption}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c.key} class={c.numeric ? "num" : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length}>No rows.</td>
            </tr>
          ) : (
            rows.map((r, i) => (
              <tr key={i}>
                {columns.map((c) => {
                  const v = r[c.key];
                  return (
                    <td
                      key={c.key}
                      class={c.numeric ? "num" : undefined}
                      data-col={c.key}
                      data-value={text(v)}
                    >
                      {c.numeric ? metricValue(c.format, v) : v === null || v === undefined ? "–" : text(v)}
                    </td>
                  );
                })}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
