import type { AccountRecord, ApiKeyRecord, CallRecord } from '../../domain/records.js';
import type { AccountRow, ApiKeyRow, CallRow } from '../kysely/schema.js';
import { accountFromRow, apiKeyFromRow, type ColumnCodec, callFromRow } from '../recordsFromRows.js';
import { iso, isoOrNull } from './database.js';

export type { AccountRow, ApiKeyRow, CallRow };

/** `pg`'s column forms: booleans, parsed jsonb, timestamptz as Date. */
export const postgresColumns: ColumnCodec = {
  bool: (value) => value === true,
  json: <T>(value: unknown) => (value ?? null) as T,
  time: (value) => iso(value as Date | string),
  timeOrNull: (value) => isoOrNull((value ?? null) as Date | string | null),
};

export const toAccount = (row: AccountRow): AccountRecord => accountFromRow(row, postgresColumns);
export const toApiKey = (row: ApiKeyRow): ApiKeyRecord => apiKeyFromRow(row, postgresColumns);
export const toCall = (row: CallRow): CallRecord => callFromRow(row, postgresColumns);
