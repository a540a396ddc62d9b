import { sqliteCampaignFiguresSql } from '../campaignFiguresSql.js';

/**
 * Issue 37's second SQLite schema change (live contact edits, the results export, the figures),
 * kept apart from migrations.ts so that parallel work appends without conflicts.
 */
export const sqliteCampaignResultsMigrations: readonly { version: number; name: string; sql: string }[] = [
  { version: 371, name: 'campaign figures and removed contacts', sql: sqliteCampaignFiguresSql() },
];
