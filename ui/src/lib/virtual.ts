/**
 * The arithmetic of a virtualised list: which rows a scrolled viewport shows, and a bounded
 * cache of fetched pages. Only visible rows are rendered and only their pages fetched, so a
 * dataset of 100,000 items scrolls as smoothly as one of 100.
 */

export interface RowRange {
  /** First row rendered (inclusive). */
  start: number;
  /** One past the last row rendered. */
  end: number;
}

/** The rows to render for a viewport: those in view plus `overscan` on each side. */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  total: number,
  overscan = 6,
): RowRange {
  if (total <= 0 || rowHeight <= 0) return { start: 0, end: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const inView = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, Math.min(first - overscan, total - 1));
  const end = Math.min(total, first + inView + overscan);
  return { start, end: Math.max(start, end) };
}

/** The pages (of `pageSize` rows) that cover rows `[start, end)`. */
export function pagesOf(range: RowRange, pageSize: number): number[] {
  if (range.end <= range.start) return [];
  const first = Math.floor(range.start / pageSize);
  const last = Math.floor((range.end - 1) / pageSize);
  const pages: number[] = [];
  for (let p = first; p <= last; p++) pages.push(p);
  return pages;
}

/**
 * Fetched pages by number, least recently used dropped past `maxPages`: items can be long
 * (two answers each), and scrolling through 100,000 of them must not keep them all.
 */
export class PageCache<T> {
  private pages = new Map<number, T[]>();

  constructor(
    readonly pageSize: number,
    readonly maxPages = 40,
  ) {}

  /** The row at `idx`, if its page is here. */
  row(idx: number): T | undefined {
    const page = this.pages.get(Math.floor(idx / this.pageSize));
    return page?.[idx % this.pageSize];
  }

  has(page: number): boolean {
    return this.pages.has(page);
  }

  /** Marks `page` as just used, so that it is dropped last. */
  touch(page: number): void {
    const rows = this.pages.get(page);
    if (rows) {
      this.pages.delete(page);
      this.pages.set(page, rows);
    }
  }

  set(page: number, rows: T[]): void {
    this.pages.delete(page);
    this.pages.set(page, rows);
    while (this.pages.size > this.maxPages) {
      const oldest = this.pages.keys().next().value as number;
      this.pages.delete(oldest);
    }
  }

  /** The pages of `range` not yet here. */
  missing(range: RowRange): number[] {
    return pagesOf(range, this.pageSize).filter((p) => !this.pages.has(p));
  }

  get size(): number {
    return this.pages.size;
  }
}
