import { postgresCampaignFiguresSql } from '../campaignFiguresSql.js';

/**
 * Issue 37's second PostgreSQL schema change (live contact edits, the results export, the
 * figures), kept apart from migrations.ts so that parallel work appends without conflicts.
 */
export const postgresCampaignResultsMigrations: readonly { version: number; name: string; sql: string }[] = [
  { version: 371, name: 'campaign figures and removed contacts', sql: postgresCampaignFiguresSql() },
];
