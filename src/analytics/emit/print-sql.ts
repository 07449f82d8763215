import type { BoundQuery } from "../../stores/activity-store.js";
import type { SqlDialect } from "./dialect.js";
import type { QueryTree } from "./build-select.js";
import type { Expr, OrderItem, Select, Source } from "./tree.js";

const IDENT_RE = /^[a-z_][a-z0-9_]*$/;

/** Identifiers come from the model; this check makes a compiler bug fail loudly instead of emitting text. */
function ident(name: string): string {
  if (!IDENT_RE.test(name))
    throw new Error(`analytics compiler: refusing identifier ${JSON.stringify(name)}`);
  return name;
}

function literal(n: number): string {
  if (!Number.isFinite(n)) throw new Error("analytics compiler: non-finite literal");
  return String(n);
}

const pad = (depth: number) => "  ".repeat(depth);

class Printer {
  constructor(private readonly d: SqlDialect) {}

  expr(e: Expr, depth: number): string {
    const x = (a: Expr) => this.expr(a, depth);
    const group = (a: Expr) => (a.t === "and" || a.t === "or" ? `(${x(a)})` : x(a));
    switch (e.t) {
      case "col":
        return `${ident(e.table)}.${ident(e.column)}`;
      case "ref":
        return ident(e.alias);
      case "param":
        return this.d.param(ident(e.name), e.type);
      case "time_param":
        return this.d.timeParam(ident(e.name));
      case "bool":
        return e.value ? "TRUE" : "FALSE";
      case "cmp":
        return `${x(e.left)} ${e.op} ${x(e.right)}`;
      case "and":
      case "or":
        return e.args.length === 0
          ? e.t === "and"
            ? "TRUE"
            : "FALSE"
          : e.args.map(group).join(` ${e.t.toUpperCase()} `);
      case "not":
        return `NOT ${e.arg.t === "col" ? x(e.arg) : `(${x(e.arg)})`}`;
      case "is_null":
        return `${x(e.arg)} IS ${e.negated ? "NOT " : ""}NULL`;
      case "in_list":
        return `${x(e.arg)} ${e.negated ? "NOT IN" : "IN"} (${e.list.map(x).join(", ")})`;
      case "in_select":
        return `${x(e.arg)} ${e.negated ? "NOT IN" : "IN"} (\n${this.select(e.select, depth + 1)}\n${pad(depth)})`;
      case "nullable":
        return this.d.nullable(x(e.arg));
      case "coalesce":
        return `coalesce(${e.args.map(x).join(", ")})`;
      case "bucket":
        return this.d.bucket(e.unit, x(e.arg));
      case "count":
        return this.d.count(e.where ? x(e.where) : null);
      case "sum":
        return this.d.sum(e.columns.map(x).join(" + "), e.where ? x(e.where) : null);
      case "avg":
        return this.d.avg(x(e.arg));
      case "quantile":
        return this.d.quantile(e.q, x(e.arg));
      case "ratio": {
        const den = x(e.den);
        const div = e.divideBy === 1 ? "" : ` / ${literal(e.divideBy)}`;
        return `CASE WHEN ${den} = 0 THEN NULL ELSE ${this.d.toDouble(x(e.num))} / ${this.d.toDouble(den)}${div} END`;
      }
      case "row_number":
        return `row_number() OVER (${this.window(e.partition, e.order, depth)})`;
      case "count_over":
        return `count(*) OVER (${this.window(e.partition, [], depth)})`;
      case "max_over":
        return `max(${x(e.arg)}) OVER ()`;
    }
  }

  private window(partition: readonly Expr[], order: readonly OrderItem[], depth: number): string {
    const parts: string[] = [];
    if (partition.length > 0)
      parts.push(`PARTITION BY ${partition.map((p) => this.expr(p, depth)).join(", ")}`);
    if (order.length > 0) parts.push(`ORDER BY ${this.order(order, depth)}`);
    return parts.join(" ");
  }

  private order(items: readonly OrderItem[], depth: number): string {
    return items.map((o) => `${this.expr(o.expr, depth)} ${o.direction.toUpperCase()} NULLS LAST`).join(", ");
  }

  private source(s: Source, depth: number): string {
    return s.t === "table"
      ? `${ident(s.name)} AS ${ident(s.alias)}`
      : `(\n${this.select(s.select, depth + 1)}\n${pad(depth)}) AS ${ident(s.alias)}`;
  }

  select(s: Select, depth: number): string {
    const p = pad(depth);
    const lines: string[] = [`${p}SELECT${s.distinct ? " DISTINCT" : ""}`];
    const item = (i: (typeof s.items)[number]) =>
      i.expr.t === "ref" && i.expr.alias === i.alias
        ? ident(i.alias)
        : `${this.expr(i.expr, depth + 1)} AS ${ident(i.alias)}`;
    lines.push(s.items.map((i) => `${p}  ${item(i)}`).join(",\n"));
    lines.push(`${p}FROM ${this.source(s.from, depth)}`);
    for (const j of s.joins ?? []) {
      lines.push(
        `${p}${j.kind === "left" ? "LEFT" : "INNER"} JOIN ${this.source(j.source, depth)} ON ${this.expr(j.on, depth)}`,
      );
    }
    if (s.where) {
      const conj = s.where.t === "and" ? s.where.args : [s.where];
      if (conj.length > 0) {
        const parts = conj.map((c) =>
          c.t === "or" ? `(${this.expr(c, depth + 1)})` : this.expr(c, depth + 1),
        );
        lines.push(`${p}WHERE ${parts.join(`\n${p}  AND `)}`);
      }
    }
    if (s.groupBy && s.groupBy.length > 0)
      lines.push(`${p}GROUP BY ${s.groupBy.map((g) => this.expr(g, depth)).join(", ")}`);
    if (s.orderBy && s.orderBy.length > 0) lines.push(`${p}ORDER BY ${this.order(s.orderBy, depth)}`);
    if (s.limit) lines.push(`${p}LIMIT ${this.expr(s.limit, depth)}`);
    return lines.join("\n");
  }
}

/** Prints a query tree in a dialect: SQL text with placeholders, plus the bound values. */
export function printSql(tree: QueryTree, dialect: SqlDialect): BoundQuery {
  const sql = new Printer(dialect).select(tree.select, 0);
  return { sql, params: { ...tree.params } };
}
