import type { AccountRecord, ApiKeyRecord, CallRecord } from '../../domain/records.js';
import type { AccountRow, ApiKeyRow, CallRow } from '../kysely/schema.js';
import { accountFromRow, apiKeyFromRow, type ColumnCodec, callFromRow } from '../recordsFromRows.js';

export type { AccountRow, ApiKeyRow, CallRow };

/** SQLite's column forms: integers for booleans, JSON and timestamps as text. */
export const sqliteColumns: ColumnCodec = {
  bool: (value) => value === 1,
  json: <T>(value: unknown) =>
    (value === null || value === undefined ? null : JSON.parse(value as string)) as T,
  time: (value) => value as string,
  timeOrNull: (value) => (value ?? null) as string | null,
};

export const toAccount = (row: AccountRow): AccountRecord => accountFromRow(row, sqliteColumns);
export const toApiKey = (row: ApiKeyRow): ApiKeyRecord => apiKeyFromRow(row, sqliteColumns);
export const toCall = (row: CallRow): CallRecord => callFromRow(row, sqliteColumns);
