import { AppError } from '../domain/errors.js';
import { type IdKind, isIdOf } from '../domain/ids.js';

/** One page of a list that is newest first by id, with the cursor for the next (older) page. */
export type IdPage<T> = {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
};

/**
 * Reads one page of records ordered by id, newest first: `cursor` (the `next_cursor` of the page
 * before) must be an id of `kind`; one more row than the page is read to know whether another
 * page follows. `describe` turns the page's records into what is shown.
 */
export async function pageByIdDescending<Row extends { id: string }, Shown>(
  kind: IdKind,
  request: { limit: number; cursor?: string | undefined },
  read: (query: { limit: number; before?: string }) => Promise<Row[]>,
  describe: (rows: Row[]) => Shown[] | Promise<Shown[]>,
): Promise<IdPage<Shown>> {
  const { limit, cursor } = request;
  if (cursor !== undefined && !isIdOf(kind, cursor))
    throw new AppError('validation_error', 'cursor must be a next_cursor value from a previous page');
  const rows = await read({ limit: limit + 1, ...(cursor ? { before: cursor } : {}) });
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return {
    data: await describe(page),
    has_more: hasMore,
    next_cursor: hasMore ? (page.at(-1)?.id ?? null) : null,
  };
}
