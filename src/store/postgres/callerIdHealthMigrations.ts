import { postgresCallerIdHealthSql } from '../callerIdHealthSql.js';

/** Issue 37's caller-ID health for PostgreSQL, kept apart from migrations.ts so that parallel work appends without conflicts. */
export const postgresCallerIdHealthMigrations: readonly { version: number; name: string; sql: string }[] = [
  { version: 375, name: 'caller-ID health windows and rests', sql: postgresCallerIdHealthSql() },
];
