/** The page size the dashboard asks the API's offset-paged lists for (their largest). */
export const PAGE = 100;

/**
 * Every item of a list that answers `{data, total_count}` and pages by `offset`: read page by page
 * until a short page, `total_count` items, or 100,000 items (a bound on a runaway loop).
 */
export async function everyPage<T>(
  page: (offset: number) => Promise<{ data: T[]; total_count: number }>,
): Promise<T[]> {
  const all: T[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const r = await page(offset);
    all.push(...r.data);
    if (r.data.length < PAGE || all.length >= r.total_count || offset >= 100_000) return all;
  }
}
